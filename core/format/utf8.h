// Well-formed UTF-8, as RFC 3629 defines it (and nlohmann::json's lexer checks it): no
// overlong form, no UTF-16 surrogate, nothing above U+10FFFF. For the escaping of untrusted
// text (escape.h) and the JSON reader (core/dump/json_stream.h).
#ifndef NCCLWATCH_CORE_FORMAT_UTF8_H_
#define NCCLWATCH_CORE_FORMAT_UTF8_H_

#include <cstddef>
#include <string_view>

namespace ncclwatch::format {

// Length of the valid multi-byte sequence starting at text[i] (2 to 4), or 0 when the bytes
// there are not one (an ASCII byte included).
size_t Utf8SequenceLength(std::string_view text, size_t i);

}  // namespace ncclwatch::format

#endif  // NCCLWATCH_CORE_FORMAT_UTF8_H_
