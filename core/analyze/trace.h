// A Chrome Trace Event (JSON object format) timeline of every rank's recent collectives,
// for ui.perfetto.dev and chrome://tracing.
//
// One process track per rank dump ("rank G (host:pid)"), sorted by global rank, with
// culprits first and marked "CULPRIT"; one thread track per communicator, plus one lane per
// level of overlap ("(overlapping ops N)"): spans on one track never overlap, as the format
// requires of complete events. Each collective record is a complete ("X") span from enqueue to
// completion; one still incomplete at the incident ends at the detection time and is named
// "... (incomplete)". A culprit that never issued the verdict's collective gets a span
// "<op> #<seq> (never issued)" from the first rank's enqueue of it to the culprit's dump. Each
// culprit gets an instant event "culprit: <kind> #<seq> <op>" at its detection time.
//
// Time axis: monotonic clocks of different hosts are not comparable. Each host is first
// placed by its wall clock at detection; then hosts sharing a communicator with the
// first host are shifted so that the median completion time of the collectives both saw
// (same commHash and collective number) coincides. ts is in microseconds from the
// earliest event.
#ifndef NCCLWATCH_CORE_ANALYZE_TRACE_H_
#define NCCLWATCH_CORE_ANALYZE_TRACE_H_

#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/analyze/analysis.h"
#include "core/dump/dump.h"

namespace ncclwatch::analyze {

nlohmann::json BuildTrace(const std::vector<const dump::RankDump*>& dumps, const detect::Verdict& verdict);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_TRACE_H_
