#include "core/analyze/evidence.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "core/analyze/user_frames.h"

namespace ncclwatch::analyze {
namespace {

constexpr size_t kMaxFramesPerThread = 12;
constexpr size_t kMaxThreadsPerRank = 6;

std::string StateOf(const detect::CommFacts& c, uint64_t seq) {
  if (c.init_done_ns == 0) return "init not done";
  if (seq == 0) return c.last_enqueued_seq > c.last_completed_seq ? "in flight" : "idle";
  std::string n = "#" + std::to_string(seq);
  if (c.last_enqueued_seq < seq) return "not joined " + n;
  if (c.last_completed_seq < seq) return "waiting in " + n;
  return "completed " + n;
}

// Threads blocked in a CUDA sync come first, then the main thread, then the rest.
std::vector<const dump::NativeThread*> OrderThreads(const dump::RankDump& d) {
  std::set<int32_t> syncing;
  for (const auto& s : d.host_syncs) syncing.insert(s.tid);
  std::vector<const dump::NativeThread*> threads;
  for (const auto& t : d.threads) threads.push_back(&t);
  auto rank_of = [&](const dump::NativeThread* t) {
    return syncing.count(t->tid) ? 0 : t->tid == d.process.pid ? 1 : 2;
  };
  std::stable_sort(threads.begin(), threads.end(),
                   [&](const auto* a, const auto* b) { return rank_of(a) < rank_of(b); });
  return threads;
}

std::string ThreadTitle(const dump::RankDump& d, const dump::NativeThread& t) {
  std::string title = "thread " + std::to_string(t.tid) + " \"" + t.name + "\"";
  for (const auto& s : d.host_syncs) {
    if (s.tid == t.tid) title += " (blocked in " + detect::ToString(s.target) + " sync)";
  }
  if (!t.answered) title += " (did not answer; state " + t.state + ")";
  return title;
}

std::vector<ThreadStackView> ViewsOf(const dump::RankDump& d) {
  std::vector<ThreadStackView> views;
  size_t python = 0;
  for (const auto& t : d.python.threads) {
    if (python == kMaxThreadsPerRank) break;
    ThreadStackView v;
    v.python = true;
    v.title = "python thread " + std::to_string(t.thread_id) + (t.current ? " (current)" : "");
    v.frames = PythonUserFrames(t, kMaxFramesPerThread);
    if (v.frames.empty()) continue;
    views.push_back(std::move(v));
    ++python;
  }
  size_t native = 0;
  for (const auto* t : OrderThreads(d)) {
    if (native == kMaxThreadsPerRank) break;
    UserFrames frames = NativeUserFrames(*t, kMaxFramesPerThread);
    if (frames.frames.empty() && t->answered) continue;
    ThreadStackView v;
    v.title = ThreadTitle(d, *t);
    v.frames = std::move(frames.frames);
    v.hidden_frames = frames.hidden;
    views.push_back(std::move(v));
    ++native;
  }
  return views;
}

std::string Signature(const std::vector<ThreadStackView>& views) {
  std::string sig;
  for (const auto& v : views) {
    sig += v.python ? "P|" : "N|";
    for (const auto& f : v.frames) sig += f + "|";
    sig += "\n";
  }
  return sig;
}

}  // namespace

std::vector<RankRow> BuildRankRows(const CommTable& table, const ReportedVerdict& verdict) {
  std::vector<RankRow> rows;
  rows.reserve(table.nranks);
  for (int r = 0; r < table.nranks; ++r) {
    RankRow row;
    row.rank = r;
    auto it = table.ranks.find(r);
    if (it == table.ranks.end()) {
      row.state = "no dump";
      rows.push_back(std::move(row));
      continue;
    }
    const auto& d = *it->second.dump;
    const auto& c = *it->second.comm;
    row.has_dump = true;
    row.global_rank = d.process.global_rank;
    row.host = d.process.host;
    row.pid = d.process.pid;
    row.init_done = c.init_done_ns != 0;
    row.last_joined = c.last_enqueued_seq;
    row.last_completed = c.last_completed_seq;
    row.async_error = c.async_error;
    row.state = StateOf(c, verdict.seq);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<FingerprintRow> BuildFingerprints(const CommTable& table, uint64_t seq) {
  std::vector<FingerprintRow> rows;
  // At most five numbers. The bounds saturate instead of wrapping: with seq near 2^64,
  // "s <= seq + 2" wrapped and never became false.
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const uint64_t first = seq > 2 ? seq - 2 : 1;
  const uint64_t last = seq > kMax - 2 ? kMax : seq + 2;
  const uint64_t span = last - first;  // 0 to 4
  for (uint64_t i = 0; i <= span; ++i) {
    const uint64_t s = first + i;
    FingerprintRow row;
    row.seq = s;
    bool any = false;
    std::set<std::string> distinct;
    for (const auto& [rank, entry] : table.ranks) {
      FingerprintCell cell;
      cell.rank = rank;
      if (const auto* r = table.Record(rank, s)) {
        any = true;
        cell.known = true;
        cell.op = r->op;
        cell.count = r->count;
        cell.datatype = r->datatype;
        cell.redop = r->redop;
        cell.root = r->root;
        distinct.insert(r->op + "/" + std::to_string(r->count) + "/" + std::to_string(r->datatype) + "/" +
                        std::to_string(r->redop) + "/" + std::to_string(r->root));
      }
      row.cells.push_back(std::move(cell));
    }
    row.differs = distinct.size() > 1;
    if (any) rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<StackGroup> BuildStackGroups(const std::vector<std::pair<int, const dump::RankDump*>>& culprits,
                                         size_t max_groups) {
  std::vector<StackGroup> groups;
  std::map<std::string, size_t> by_signature;
  // One process may hold many culprit ranks (up to 2^20 comm entries in one dump): its
  // stacks are read once.
  std::unordered_map<const dump::RankDump*, std::string> signature_of;
  for (const auto& [rank, d] : culprits) {
    std::vector<ThreadStackView> views;
    auto known = signature_of.find(d);
    if (known == signature_of.end()) {
      views = ViewsOf(*d);
      known = signature_of.emplace(d, Signature(views)).first;
    }
    const std::string& sig = known->second;
    auto it = by_signature.find(sig);
    if (it != by_signature.end()) {
      groups[it->second].ranks.push_back(rank);
      continue;
    }
    if (groups.size() == max_groups) continue;
    StackGroup group;
    group.ranks.push_back(rank);
    group.where = d->process.host + ":" + std::to_string(d->process.pid);
    group.threads = std::move(views);
    if (!d->python.available) group.python_unavailable = d->python.reason;
    by_signature.emplace(sig, groups.size());
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace ncclwatch::analyze
