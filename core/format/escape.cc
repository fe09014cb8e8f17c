#include "core/format/escape.h"

#include <cstdint>
#include <cstdio>

#include "core/format/utf8.h"

namespace ncclwatch::format {
namespace {

void AppendHexByte(unsigned char byte, std::string* out) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02x", byte);
  out->append(buf, 4);
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
    const size_t length = Utf8SequenceLength(text, i);
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
