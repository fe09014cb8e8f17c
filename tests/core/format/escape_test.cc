#include <catch2/catch.hpp>

#include <string>

#include "core/format/escape.h"

using ncclwatch::format::EscapeForTerminal;

namespace {

// True when `text` has no C0 control, no DEL and is valid UTF-8 with no C1 control.
bool SafeForTerminal(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("printable text, including UTF-8, is copied unchanged", "[format][escape]") {
  CHECK(EscapeForTerminal("") == "");
  CHECK(EscapeForTerminal("node17:4242 AllReduce #3") == "node17:4242 AllReduce #3");
  CHECK(EscapeForTerminal("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80") ==
        "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80");
  CHECK(EscapeForTerminal("\xc2\xa0") == "\xc2\xa0");  // U+00A0, just above the C1 block
}

TEST_CASE("newlines, tabs, ESC and other C0 controls are escaped", "[format][escape]") {
  CHECK(EscapeForTerminal("a\nVERDICT: fake") == "a\\nVERDICT: fake");
  CHECK(EscapeForTerminal("\r\t") == "\\r\\t");
  CHECK(EscapeForTerminal("\x1b[2J") == "\\x1b[2J");
  CHECK(EscapeForTerminal(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(EscapeForTerminal("\x07\x08\x1f") == "\\x07\\x08\\x1f");
  CHECK(EscapeForTerminal("\x7f") == "\\x7f");
  CHECK(EscapeForTerminal("back\\slash") == "back\\\\slash");
}

TEST_CASE("C1 controls are escaped, raw or UTF-8 encoded", "[format][escape]") {
  CHECK(EscapeForTerminal("\x9b" "2J") == "\\x9b2J");                  // 8-bit CSI
  CHECK(EscapeForTerminal("\xc2\x9b" "2J") == "\\u009b2J");            // U+009B encoded
  CHECK(EscapeForTerminal("\xc2\x85") == "\\u0085");                   // NEL
  CHECK(EscapeForTerminal("\xc2\x80\xc2\x9f") == "\\u0080\\u009f");
}

TEST_CASE("invalid UTF-8 is escaped byte by byte", "[format][escape]") {
  CHECK(EscapeForTerminal("\xff") == "\\xff");
  CHECK(EscapeForTerminal("a\x80z") == "a\\x80z");                     // stray continuation
  CHECK(EscapeForTerminal("\xc0\xaf") == "\\xc0\\xaf");                // overlong '/'
  CHECK(EscapeForTerminal("\xe0\x80\xaf") == "\\xe0\\x80\\xaf");       // overlong 3-byte
  CHECK(EscapeForTerminal("\xed\xa0\x80") == "\\xed\\xa0\\x80");       // surrogate U+D800
  CHECK(EscapeForTerminal("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  CHECK(EscapeForTerminal("\xe6\x97") == "\\xe6\\x97");                // truncated at the end
  CHECK(EscapeForTerminal("\xe6\x97z") == "\\xe6\\x97z");              // truncated mid-text
  CHECK(EscapeForTerminal("\xc3\x1b") == "\\xc3\\x1b");                // lead byte then ESC
}

TEST_CASE("every byte value alone and in pairs comes out safe", "[format][escape]") {
  for (int a = 0; a < 256; ++a) {
    std::string one(1, static_cast<char>(a));
    std::string escaped = EscapeForTerminal(one);
    CHECK(SafeForTerminal(escaped));
    CHECK(escaped.size() <= 4 * one.size());
    for (int b = 0; b < 256; b += 7) {
      std::string two = one + static_cast<char>(b);
      CHECK(SafeForTerminal(EscapeForTerminal(two)));
    }
  }
}
