// How a communicator is named for a person: its hash, then the name the framework gave it
// (ncclConfig_t.commName; torch: its process group), quoted and escaped. The one form of every
// text output (dump text, analyze, status, trace tracks, the WARN line).
#ifndef NCCLWATCH_CORE_FORMAT_COMM_LABEL_H_
#define NCCLWATCH_CORE_FORMAT_COMM_LABEL_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace ncclwatch::format {

// `0xfb1dd03142a6399 "0:default_pg"`; `0xfb1dd03142a6399` alone when `name` is empty. The hash
// is FormatHex's (NCCL's own form); the name goes through EscapeForTerminal, and a '"' in it is
// written \" so that the quotes still delimit it.
std::string CommLabel(uint64_t hash, std::string_view name);

// The same form before escaping, for a line its writer escapes whole (the preload's log, which
// passes every message through EscapeForTerminal): escaping here too would double every '\'.
std::string CommLabelUnescaped(uint64_t hash, std::string_view name);

// The quoted, escaped name alone (`"0:default_pg"`), "" when `name` is empty: for a column or
// a field next to a hash printed elsewhere.
std::string QuotedCommName(std::string_view name);

}  // namespace ncclwatch::format

#endif  // NCCLWATCH_CORE_FORMAT_COMM_LABEL_H_
