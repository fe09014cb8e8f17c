#include "core/format/hex.h"

namespace ncclwatch::format {
namespace {

constexpr char kDigits[] = "0123456789abcdef";

std::string Hex(uint64_t value) {
  char buf[2 + 16];
  int end = sizeof buf;
  do {
    buf[--end] = kDigits[value & 0xf];
    value >>= 4;
  } while (value != 0);
  buf[--end] = 'x';
  buf[--end] = '0';
  return std::string(buf + end, sizeof buf - static_cast<size_t>(end));
}

int DigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string FormatHex(uint64_t value) { return Hex(value); }

std::optional<uint64_t> ParseHex(std::string_view text) {
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
    return std::nullopt;
  }
  uint64_t value = 0;
  for (char c : text.substr(2)) {
    int digit = DigitValue(c);
    if (digit < 0) return std::nullopt;
    value = value << 4 | static_cast<uint64_t>(digit);
  }
  return value;
}

}  // namespace ncclwatch::format
