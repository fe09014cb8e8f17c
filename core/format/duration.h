// Durations for people: the age of a collective in `ncclwatch status`, waits in reports.
#ifndef NCCLWATCH_CORE_FORMAT_DURATION_H_
#define NCCLWATCH_CORE_FORMAT_DURATION_H_

#include <cstdint>
#include <string>

namespace ncclwatch::format {

// Tenths of a second below one minute ("0.0s", "59.9s", truncated, never rounded up to the
// next unit), then two units: "1m00s", "59m59s", "1h00m", "23h59m", "1d00h", up to
// "213503d23h" for UINT64_MAX (a hostile or corrupt time still prints, in bounded width).
std::string FormatDuration(uint64_t ns);

}  // namespace ncclwatch::format

#endif  // NCCLWATCH_CORE_FORMAT_DURATION_H_
