#include "core/analyze/evidence.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "core/analyze/thread_views.h"
#include "core/detect/replay_state.h"
#include "core/format/duration.h"
#include "core/format/hex.h"
#include "core/format/nccl_names.h"

namespace ncclwatch::analyze {
namespace {

// " issued at train.py:88 in step" when the dump has collective #seq's call site
// (NCCLWATCH_CALL_SITES=1), else empty.
std::string IssuedAt(const detect::CommFacts& c, uint64_t seq) {
  for (const auto& r : c.records) {
    if (r.seq == seq && !r.call_site.empty()) return " issued at " + r.call_site;
  }
  return {};
}

std::string StateOf(const detect::CommFacts& c, uint64_t seq) {
  if (c.init_done_ns == 0) return "init not done";
  if (seq == 0) return c.last_enqueued_seq > c.last_completed_seq ? "in flight" : "idle";
  std::string n = "#" + std::to_string(seq);
  if (c.last_enqueued_seq < seq) return "not joined " + n;
  if (c.last_completed_seq < seq) return "waiting in " + n + IssuedAt(c, seq);
  return "completed " + n;
}

// An age at the dump's detection time, nullopt when either time is unknown.
std::optional<uint64_t> AgeAtDump(const dump::RankDump& d, uint64_t then_ns) {
  const uint64_t now = d.incident.detected_mono_ns;
  if (then_ns == 0 || now == 0) return std::nullopt;
  return now > then_ns ? now - then_ns : 0;
}

// A verdict about replay `replay` of `graph`: where the rank stands in that graph's replays,
// and how long it has waited in the replay (its launch's age at the dump).
void DescribeReplays(const dump::RankDump& d, const detect::CommFacts& c, uint64_t graph, uint64_t replay,
                     RankRow* row) {
  const detect::ReplayProgress progress = detect::ProgressOf(c, graph);
  row->replays_launched = progress.launched;
  row->replays_completed = progress.completed;
  const std::string n = "replay " + std::to_string(replay);
  if (progress.launched < replay) {
    row->state = progress.known ? "not launched " + n : "launch of " + n + " unknown";
  } else if (progress.completed < replay) {
    row->state = "waiting in " + n;
    if (const detect::ReplayFacts* r = detect::FindReplay(c, graph, replay)) row->waiting_ns = AgeAtDump(d, r->enqueue_ns);
  } else {
    row->state = "completed " + n;
  }
}

// Processes whose thread views read alike share one stack group.
std::string Signature(const ThreadViews& views) {
  std::string sig;
  for (const auto& v : views.views) {
    sig += ThreadHeader(v) + "\n";
    for (const auto& f : v.frames) sig += FrameText(f) + "\n";
  }
  return sig;
}

}  // namespace

std::vector<RankRow> BuildRankRows(const CommTable& table, uint64_t seq, uint64_t graph) {
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
    row.state = StateOf(c, seq);
    // Its oldest incomplete collective, or the earliest kept one after it when that record
    // has been dropped (a lower bound on the wait). A hostile last_completed of 2^64-1 waits
    // in nothing (pending 0 would match every record).
    const uint64_t pending = row.last_completed + 1;
    uint64_t last_complete_ns = 0;
    std::optional<uint64_t> pending_enqueue;
    for (const auto& r : c.records) {
      last_complete_ns = std::max(last_complete_ns, r.complete_ns);
      if (r.seq >= pending && r.enqueue_ns != 0 && !pending_enqueue) pending_enqueue = r.enqueue_ns;
    }
    if (pending != 0 && c.last_enqueued_seq >= pending && pending_enqueue) row.waiting_ns = AgeAtDump(d, *pending_enqueue);
    row.last_progress_ns = AgeAtDump(d, last_complete_ns);
    if (graph != 0) {
      row.waiting_ns.reset();
      DescribeReplays(d, c, graph, seq, &row);
      for (const auto& r : c.replays) last_complete_ns = std::max(last_complete_ns, r.complete_ns);
      row.last_progress_ns = AgeAtDump(d, last_complete_ns);
    }
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
  std::set<std::pair<size_t, const dump::RankDump*>> members;  // (group, process): processes counted once
  for (const auto& [rank, d] : culprits) {
    ThreadViews views;
    auto known = signature_of.find(d);
    if (known == signature_of.end()) {
      views = BuildThreadViews(*d);
      known = signature_of.emplace(d, Signature(views)).first;
    }
    const std::string& sig = known->second;
    auto it = by_signature.find(sig);
    if (it != by_signature.end()) {
      groups[it->second].ranks.push_back(rank);
      if (members.emplace(it->second, d).second) ++groups[it->second].processes;
      continue;
    }
    if (groups.size() == max_groups) continue;
    StackGroup group;
    group.ranks.push_back(rank);
    group.where = d->process.host + ":" + std::to_string(d->process.pid);
    group.threads = std::move(views.views);
    group.threads_total = views.threads_total;
    group.threads_not_shown = views.threads_not_shown;
    if (!d->python.available) group.python_unavailable = d->python.reason;
    by_signature.emplace(sig, groups.size());
    members.emplace(groups.size(), d);
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace ncclwatch::analyze
