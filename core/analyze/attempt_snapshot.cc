#include "core/analyze/attempt_snapshot.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace ncclwatch::analyze {
namespace {

bool IsLastGasp(const dump::RankDump& d) { return d.incident.trigger == "last-gasp" || !d.incident.teardown.cause.empty(); }

// Earliest first by wall clock; the path breaks ties, so the choice never depends on the
// order of the directory listing.
bool EarlierDump(const dump::LoadedDump* a, const dump::LoadedDump* b) {
  return std::tie(a->dump.incident.detected_unix_ns, a->path) < std::tie(b->dump.incident.detected_unix_ns, b->path);
}

struct ProcessDumps {
  std::vector<const dump::LoadedDump*> incidents;     // not teardowns
  std::vector<const dump::LoadedDump*> own_teardown;  // teardown snapshots it wrote itself
  std::vector<const dump::LoadedDump*> by_peers;      // teardown snapshots peers wrote for it
};

// The dump a process is judged by (see the header), and whether it is a teardown snapshot.
JudgedDump Choose(const ProcessDumps& p, const ResolutionIndex& resolutions) {
  for (const dump::LoadedDump* d : p.incidents) {
    if (!resolutions.ResolvedAfter(*d)) return JudgedDump{d, false};
  }
  if (!p.incidents.empty()) return JudgedDump{p.incidents.front(), false};
  if (!p.own_teardown.empty()) return JudgedDump{p.own_teardown.front(), true};
  return JudgedDump{p.by_peers.front(), true};
}

}  // namespace

AttemptSnapshot SelectSnapshot(const AttemptDumps& attempt, const ResolutionIndex& resolutions) {
  std::set<std::string> last_gasps;  // incident ids: every dump of one is a teardown snapshot
  for (const dump::LoadedDump* d : attempt.dumps) {
    if (IsLastGasp(d->dump)) last_gasps.insert(d->dump.incident.id);
  }
  std::map<std::pair<std::string, int32_t>, ProcessDumps> by_process;
  for (const dump::LoadedDump* d : attempt.dumps) {
    ProcessDumps& p = by_process[{d->dump.process.host, d->dump.process.pid}];
    if (last_gasps.count(d->dump.incident.id) == 0) p.incidents.push_back(d);
    else if (d->dump.written_by.pid == 0) p.own_teardown.push_back(d);
    else p.by_peers.push_back(d);
  }
  AttemptSnapshot out;
  std::set<const dump::LoadedDump*> judged;
  for (auto& [key, p] : by_process) {
    for (auto* list : {&p.incidents, &p.own_teardown, &p.by_peers}) std::sort(list->begin(), list->end(), EarlierDump);
    const JudgedDump chosen = Choose(p, resolutions);
    out.judged.push_back(chosen);
    judged.insert(chosen.loaded);
    for (const dump::LoadedDump* d : p.incidents) {
      if (d != chosen.loaded && EarlierDump(d, chosen.loaded) && resolutions.ResolvedAfter(*d)) out.before.push_back(d);
    }
  }
  std::sort(out.judged.begin(), out.judged.end(),
            [](const JudgedDump& a, const JudgedDump& b) { return a.loaded->path < b.loaded->path; });
  const std::set<const dump::LoadedDump*> before(out.before.begin(), out.before.end());
  for (const dump::LoadedDump* d : attempt.dumps) {
    if (judged.count(d) == 0 && before.count(d) == 0) out.after.push_back(d);
  }
  std::sort(out.after.begin(), out.after.end(), EarlierDump);
  std::sort(out.before.begin(), out.before.end(), EarlierDump);
  return out;
}

}  // namespace ncclwatch::analyze
