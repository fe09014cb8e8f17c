// Conversion between RankDump and its JSON document (schema in README.md).
//
// ToJson never throws for any RankDump. ParseDump never throws: text that is not JSON, or
// JSON that is not a valid dump of a supported version, is an error of one line naming the
// problem ("not valid JSON (truncated or corrupt) at byte 812", "field 'comms[3].rank' must
// be within [0, nranks)"); dump_reader.h prefixes it with the file's path.
//
// This file is the schema boundary: the model's kinds (verdict kind, sync target) become
// text here and only here on the way out, and text becomes kinds on the way in; a dump's one
// "records" list becomes the model's collective and P2P lists (detect/p2p_op.h decides).
#ifndef NCCLWATCH_CORE_DUMP_DUMP_JSON_H_
#define NCCLWATCH_CORE_DUMP_DUMP_JSON_H_

#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/dump/dump.h"
#include "core/status/status.h"

namespace ncclwatch::dump {

nlohmann::json ToJson(const RankDump& dump);
// The dump in `text`, the whole content of a file.
Result<RankDump> ParseDump(std::string_view text) noexcept;

// The dump's hex fields ("comm", "stream", "pc", ...) are written with format::FormatHex and
// read with format::ParseHex (core/format/hex.h): "0x" and 1 to 16 hex digits, nothing else.

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_DUMP_JSON_H_
