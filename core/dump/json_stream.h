// Streams a JSON text's events (nlohmann::json's SAX interface: start_object, key, string,
// number_unsigned, ...) to a handler, with no document in memory. For the files ncclwatch
// reads back (dumps, resolution notes), whose parsing into nlohmann::json's DOM took 5.2 s of
// the 5.7 s `analyze` spent on 4096 ranks.
//
// Two parsers, one verdict. PullParser reads what ncclwatch writes, fast: whitespace,
// structure, literals, integers of 64 bits, strings with escapes (surrogate pairs included)
// and valid UTF-8. Anything else makes it give up at once: a number with a fraction or an
// exponent or beyond 64 bits, a lone surrogate, a byte-order mark, a control character,
// invalid UTF-8, nesting deeper than kMaxPullDepth, any syntax error. StreamJson then
// parses the whole text again with nlohmann::json::sax_parse, whose acceptance and error
// position ("at byte N") are the reference: on every text PullParser accepts, nlohmann
// accepts it with the same events (tests/core/dump/json_stream_test.cc compares the two).
//
// Handler: the methods of nlohmann::json_sax<nlohmann::json>, plus Reset(), which must
// forget every event (StreamJson calls it before the second parser). Strings and keys are
// passed as a buffer the handler may copy but must not keep.
#ifndef NCCLWATCH_CORE_DUMP_JSON_STREAM_H_
#define NCCLWATCH_CORE_DUMP_JSON_STREAM_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/format/utf8.h"

namespace ncclwatch::dump {

// A dump nests 5 deep ({"comms":[{"records":[{...}]}]}); deeper text goes to nlohmann, which
// needs no stack of its own either.
inline constexpr size_t kMaxPullDepth = 64;

template <typename Handler>
class PullParser {
 public:
  PullParser(std::string_view text, Handler* handler)
      : p_(reinterpret_cast<const unsigned char*>(text.data())), end_(p_ + text.size()), handler_(handler) {}

  // true: the whole text was parsed and every event delivered; false: gave up (events so far
  // are meaningless), or the handler returned false.
  bool Run() {
    if (p_ != end_ && *p_ == 0xEF) return false;  // a byte-order mark: nlohmann's to judge
    if (!Value()) return false;
    for (;;) {
      SkipWhitespace();
      if (depth_ == 0) return p_ == end_;
      if (p_ == end_) return false;
      const unsigned char c = *p_++;
      if (stack_[depth_ - 1] == '{') {
        if (c == '}') {
          if (!handler_->end_object()) return false;
          --depth_;
        } else if (c != ',' || !KeyThenValue()) {
          return false;
        }
      } else {
        if (c == ']') {
          if (!handler_->end_array()) return false;
          --depth_;
        } else if (c != ',' || !Value()) {
          return false;
        }
      }
    }
  }

 private:
  static constexpr size_t kUnknownSize = static_cast<size_t>(-1);  // what nlohmann passes

  void SkipWhitespace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  // One value; a container is opened (and an empty one closed) here, filled by Run's loop.
  bool Value() {
    SkipWhitespace();
    if (p_ == end_) return false;
    switch (*p_) {
      case '{':
        ++p_;
        if (depth_ == kMaxPullDepth || !handler_->start_object(kUnknownSize)) return false;
        stack_[depth_++] = '{';
        SkipWhitespace();
        if (p_ != end_ && *p_ == '}') {
          ++p_;
          --depth_;
          return handler_->end_object();
        }
        return KeyThenValue();
      case '[':
        ++p_;
        if (depth_ == kMaxPullDepth || !handler_->start_array(kUnknownSize)) return false;
        stack_[depth_++] = '[';
        SkipWhitespace();
        if (p_ != end_ && *p_ == ']') {
          ++p_;
          --depth_;
          return handler_->end_array();
        }
        return Value();
      case '"':
        ++p_;
        return String() && handler_->string(buffer_);
      case 't':
        return Literal("true") && handler_->boolean(true);
      case 'f':
        return Literal("false") && handler_->boolean(false);
      case 'n':
        return Literal("null") && handler_->null();
      default:
        return Number();
    }
  }

  bool KeyThenValue() {
    SkipWhitespace();
    if (p_ == end_ || *p_ != '"') return false;
    ++p_;
    if (!String() || !handler_->key(buffer_)) return false;
    SkipWhitespace();
    if (p_ == end_ || *p_ != ':') return false;
    ++p_;
    return Value();
  }

