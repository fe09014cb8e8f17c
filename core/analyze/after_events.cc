#include "core/analyze/after_events.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/analyze/culprit_processes.h"
#include "core/detect/pending.h"

namespace ncclwatch::analyze {
namespace {

// The wall clock of an instant `mono_ns` of the dump's host, from the dump's own pair of
// clocks; the dump's detection when unknown or later than it.
uint64_t WallClockOf(const dump::RankDump& d, uint64_t mono_ns) {
  const uint64_t mono = d.incident.detected_mono_ns, unix = d.incident.detected_unix_ns;
  if (mono_ns == 0 || mono_ns > mono || mono - mono_ns > unix) return unix;
  return unix - (mono - mono_ns);
}

class Events {
 public:
  explicit Events(std::map<std::string, uint64_t> onset_by_host) : onset_by_host_(std::move(onset_by_host)) {}

  void Add(const dump::RankDump& d, AfterEvent::Kind kind, std::string what, std::string text, uint64_t mono_ns) {
    if (!seen_.emplace(d.process.host, d.process.pid, kind, what).second || events_.size() == kMaxAfterEvents) return;
    AfterEvent e;
    e.kind = kind;
    e.who = WhoOf(d);
    e.host = d.process.host;
    e.pid = d.process.pid;
    e.what = std::move(what);
    e.text = std::move(text);
    e.unix_ns = WallClockOf(d, mono_ns);
    auto onset = onset_by_host_.find(d.process.host);
    if (onset != onset_by_host_.end() && mono_ns >= onset->second && mono_ns != 0) e.after_ns = mono_ns - onset->second;
    events_.push_back(std::move(e));
  }

  std::vector<AfterEvent> Take() {
    std::stable_sort(events_.begin(), events_.end(),
                     [](const AfterEvent& a, const AfterEvent& b) { return a.unix_ns < b.unix_ns; });
    return std::move(events_);
  }

 private:
  std::map<std::string, uint64_t> onset_by_host_;
  std::set<std::tuple<std::string, int32_t, AfterEvent::Kind, std::string>> seen_;
  std::vector<AfterEvent> events_;
};

// "SIGTERM to rank 1", "ncclCommAbort on rank 0".
std::string TeardownText(const std::string& cause, const std::string& who) {
  return cause + (cause.rfind("SIG", 0) == 0 ? " to " : " on ") + who;
}

void AddEventsOf(const dump::RankDump& d, const std::set<std::string>& judged_incidents, Events* events) {
  const bool own = d.written_by.pid == 0;
  if (own && !d.incident.teardown.cause.empty()) {
    const uint64_t began = d.incident.teardown.began_mono_ns ? d.incident.teardown.began_mono_ns : d.incident.detected_mono_ns;
    events->Add(d, AfterEvent::Kind::kTeardown, d.incident.teardown.cause, TeardownText(d.incident.teardown.cause, WhoOf(d)),
                began);
  } else if (own && d.incident.trigger == "last-gasp") {  // a writer from before incident.teardown
    events->Add(d, AfterEvent::Kind::kTeardown, "teardown", "teardown of " + WhoOf(d), d.incident.detected_mono_ns);
  }
  if (!d.process.alive) {
    const std::string how = ExitText(d.process.exit);
    events->Add(d, AfterEvent::Kind::kExit, how, WhoOf(d) + " " + how, d.process.exit.exit_ns);
  }
  if (own && d.incident.teardown.cause.empty() && d.incident.trigger != "last-gasp" &&
      d.verdict.kind != detect::VerdictKind::kNone && judged_incidents.count(d.incident.id) == 0) {
    const std::string kind = detect::ToString(d.verdict.kind);
    events->Add(d, AfterEvent::Kind::kIncident, kind, WhoOf(d) + "'s watchdog declared " + kind, d.incident.detected_mono_ns);
  }
}

}  // namespace

std::string WhoOf(const dump::RankDump& d) {
  if (d.process.global_rank >= 0) return "rank " + std::to_string(d.process.global_rank);
  return "process " + d.process.host + ":" + std::to_string(d.process.pid);
}

std::vector<AfterEvent> WhatHappenedNext(const AttemptSnapshot& snapshot,
                                         const std::vector<const detect::ProcessFacts*>& judged_facts) {
  std::map<std::string, uint64_t> onset_by_host;
  std::set<std::string> judged_incidents;
  for (size_t i = 0; i < snapshot.judged.size(); ++i) {
    const dump::RankDump& d = snapshot.judged[i].loaded->dump;
    judged_incidents.insert(d.incident.id);
    if (i >= judged_facts.size() || judged_facts[i] == nullptr) continue;
    const std::optional<detect::Wait> wait = detect::OldestWait(*judged_facts[i]);
    if (!wait || wait->since_ns == 0) continue;
    auto [it, inserted] = onset_by_host.emplace(d.process.host, wait->since_ns);
    if (!inserted) it->second = std::min(it->second, wait->since_ns);
  }
  Events events(std::move(onset_by_host));
  for (const JudgedDump& j : snapshot.judged) {
    if (j.teardown) AddEventsOf(j.loaded->dump, judged_incidents, &events);
  }
  for (const dump::LoadedDump* d : snapshot.after) AddEventsOf(d->dump, judged_incidents, &events);
  return events.Take();
}

}  // namespace ncclwatch::analyze
