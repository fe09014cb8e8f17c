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

// FormatDuration(now_ns - since_ns) of two CLOCK_MONOTONIC times of one host; "0.0s" when
// since_ns lies after now_ns. Offline, now_ns is the dump's detection time, so an age reads
// "as the rank saw it when it dumped". Callers decide what an unset (0) time means.
std::string FormatAge(uint64_t now_ns, uint64_t since_ns);

}  // namespace ncclwatch::format

#endif  // NCCLWATCH_CORE_FORMAT_DURATION_H_
