#include "core/analyze/trace.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/detect/replay_state.h"
#include "core/dump/records_in_order.h"
#include "core/format/comm_label.h"
#include "core/format/hex.h"
#include "core/format/nccl_names.h"
#include "core/format/rank_list.h"

namespace ncclwatch::analyze {
namespace {

using nlohmann::json;

// Times from dumps are untrusted input. Real ones fit int64 easily (2^63 ns is 292 years of
// uptime or wall clock since 1970), but a hostile dump may hold any uint64, and the
// differences below of two such values overflowed int64 (undefined behaviour). So every time
// enters as an int64 clamped to [0, INT64_MAX] and all arithmetic saturates: hostile values
// land at the ends of the axis instead of wrapping around.
constexpr int64_t kMaxTime = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinTime = std::numeric_limits<int64_t>::min();

int64_t ToTime(uint64_t ns) { return ns > static_cast<uint64_t>(kMaxTime) ? kMaxTime : static_cast<int64_t>(ns); }

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? kMaxTime : kMinTime;
}

int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t difference;
  if (!__builtin_sub_overflow(a, b, &difference)) return difference;
  return b < 0 ? kMaxTime : kMinTime;
}

// Per-host offset added to monotonic ns to get a job-wide time axis.
using Offsets = std::map<std::string, int64_t>;
using DumpsByHost = std::map<std::string, std::vector<const dump::RankDump*>>;

Offsets WallClockOffsets(const std::vector<const dump::RankDump*>& dumps) {
  Offsets offsets;
  for (const auto* d : dumps) {
    const auto& i = d->incident;
    offsets.emplace(d->process.host, SaturatingSub(ToTime(i.detected_unix_ns), ToTime(i.detected_mono_ns)));
  }
  return offsets;
}

// (comm, seq) -> latest completion time on the host, in monotonic ns of that host.
std::map<std::pair<uint64_t, uint64_t>, uint64_t> Completions(const std::vector<const dump::RankDump*>& host_dumps) {
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> out;
  for (const auto* d : host_dumps) {
    for (const auto& c : d->comms) {
      for (const detect::RecordFacts* record : dump::RecordsInIssueOrder(c)) {
        const auto& r = *record;
        if (r.complete_ns == 0) continue;
        uint64_t& slot = out[{c.comm_hash, r.seq}];
        slot = std::max(slot, r.complete_ns);
      }
    }
  }
  return out;
}

// Each host's dumps are visited once: linear in records, whatever the number of hosts.
void AlignByCollectives(const DumpsByHost& by_host, Offsets* offsets) {
  if (offsets->size() < 2) return;
  const std::string& reference = offsets->begin()->first;
  const int64_t reference_offset = offsets->at(reference);
  auto ref = Completions(by_host.at(reference));
  for (auto& [host, offset] : *offsets) {
    if (host == reference) continue;
    std::vector<int64_t> deltas;
    for (const auto& [key, t] : Completions(by_host.at(host))) {
      auto it = ref.find(key);
      if (it == ref.end()) continue;
      int64_t ref_time = SaturatingAdd(ToTime(it->second), reference_offset);
      deltas.push_back(SaturatingSub(ref_time, SaturatingAdd(ToTime(t), offset)));
    }
    if (deltas.empty()) continue;
    std::nth_element(deltas.begin(), deltas.begin() + deltas.size() / 2, deltas.end());
    offset = SaturatingAdd(offset, deltas[deltas.size() / 2]);
  }
}

struct Track {
  const dump::RankDump* dump;
  bool culprit;
};

// `culprits` holds every culprit of `v`: a set, since both it and the dumps can number 2^20.
bool IsCulprit(const dump::RankDump& d, const detect::Verdict& v, const std::unordered_set<int>& culprits) {
  if (v.kind == detect::VerdictKind::kNone) return false;
  if (v.kind == detect::VerdictKind::kSyncStuck) return culprits.count(d.process.global_rank) != 0;
  for (const auto& c : d.comms) {
    if (c.comm_hash == v.comm_hash && culprits.count(c.rank)) return true;
  }
  return false;
}

