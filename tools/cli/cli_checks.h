// Option checks whose errors read as a sentence ("--stall: must be > 0, got 0"), where CLI11's
// own PositiveNumber prints the whole double range (300 digits).
#ifndef NCCLWATCH_TOOLS_CLI_CLI_CHECKS_H_
#define NCCLWATCH_TOOLS_CLI_CLI_CHECKS_H_

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

namespace ncclwatch::tools {

// A finite number above `floor` (strictly, unless `or_equal`).
inline CLI::Validator NumberAbove(double floor, bool or_equal) {
  const std::string bound = std::string(or_equal ? ">= " : "> ") + CLI::detail::to_string(floor);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        // strtod, not std::stod: no exception for text that is not a number or out of range.
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(text.c_str(), &end);
        const bool parsed = end == text.c_str() + text.size() && !text.empty() && errno != ERANGE;
        const bool in_range = parsed && std::isfinite(value) && (or_equal ? value >= floor : value > floor);
        return in_range ? "" : "must be a number " + bound + ", got '" + text + "'";
      },
      bound, "number " + bound);
}

inline CLI::Validator Positive() { return NumberAbove(0, false); }
inline CLI::Validator NonNegative() { return NumberAbove(0, true); }

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_CLI_CLI_CHECKS_H_
