// Conversion between RankDump and its JSON document (schema in README.md).
//
// ToJson never throws for any RankDump. FromJson throws JsonFormatError (checked_json.h),
// whose message names the offending field, for documents that are JSON but not a valid dump
// of a supported version; the reader turns it into a one-line error.
//
// This file is the schema boundary: the model's kinds (verdict kind, sync target) become
// text here and only here on the way out, and text becomes kinds on the way in; a dump's one
// "records" list becomes the model's collective and P2P lists (detect/p2p_op.h decides).
#ifndef NCCLWATCH_CORE_DUMP_DUMP_JSON_H_
#define NCCLWATCH_CORE_DUMP_DUMP_JSON_H_

#include <nlohmann/json_fwd.hpp>

#include "core/dump/checked_json.h"
#include "core/dump/dump.h"

namespace ncclwatch::dump {

nlohmann::json ToJson(const RankDump& dump);
RankDump FromJson(const nlohmann::json& doc);

// The dump's hex fields ("comm", "stream", "pc", ...) are written with format::FormatHex and
// read with format::ParseHex (core/format/hex.h): "0x" and 1 to 16 hex digits, nothing else.

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_DUMP_JSON_H_
