// Hexadecimal text of 64-bit values: communicator hashes, stream and event handles, pcs.
#ifndef NCCLWATCH_CORE_FORMAT_HEX_H_
#define NCCLWATCH_CORE_FORMAT_HEX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ncclwatch::format {

// "0x" followed by lowercase hex digits, no padding ("0x0", "0x1f"): how NCCL prints a
// communicator's hash ("commId 0x%llx", "commHash 0x%lx"). The one hex form of every output,
// text, JSON and metric labels alike, so that a hash can be searched for in NCCL's logs and in
// every ncclwatch file with one string.
std::string FormatHex(uint64_t value);

// Accepts "0x..." or "0X..." with 1 to 16 hex digits of either case; nothing else (no sign,
// no spaces, no empty digits). Returns nullopt for anything it does not accept.
std::optional<uint64_t> ParseHex(std::string_view text);

}  // namespace ncclwatch::format

#endif  // NCCLWATCH_CORE_FORMAT_HEX_H_
