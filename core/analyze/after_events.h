// What happened after the incident an analysis is about, from the dumps that came after it
// (attempt_snapshot.h): the teardown (a last gasp's cause: SIGTERM to rank 1, ncclCommAbort on
// rank 0), processes that went (exit status, signal, killed without a word), and incidents the
// ranks' watchdogs declared later. Each is timed from the moment the stall began on its own
// host (the oldest op, init or host sync a judged process of that host waits on), since only
// times of one host compare; events are ordered by the wall clock of the dumps that tell them.
#ifndef NCCLWATCH_CORE_ANALYZE_AFTER_EVENTS_H_
#define NCCLWATCH_CORE_ANALYZE_AFTER_EVENTS_H_

#include <string>
#include <vector>

#include "core/analyze/analysis.h"
#include "core/analyze/attempt_snapshot.h"
#include "core/detect/facts.h"

namespace ncclwatch::analyze {

// At most this many events are kept (a hostile set may hold millions of dumps).
inline constexpr size_t kMaxAfterEvents = 64;

// `judged_facts[i]` are the facts of snapshot.judged[i] (as judged: a teardown as at its abort).
std::vector<AfterEvent> WhatHappenedNext(const AttemptSnapshot& snapshot,
                                         const std::vector<const detect::ProcessFacts*>& judged_facts);

// "rank 1", or "process vm:28891" when the launcher gave no rank.
std::string WhoOf(const dump::RankDump& d);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_AFTER_EVENTS_H_
