#include "core/format/plural.h"

namespace ncclwatch::format {

std::string_view Agree(uint64_t count, std::string_view singular, std::string_view plural) {
  return count == 1 ? singular : plural;
}

std::string CountOf(uint64_t count, std::string_view singular, std::string_view plural) {
  return std::to_string(count) + " " + std::string(Agree(count, singular, plural));
}

}  // namespace ncclwatch::format
