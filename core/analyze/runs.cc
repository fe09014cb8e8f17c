#include "core/analyze/runs.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/format/hex.h"

namespace ncclwatch::analyze {
namespace {

// Union-find over dump indices, with path halving.
class Components {
 public:
  explicit Components(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), size_t{0}); }
  size_t Find(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void Join(size_t a, size_t b) {
    a = Find(a), b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<size_t> parent_;
};

// Joins every dump that names `key` with the first one that did.
class KeyJoiner {
 public:
  explicit KeyJoiner(Components* c) : c_(c) {}
  void Add(const std::string& key, size_t dump) {
    auto [it, inserted] = first_.emplace(key, dump);
    if (!inserted) c_->Join(it->second, dump);
  }

 private:
  Components* c_;
  std::unordered_map<std::string, size_t> first_;
};

// Attempts order by requeue, then restart; -1 (not given) before 0.
std::pair<int, int> AttemptOrder(const detect::Attempt& a) { return {a.requeue, a.restart}; }

void Widen(uint64_t t, uint64_t* first, uint64_t* last) {
  if (t == 0) return;
  if (*first == 0 || t < *first) *first = t;
  if (t > *last) *last = t;
}

// Components that share a job id and whose requeue counts differ are one job, requeued.
void JoinRequeues(const std::vector<const dump::LoadedDump*>& dumps, Components* c) {
  std::map<std::string, std::map<size_t, std::set<int>>> requeues;  // job id -> component -> requeue counts
  for (size_t i = 0; i < dumps.size(); ++i) {
    const dump::RankDump& d = dumps[i]->dump;
    if (!d.incident.job_id.empty()) requeues[d.incident.job_id][c->Find(i)].insert(d.process.attempt.requeue);
  }
  for (const auto& [job, components] : requeues) {
    if (components.size() < 2) continue;
    bool any_requeue = false, disjoint = true;
    std::set<int> seen;
    for (const auto& [root, counts] : components) {
      for (int n : counts) {
        any_requeue = any_requeue || n >= 0;
        disjoint = disjoint && seen.insert(n).second;
      }
    }
    if (!any_requeue || !disjoint) continue;
    for (const auto& [root, counts] : components) c->Join(components.begin()->first, root);
  }
}

}  // namespace

std::string AttemptLabel(const detect::Attempt& attempt) {
  if (attempt.restart >= 0 && attempt.requeue >= 0) {
    return "attempt " + std::to_string(attempt.restart) + " of requeue " + std::to_string(attempt.requeue);
  }
  if (attempt.restart >= 0) return "attempt " + std::to_string(attempt.restart);
  if (attempt.requeue >= 0) return "requeue " + std::to_string(attempt.requeue);
  return "";
}

std::vector<RunDumps> GroupRuns(const dump::DumpSet& set) {
  std::vector<const dump::LoadedDump*> dumps;
  dumps.reserve(set.dumps.size());
  for (const dump::LoadedDump& loaded : set.dumps) dumps.push_back(&loaded);
  Components components(dumps.size());
  KeyJoiner joiner(&components);
  for (size_t i = 0; i < dumps.size(); ++i) {
    const dump::RankDump& d = dumps[i]->dump;
    if (d.incident.run_key != 0) joiner.Add("launcher " + d.process.host + " " + format::FormatHex(d.incident.run_key), i);
    for (const detect::CommFacts& c : d.comms) {
      if (c.comm_hash != 0) joiner.Add("comm " + format::FormatHex(c.comm_hash), i);
    }
    // An incident id names a communicator hash or a pid and nanosecond onset
    // (core/watch/incident_id.h): only one launch's ranks dump under it.
    if (!d.incident.id.empty()) joiner.Add("incident " + d.incident.id, i);
  }
  JoinRequeues(dumps, &components);

  std::map<size_t, RunDumps> by_root;
  std::map<size_t, std::map<std::pair<int, int>, AttemptDumps>> attempts;
  std::map<size_t, std::pair<std::set<std::string>, std::set<std::string>>> names;  // hosts, job ids
  for (size_t i = 0; i < dumps.size(); ++i) {
    const size_t root = components.Find(i);
    const dump::RankDump& d = dumps[i]->dump;
    AttemptDumps& attempt = attempts[root][AttemptOrder(d.process.attempt)];
    attempt.attempt = d.process.attempt;
    attempt.dumps.push_back(dumps[i]);
    Widen(d.incident.detected_unix_ns, &attempt.first_unix_ns, &attempt.last_unix_ns);
    RunDumps& run = by_root[root];
    Widen(d.incident.detected_unix_ns, &run.first_unix_ns, &run.last_unix_ns);
    names[root].first.insert(d.process.host);
    if (!d.incident.job_id.empty()) names[root].second.insert(d.incident.job_id);
  }
  std::vector<RunDumps> runs;
  runs.reserve(by_root.size());
  for (auto& [root, run] : by_root) {
    for (auto& [order, attempt] : attempts[root]) run.attempts.push_back(std::move(attempt));
    run.hosts.assign(names[root].first.begin(), names[root].first.end());
    run.job_ids.assign(names[root].second.begin(), names[root].second.end());
    runs.push_back(std::move(run));
  }
  // Most recent first; ties (dumps without times) in the order of their first path.
  std::stable_sort(runs.begin(), runs.end(),
                   [](const RunDumps& a, const RunDumps& b) { return a.last_unix_ns > b.last_unix_ns; });
  return runs;
}

}  // namespace ncclwatch::analyze
