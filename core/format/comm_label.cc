#include "core/format/comm_label.h"

#include "core/format/escape.h"
#include "core/format/hex.h"

namespace ncclwatch::format {

std::string QuotedCommName(std::string_view name) {
  if (name.empty()) return "";
  std::string out = "\"";
  for (char c : EscapeForTerminal(name)) {
    if (c == '"') out += '\\';
    out += c;
  }
  return out + '"';
}

std::string CommLabel(uint64_t hash, std::string_view name) {
  std::string out = FormatHex(hash);
  if (!name.empty()) out += ' ' + QuotedCommName(name);
  return out;
}

std::string CommLabelUnescaped(uint64_t hash, std::string_view name) {
  std::string out = FormatHex(hash);
  if (!name.empty()) out.append(" \"").append(name).append("\"");
  return out;
}

}  // namespace ncclwatch::format
