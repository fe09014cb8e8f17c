// Agreement in generated English: "1 dump" / "2 dumps", "rank 1 has" / "ranks 0,2 have".
#ifndef NCCLWATCH_CORE_FORMAT_PLURAL_H_
#define NCCLWATCH_CORE_FORMAT_PLURAL_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace ncclwatch::format {

// "1 dump", "0 dumps", "2 dumps": the count and the noun form that agrees with it.
std::string CountOf(uint64_t count, std::string_view singular, std::string_view plural);

// The form of a word that agrees with `count` subjects: Agree(1, "has", "have") is "has";
// Agree(0, ...) and Agree(2, ...) are "have".
std::string_view Agree(uint64_t count, std::string_view singular, std::string_view plural);

}  // namespace ncclwatch::format

#endif  // NCCLWATCH_CORE_FORMAT_PLURAL_H_
