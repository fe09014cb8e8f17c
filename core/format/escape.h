// Escaping of untrusted text (thread and function names, hosts, environment values, paths,
// anything a dump or another process supplied) before it reaches a terminal or a
// line-oriented text report.
//
// Without it a dump can move the cursor, clear the screen (ESC [2J), retitle the terminal,
// or start a new line that looks like the tool's own output ("\nVERDICT: none").
// JSON output does not need this: its encoder escapes every control character itself.
#ifndef NCCLWATCH_CORE_FORMAT_ESCAPE_H_
#define NCCLWATCH_CORE_FORMAT_ESCAPE_H_

#include <string>
#include <string_view>

namespace ncclwatch::format {

// Returns `text` with every byte that could control a terminal or break a line escaped:
//   "\n" "\r" "\t"        for newline, carriage return and tab;
//   "\\"                  for a backslash, so that the escaped form is unambiguous;
//   "\xNN"                for the other C0 controls (0x00-0x1f, ESC = "\x1b"), DEL (0x7f),
//                         and every byte that is not part of valid UTF-8 (stray
//                         continuation bytes, 8-bit C1 controls such as 0x9b, overlong
//                         forms, surrogates, code points above U+10FFFF, truncated
//                         sequences);
//   "\u0080".."\u009f"    for the C1 controls encoded as UTF-8 (U+0080..U+009F), which
//                         some terminals obey like their 8-bit forms.
// Everything else, including printable UTF-8 such as "é" or "日本", is copied unchanged.
// The result holds no byte below 0x20, no 0x7f, and only valid UTF-8. Linear in the size
// of `text`; the result is at most 4 times longer.
std::string EscapeForTerminal(std::string_view text);

}  // namespace ncclwatch::format

#endif  // NCCLWATCH_CORE_FORMAT_ESCAPE_H_
