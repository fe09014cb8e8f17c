// Hexadecimal text of 64-bit values: communicator hashes, stream and event handles, pcs.
#ifndef NCCLWATCH_CORE_FORMAT_HEX_H_
#define NCCLWATCH_CORE_FORMAT_HEX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ncclwatch::format {

// "0x" followed by lowercase hex digits, no padding ("0x0", "0x1f"): how NCCL prints commId.
std::string FormatHex(uint64_t value);

// "0x" followed by exactly 16 lowercase hex digits ("0x000000000000001f"), for columns.
std::string FormatHexPadded(uint64_t value);

// Accepts "0x..." or "0X..." with 1 to 16 hex digits of either case; nothing else (no sign,
// no spaces, no empty digits). Returns nullopt for anything it does not accept.
std::optional<uint64_t> ParseHex(std::string_view text);

}  // namespace ncclwatch::format

#endif  // NCCLWATCH_CORE_FORMAT_HEX_H_
