#include "core/format/escape.h"

#include <cstdint>
#include <cstdio>

namespace ncclwatch::format {
namespace {

void AppendHexByte(unsigned char byte, std::string* out) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02x", byte);
  out->append(buf, 4);
}

// Length of the valid UTF-8 sequence starting at text[i] (2 to 4), or 0 when the bytes
// there are not one (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
size_t ValidSequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // allowed range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;   // overlong below U+0800
    if (lead == 0xed) high = 0x9f;  // UTF-16 surrogates U+D800..U+DFFF
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;   // overlong below U+10000
    if (lead == 0xf4) high = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (text.size() - i < length) return 0;
  if (byte(1) < low || byte(1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(k) < 0x80 || byte(k) > 0xbf) return 0;
  }
  return length;
}

// Escapes one ASCII byte when it needs it; returns false when it is copied as is.
bool AppendEscapedAscii(unsigned char c, std::string* out) {
  switch (c) {
    case '\n': *out += "\\n"; return true;
    case '\r': *out += "\\r"; return true;
    case '\t': *out += "\\t"; return true;
    case '\\': *out += "\\\\"; return true;
    default: break;
  }
  if (c < 0x20 || c == 0x7f) {
    AppendHexByte(c, out);
    return true;
  }
  return false;
}

}  // namespace

std::string EscapeForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (!AppendEscapedAscii(c, &out)) out += static_cast<char>(c);
      ++i;
      continue;
    }
    const size_t length = ValidSequenceLength(text, i);
    if (length == 0) {
      AppendHexByte(c, &out);
      ++i;
      continue;
    }
    // U+0080..U+009F are encoded C2 80..C2 9F.
    if (c == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      char buf[7];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      out.append(buf, 6);
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

}  // namespace ncclwatch::format
