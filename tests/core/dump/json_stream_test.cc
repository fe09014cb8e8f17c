// core/dump/json_stream.h: the fast pull parser gives up on what it does not read, and on
// everything it reads it agrees with nlohmann's SAX parser, event for event.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "core/dump/json_stream.h"

using namespace ncclwatch;

namespace {

// Writes every event as a line, so that two parsers' events compare as strings.
class Trace {
 public:
  using json = nlohmann::json;

  void Reset() {
    text.clear();
    error_at = 0;
  }
  bool null() { return Add("null"); }
  bool boolean(bool v) { return Add(v ? "true" : "false"); }
  bool number_integer(json::number_integer_t v) { return Add("int " + std::to_string(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return Add("uint " + std::to_string(v)); }
  bool number_float(json::number_float_t, const std::string& s) { return Add("float " + s); }
  bool string(std::string& v) { return Add("string " + Hex(v)); }
  bool binary(json::binary_t&) { return Add("binary"); }
  bool start_object(size_t n) { return Add("{" + std::to_string(n)); }
  bool key(std::string& v) { return Add("key " + Hex(v)); }
  bool end_object() { return Add("}"); }
  bool start_array(size_t n) { return Add("[" + std::to_string(n)); }
  bool end_array() { return Add("]"); }
  bool parse_error(size_t at, const std::string&, const nlohmann::detail::exception&) {
    error_at = at;
    return false;
  }

  std::string text;
  size_t error_at = 0;

 private:
  static std::string Hex(const std::string& v) {
    static const char kDigits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : v) {
      out += kDigits[c >> 4];
      out += kDigits[c & 15];
    }
    return out;
  }
  bool Add(const std::string& line) {
    text += line + "\n";
    return true;
  }
};

// Whether PullParser took `text`, and if so that nlohmann takes it with the same events.
bool PullAgreesWithNlohmann(const std::string& text) {
  Trace pulled;
  if (!dump::PullParser<Trace>(text, &pulled).Run()) return false;
  Trace reference;
  INFO("text: " << text);
  REQUIRE(nlohmann::json::sax_parse(text, &reference));
  CHECK(pulled.text == reference.text);
  return true;
}

// JSON-ish text: mostly valid, with the edges a lexer can get wrong.
class Generator {
 public:
  explicit Generator(uint32_t seed) : random_(seed) {}

  std::string Document() {
    std::string out = Whitespace();
    Value(0, &out);
    return out + Whitespace();
  }

 private:
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random_); }

  std::string Whitespace() {
    static const char* kSpaces[] = {"", "", "", " ", "\n", "\t ", "\r\n  "};
    return kSpaces[Pick(7)];
  }

  void Value(int depth, std::string* out) {
    switch (Pick(depth > 80 ? 3 : 5)) {
      case 0: return Scalar(out);
      case 1: return String(out);
      case 2: return Number(out);
      case 3: {
        *out += '[' + Whitespace();
        const size_t n = Pick(4);
        for (size_t i = 0; i < n; ++i) {
          if (i) *out += ',' + Whitespace();
          Value(depth + 1, out);
        }
        *out += Whitespace() + ']';
        return;
      }
      default: {
        *out += '{' + Whitespace();
        const size_t n = Pick(4);
        for (size_t i = 0; i < n; ++i) {
          if (i) *out += ',' + Whitespace();
          String(out);
          *out += Whitespace() + ':' + Whitespace();
          Value(depth + 1, out);
        }
        *out += Whitespace() + '}';
      }
    }
  }

  void Scalar(std::string* out) {
    static const char* kScalars[] = {"true", "false", "null", "tru", "nul", "True"};
    *out += kScalars[Pick(Pick(4) == 0 ? 6 : 3)];
  }

  void Number(std::string* out) {
    static const char* kNumbers[] = {
        "0", "-0", "7", "-7", "42", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
        "-9223372036854775809", "9223372036854775808", "99999999999999999999999", "1.5", "-0.0", "1e3", "1E-2",
        "01", "-", "--1", "+1", "1.", ".5", "0x10", "123456789012345678", "-123456789012345678"};
    *out += kNumbers[Pick(sizeof kNumbers / sizeof *kNumbers)];
  }

  void String(std::string* out) {
    static const char* kPieces[] = {
        "a", "key", " ", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0041", "\\u00e9",
        "\\u20ac", "\\u0000", "\\ud83d\\ude00", "\\uD83D\\uDE00", "\\ud800", "\\udc00", "\\ud800\\u0041", "\\u12",
        "\\x", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
        "\xe0\x80\xaf", "\xff", "\x01", "\x1f", "\x7f"};
    *out += '"';
    const size_t n = Pick(5);
    for (size_t i = 0; i < n; ++i) *out += kPieces[Pick(Pick(3) == 0 ? sizeof kPieces / sizeof *kPieces : 14)];
    *out += '"';
  }

  std::mt19937 random_;
};

}  // namespace

TEST_CASE("the pull parser reads what ncclwatch writes and agrees with nlohmann on it", "[dump][json]") {
  const std::string written =
      R"({"schema":"ncclwatch.dump","version":2,"comms":[{"comm":"0x1f","rank":0,"records":[]}],)"
      R"("n":-9223372036854775808,"u":18446744073709551615,"s":"caf\u00e9 \ud83d\ude00 \"\\\/\b\f\n\r\t","e":{},"a":[[],{}]})";
  CHECK(PullAgreesWithNlohmann(written));
  CHECK(PullAgreesWithNlohmann(" \t\r\n[true, false, null, \"\xe2\x82\xac\"] \n"));
  CHECK(PullAgreesWithNlohmann("-0"));
}

TEST_CASE("the pull parser gives up on what it does not read, for nlohmann to judge", "[dump][json]") {
  for (const std::string& text : {std::string("\xef\xbb\xbf{}"), std::string("1.5"), std::string("1e3"),
                                  std::string("18446744073709551616"), std::string("-9223372036854775809"),
                                  std::string("\"\\ud800\""), std::string("\"\\udc00\""), std::string("\"\x01\""),
                                  std::string("\"\xc0\xaf\""), std::string("\"\xed\xa0\x80\""), std::string("01"),
                                  std::string("{\"a\":1,}"), std::string("[1,]"), std::string("{} {}"),
                                  std::string("tru"), std::string("\"abc"), std::string(""), std::string(200, '[') +
                                  std::string(200, ']')}) {
    INFO(text);
    Trace trace;
    CHECK_FALSE(dump::PullParser<Trace>(text, &trace).Run());
  }
}

TEST_CASE("on 20000 generated texts the pull parser never accepts what nlohmann does not, nor reads it otherwise",
          "[dump][json]") {
  Generator generator(20261127);
  size_t pulled = 0, valid = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = generator.Document();
    if (i % 3 == 0 && !text.empty()) text[i % text.size()] = "\"{}[],:0a\\ \x80"[i % 12];  // a byte replaced
    Trace reference;
    const bool nlohmann_takes = nlohmann::json::sax_parse(text, &reference);
    valid += nlohmann_takes;
    pulled += PullAgreesWithNlohmann(text);
  }
  // Most valid texts are the plain kind the pull parser reads itself.
  CHECK(pulled * 2 > valid);
  WARN(valid << " valid texts, " << pulled << " read by the pull parser");
}