json Meta(const char* name, int pid, int tid, json args) {
  return json{{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"ts", 0}, {"args", std::move(args)}};
}

// "rank G" for a process holding one rank; a process driving several ranks (ncclCommInitAll,
// a group init over several devices) shows the ranks of its largest communicator, "ranks 0-3".
std::string TrackName(const dump::RankDump& d) {
  const detect::CommFacts* largest = nullptr;
  for (const auto& c : d.comms) {
    if (!largest || c.nranks > largest->nranks) largest = &c;
  }
  std::vector<int> ranks;
  for (const auto& c : d.comms) {
    if (largest && c.comm_hash == largest->comm_hash) ranks.push_back(c.rank);
  }
  if (ranks.size() < 2) return "rank " + std::to_string(d.process.global_rank);
  return format::FormatRanks(ranks);
}

// The lane of a collective a rank never issued (it has no stream): no stream handle is ~0.
constexpr uint64_t kNotIssuedLane = ~uint64_t{0};

}  // namespace

nlohmann::json BuildTrace(const std::vector<const dump::RankDump*>& dumps, const detect::Verdict& verdict) {
  Offsets offsets = WallClockOffsets(dumps);
  DumpsByHost by_host;
  for (const auto* d : dumps) by_host[d->process.host].push_back(d);
  AlignByCollectives(by_host, &offsets);
  auto aligned = [&](const dump::RankDump& d, uint64_t mono) {
    return SaturatingAdd(ToTime(mono), offsets.at(d.process.host));
  };

  const std::vector<int> culprit_ranks = detect::AllCulpritRanks(verdict);
  const std::unordered_set<int> culprits(culprit_ranks.begin(), culprit_ranks.end());
  std::vector<Track> tracks;
  for (const auto* d : dumps) tracks.push_back(Track{d, IsCulprit(*d, verdict, culprits)});
  std::stable_sort(tracks.begin(), tracks.end(), [](const Track& a, const Track& b) {
    if (a.culprit != b.culprit) return a.culprit;
    return a.dump->process.global_rank < b.dump->process.global_rank;
  });

  int64_t origin = INT64_MAX;
  for (const auto& t : tracks) {
    for (const auto& c : t.dump->comms) {
      for (const detect::RecordFacts* record : dump::RecordsInIssueOrder(c)) {
        const auto& r = *record;
        if (r.enqueue_ns) origin = std::min(origin, aligned(*t.dump, r.enqueue_ns));
      }
      for (const detect::ReplayFacts& r : c.replays) {
        if (r.enqueue_ns) origin = std::min(origin, aligned(*t.dump, r.enqueue_ns));
      }
    }
    origin = std::min(origin, aligned(*t.dump, t.dump->incident.detected_mono_ns));
  }
  auto micros = [&](int64_t ns) { return static_cast<double>(SaturatingSub(ns, origin)) / 1000.0; };

  // When the verdict's collective first began anywhere: where a straggler's missing span starts.
  // Once, over every record: per culprit would be quadratic in communicators (hostile dumps).
  std::optional<int64_t> verdict_first_in;
  if (verdict.kind == detect::VerdictKind::kStraggler && verdict.seq != 0 && verdict.graph == 0) {
    for (const auto& t : tracks) {
      for (const auto& other : t.dump->comms) {
        if (other.comm_hash != verdict.comm_hash) continue;
        for (const detect::RecordFacts* record : dump::RecordsInIssueOrder(other)) {
          const auto& r = *record;
          if (r.seq != verdict.seq || r.enqueue_ns == 0 || r.peer >= 0) continue;
          const int64_t at = aligned(*t.dump, r.enqueue_ns);
          if (!verdict_first_in || at < *verdict_first_in) verdict_first_in = at;
        }
      }
    }
  }

  json events = json::array();
  for (size_t i = 0; i < tracks.size(); ++i) {
    const auto& d = *tracks[i].dump;
    int pid = static_cast<int>(i) + 1;
    std::string name = TrackName(d) + " (" + d.process.host + ":" + std::to_string(d.process.pid) + ")";
    if (tracks[i].culprit) name += " CULPRIT " + detect::ToString(verdict.kind);
    events.push_back(Meta("process_name", pid, 0, {{"name", name}}));
    events.push_back(Meta("process_sort_index", pid, 0, {{"sort_index", static_cast<int>(i)}}));
    int64_t detected = aligned(d, d.incident.detected_mono_ns);
    int next_tid = 1;
    for (size_t ci = 0; ci < d.comms.size(); ++ci) {
      const auto& c = d.comms[ci];
      const std::string comm_name =
          "comm " + format::CommLabel(c.comm_hash, c.name) + " rank " + std::to_string(c.rank) + "/" + std::to_string(c.nranks);
      // One lane per stream: NCCL runs a communicator's ops on a stream one after another, so
      // each is drawn from when it could start (its enqueue, or the previous op's completion
      // when it was queued behind it: args.queued_us) to its completion. Lanes then never hold
      // overlapping spans, and ops on different streams, which may truly overlap, have lanes of
      // their own. A communicator on one stream keeps its plain name.
      const std::vector<const detect::RecordFacts*> records = dump::RecordsInIssueOrder(c);
      std::set<uint64_t> streams;
      for (const detect::RecordFacts* r : records) streams.insert(r->stream);
      struct Lane {
        int tid;
        int64_t end;  // of its last span
      };
      // The lane of `stream` in `lanes`, named comm_name + `suffix` when it is made.
      auto lane_in = [&](std::map<uint64_t, Lane>& lanes, uint64_t stream, const std::string& suffix) -> Lane& {
        auto it = lanes.find(stream);
        if (it != lanes.end()) return it->second;
        const int tid = next_tid++;
        events.push_back(Meta("thread_name", pid, tid, {{"name", comm_name + suffix}}));
        return lanes.emplace(stream, Lane{tid, INT64_MIN}).first->second;
      };
      auto stream_suffix = [&](uint64_t stream) {
        return streams.size() > 1 ? " stream " + format::StreamText(stream) : std::string();
      };
      std::map<uint64_t, Lane> lanes;  // by stream
      auto lane_of = [&](uint64_t stream, const std::string& suffix) -> Lane& { return lane_in(lanes, stream, suffix); };
      auto stream_lane = [&](uint64_t stream) -> Lane& { return lane_of(stream, stream_suffix(stream)); };
      // A graph's replays run in launch order on their stream: lanes of their own, per stream.
      std::map<uint64_t, Lane> replay_lanes;
      auto replay_lane = [&](uint64_t stream) -> Lane& {
        return lane_in(replay_lanes, stream, " replays" + stream_suffix(stream));
      };
      if (records.empty() && c.replays.empty()) stream_lane(0);
      bool has_verdict_op = false;
      for (const detect::RecordFacts* record : records) {
        const detect::RecordFacts& r = *record;
        if (r.enqueue_ns == 0) continue;
        const int64_t enqueued = aligned(d, r.enqueue_ns);
        Lane& lane = stream_lane(r.stream);
        const int64_t start = r.captured ? enqueued : std::max(enqueued, lane.end);
        bool done = r.complete_ns != 0;
        // A completion before the start (corrupt or hostile clocks, or several ops seen complete
        // by one tracker poll) draws as zero length: trace viewers reject negative durations. A
        // captured op runs only in its graph's replays (drawn below): an instant at its capture,
        // which holds no place in the lane.
        const int64_t end = r.captured ? start : std::max(start, done ? aligned(d, r.complete_ns) : detected);
        if (!r.captured) lane.end = end;
        bool at_verdict = c.comm_hash == verdict.comm_hash && r.seq == verdict.seq && verdict.graph == 0;
        has_verdict_op = has_verdict_op || at_verdict;
        // Args are read by people in a trace viewer: names, not NCCL's enum numbers.
        json args{{"seq", r.seq},
                  {"count", r.count},
                  {"datatype", format::DataTypeName(r.datatype)},
                  {"redop", format::RedOpName(r.redop)},
                  {"root", format::RankOrNone(r.root)},
                  {"peer", format::RankOrNone(r.peer)},
                  {"stream", format::StreamText(r.stream)},
                  {"queued_us", static_cast<double>(SaturatingSub(start, enqueued)) / 1000.0},
                  {"complete", done}};
        json span{{"ph", "X"},
                  {"name", r.op + " #" + std::to_string(r.seq) + (r.captured ? " (captured)" : done ? "" : " (incomplete)")},
                  {"cat", "collective"}, {"pid", pid}, {"tid", lane.tid}, {"ts", micros(start)},
                  {"dur", static_cast<double>(SaturatingSub(end, start)) / 1000.0}, {"args", std::move(args)}};
        if (at_verdict && tracks[i].culprit) span["cname"] = "terrible";
        events.push_back(std::move(span));
      }
      // Each launch of a CUDA graph that replayed ops of this communicator: from the launch to
      // its completion (or the dump).
      for (const detect::ReplayFacts& r : c.replays) {
        if (r.enqueue_ns == 0 || r.failed) continue;
        Lane& lane = replay_lane(r.stream);
        const int64_t start = std::max(aligned(d, r.enqueue_ns), lane.end);
        const bool done = r.complete_ns != 0;
        const int64_t end = std::max(start, done ? aligned(d, r.complete_ns) : detected);
        lane.end = end;
        const bool at_verdict = c.comm_hash == verdict.comm_hash && r.graph == verdict.graph && r.replay == verdict.seq;
        json span{{"ph", "X"},
                  {"name", "replay " + std::to_string(r.replay) + " [" + detect::GraphOpsText(r) + "]" +
                               (done ? "" : " (incomplete)")},
                  {"cat", "replay"}, {"pid", pid}, {"tid", lane.tid}, {"ts", micros(start)},
                  {"dur", static_cast<double>(SaturatingSub(end, start)) / 1000.0},
                  {"args", {{"replay", r.replay},
                            {"graph", format::FormatHex(r.graph)},
                            {"graph_label", detect::GraphLabel(r, c.comm_hash)},
                            {"framework_seq", r.framework_seq},
                            {"stream", format::StreamText(r.stream)},
                            {"complete", done}}}};
        if (at_verdict && tracks[i].culprit) span["cname"] = "terrible";
        events.push_back(std::move(span));
      }
      // The collective a culprit never issued, drawn where it is missing: from the moment the
      // first rank entered it until this rank's dump.
      if (tracks[i].culprit && c.comm_hash == verdict.comm_hash && verdict.seq != 0 && !has_verdict_op) {
        const std::optional<int64_t>& first_in = verdict_first_in;
        if (first_in && *first_in <= detected) {
          json span{{"ph", "X"}, {"name", verdict.op + " #" + std::to_string(verdict.seq) + " (never issued)"},
                    {"cat", "missing"}, {"pid", pid}, {"tid", lane_of(kNotIssuedLane, " (not issued)").tid},
                    {"ts", micros(*first_in)}, {"dur", static_cast<double>(detected - *first_in) / 1000.0},
                    {"cname", "terrible"}, {"args", {{"seq", verdict.seq}, {"issued", false}}}};
          events.push_back(std::move(span));
        }
      }
    }
    if (tracks[i].culprit) {
      std::string label = "culprit: " + detect::ToString(verdict.kind) +
                          (detect::AboutReplay(verdict) ? " replay " + std::to_string(verdict.seq) + " of " + verdict.graph_label
                                              : (verdict.seq ? " #" + std::to_string(verdict.seq) : "") +
                                                    (verdict.op.empty() ? "" : " " + verdict.op));
      events.push_back(json{{"ph", "i"}, {"s", "p"}, {"name", label}, {"cat", "verdict"}, {"pid", pid},
                            {"tid", 0}, {"ts", micros(detected)}, {"args", {{"summary", verdict.summary}}}});
    }
  }
  return json{{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ms"},
              {"otherData", {{"generator", "ncclwatch trace"}, {"verdict", detect::ToString(verdict.kind)},
                             {"summary", verdict.summary}}}};
}

}  // namespace ncclwatch::analyze