  bool Literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(reinterpret_cast<const char*>(p_), word.size()) != word) {
      return false;
    }
    p_ += word.size();
    return true;
  }

  // An integer as nlohmann reads it: unsigned when not negative, signed otherwise; anything
  // beyond 64 bits, and every fraction or exponent, is a float there: given up here.
  bool Number() {
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
    uint64_t value = 0;
    if (*p_ == '0') {
      ++p_;
      if (p_ != end_ && *p_ >= '0' && *p_ <= '9') return false;  // a leading zero: a syntax error
    } else {
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
        const uint64_t digit = *p_++ - '0';
        if (__builtin_mul_overflow(value, 10u, &value) || __builtin_add_overflow(value, digit, &value)) return false;
      }
    }
    if (p_ != end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    if (!negative) return handler_->number_unsigned(value);
    constexpr uint64_t kMinMagnitude = uint64_t{1} << 63;  // -2^63 is the most negative int64
    if (value > kMinMagnitude) return false;
    return handler_->number_integer(value == kMinMagnitude ? INT64_MIN : -static_cast<int64_t>(value));
  }

  // The string after its opening quote, unescaped into buffer_.
  bool String() {
    buffer_.clear();
    for (;;) {
      const unsigned char* run = p_;
      while (p_ != end_ && kPlain[*p_]) ++p_;
      buffer_.append(reinterpret_cast<const char*>(run), static_cast<size_t>(p_ - run));
      if (p_ == end_) return false;
      const unsigned char c = *p_;
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c == '\\') {
        if (!Escape()) return false;
      } else if (c >= 0x80) {
        if (!Utf8()) return false;
      } else {
        return false;  // a control character
      }
    }
  }

  bool Escape() {
    if (end_ - p_ < 2) return false;
    const unsigned char c = p_[1];
    p_ += 2;
    switch (c) {
      case '"': buffer_ += '"'; return true;
      case '\\': buffer_ += '\\'; return true;
      case '/': buffer_ += '/'; return true;
      case 'b': buffer_ += '\b'; return true;
      case 'f': buffer_ += '\f'; return true;
      case 'n': buffer_ += '\n'; return true;
      case 'r': buffer_ += '\r'; return true;
      case 't': buffer_ += '\t'; return true;
      case 'u': break;
      default: return false;
    }
    int code = Hex4();
    if (code < 0 || (code >= 0xDC00 && code <= 0xDFFF)) return false;
    if (code >= 0xD800 && code <= 0xDBFF) {  // a high surrogate: its low one must follow
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
      p_ += 2;
      const int low = Hex4();
      if (low < 0xDC00 || low > 0xDFFF) return false;
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    AppendUtf8(static_cast<uint32_t>(code));
    return true;
  }

  // Four hex digits, or -1.
  int Hex4() {
    if (end_ - p_ < 4) return -1;
    int code = 0;
    for (int i = 0; i < 4; ++i) {
      const unsigned char c = *p_++;
      const int digit = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
      if (digit < 0) return -1;
      code = code * 16 + digit;
    }
    return code;
  }

  void AppendUtf8(uint32_t code) {
    if (code < 0x80) {
      buffer_ += static_cast<char>(code);
    } else if (code < 0x800) {
      buffer_ += static_cast<char>(0xC0 | (code >> 6));
      buffer_ += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      buffer_ += static_cast<char>(0xE0 | (code >> 12));
      buffer_ += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      buffer_ += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      buffer_ += static_cast<char>(0xF0 | (code >> 18));
      buffer_ += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      buffer_ += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      buffer_ += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  // One UTF-8 sequence, well-formed as nlohmann's lexer requires (format/utf8.h).
  bool Utf8() {
    const std::string_view rest(reinterpret_cast<const char*>(p_), static_cast<size_t>(end_ - p_));
    const size_t length = format::Utf8SequenceLength(rest, 0);
    if (length == 0) return false;
    buffer_.append(rest.data(), length);
    p_ += length;
    return true;
  }

  // Bytes copied as they are inside a string: printable ASCII but the quote and the backslash.
  static constexpr std::array<bool, 256> kPlain = [] {
    std::array<bool, 256> plain{};
    for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
    return plain;
  }();

  const unsigned char* p_;
  const unsigned char* const end_;
  Handler* const handler_;
  std::array<char, kMaxPullDepth> stack_{};
  size_t depth_ = 0;
  std::string buffer_;
};

// Every event of `text` to `handler`, by PullParser or, when it gives up, by nlohmann's SAX
// parser after handler->Reset(). Returns what the last parser returned: false when the text
// is not JSON (the handler's parse_error was called) or the handler stopped.
template <typename Handler>
bool StreamJson(std::string_view text, Handler* handler) {
  if (PullParser<Handler>(text, handler).Run()) return true;
  handler->Reset();
  return nlohmann::json::sax_parse(text, handler);
}

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_JSON_STREAM_H_
