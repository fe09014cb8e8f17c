// Conversion between RankDump and its JSON document (schema in README.md).
//
// ToJson never throws for any RankDump. FromJson throws DumpFormatError, whose message
// names the offending field, for documents that are JSON but not a valid dump of a
// supported version; the reader turns it into a one-line error.
#ifndef NCCLWATCH_CORE_DUMP_DUMP_JSON_H_
#define NCCLWATCH_CORE_DUMP_DUMP_JSON_H_

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/dump/dump.h"

namespace ncclwatch::dump {

class DumpFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

nlohmann::json ToJson(const RankDump& dump);
RankDump FromJson(const nlohmann::json& doc);

// The dump's hex fields ("comm", "stream", "pc", ...) are written with format::FormatHex and
// read with format::ParseHex (core/format/hex.h): "0x" and 1 to 16 hex digits, nothing else.

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_DUMP_JSON_H_
