#include "core/analyze/trace.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"

namespace ncclwatch::analyze {
namespace {

using nlohmann::json;

// Per-host offset added to monotonic ns to get a job-wide time axis.
using Offsets = std::map<std::string, int64_t>;

Offsets WallClockOffsets(const std::vector<const dump::RankDump*>& dumps) {
  Offsets offsets;
  for (const auto* d : dumps) {
    const auto& i = d->incident;
    offsets.emplace(d->process.host, static_cast<int64_t>(i.detected_unix_ns) - static_cast<int64_t>(i.detected_mono_ns));
  }
  return offsets;
}

// (comm, seq) -> latest completion time on the host, in monotonic ns of that host.
std::map<std::pair<uint64_t, uint64_t>, uint64_t> Completions(const std::vector<const dump::RankDump*>& dumps,
                                                             const std::string& host) {
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> out;
  for (const auto* d : dumps) {
    if (d->process.host != host) continue;
    for (const auto& c : d->comms) {
      for (const auto& r : c.records) {
        if (r.complete_ns == 0) continue;
        uint64_t& slot = out[{c.comm_hash, r.seq}];
        slot = std::max(slot, r.complete_ns);
      }
    }
  }
  return out;
}

void AlignByCollectives(const std::vector<const dump::RankDump*>& dumps, Offsets* offsets) {
  if (offsets->size() < 2) return;
  const std::string& reference = offsets->begin()->first;
  auto ref = Completions(dumps, reference);
  for (auto& [host, offset] : *offsets) {
    if (host == reference) continue;
    std::vector<int64_t> deltas;
    for (const auto& [key, t] : Completions(dumps, host)) {
      auto it = ref.find(key);
      if (it == ref.end()) continue;
      int64_t ref_time = static_cast<int64_t>(it->second) + offsets->at(reference);
      deltas.push_back(ref_time - (static_cast<int64_t>(t) + offset));
    }
    if (deltas.empty()) continue;
    std::nth_element(deltas.begin(), deltas.begin() + deltas.size() / 2, deltas.end());
    offset += deltas[deltas.size() / 2];
  }
}

struct Track {
  const dump::RankDump* dump;
  bool culprit;
};

bool IsCulprit(const dump::RankDump& d, const MergedVerdict& v) {
  if (v.kind == "none") return false;
  if (v.kind == "sync_stuck") {
    return std::find(v.ranks.begin(), v.ranks.end(), d.process.global_rank) != v.ranks.end();
  }
  for (const auto& c : d.comms) {
    if (c.comm_hash == v.comm_hash && std::find(v.ranks.begin(), v.ranks.end(), c.rank) != v.ranks.end()) return true;
  }
  return false;
}

json Meta(const char* name, int pid, int tid, json args) {
  return json{{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"ts", 0}, {"args", std::move(args)}};
}

}  // namespace

nlohmann::json BuildTrace(const std::vector<const dump::RankDump*>& dumps, const MergedVerdict& verdict) {
  Offsets offsets = WallClockOffsets(dumps);
  AlignByCollectives(dumps, &offsets);
  auto aligned = [&](const dump::RankDump& d, uint64_t mono) {
    return static_cast<int64_t>(mono) + offsets.at(d.process.host);
  };

  std::vector<Track> tracks;
  for (const auto* d : dumps) tracks.push_back(Track{d, IsCulprit(*d, verdict)});
  std::stable_sort(tracks.begin(), tracks.end(), [](const Track& a, const Track& b) {
    if (a.culprit != b.culprit) return a.culprit;
    return a.dump->process.global_rank < b.dump->process.global_rank;
  });

  int64_t origin = INT64_MAX;
  for (const auto& t : tracks) {
    for (const auto& c : t.dump->comms) {
      for (const auto& r : c.records) {
        if (r.enqueue_ns) origin = std::min(origin, aligned(*t.dump, r.enqueue_ns));
      }
    }
    origin = std::min(origin, aligned(*t.dump, t.dump->incident.detected_mono_ns));
  }
  auto micros = [&](int64_t ns) { return static_cast<double>(ns - origin) / 1000.0; };

  json events = json::array();
  for (size_t i = 0; i < tracks.size(); ++i) {
    const auto& d = *tracks[i].dump;
    int pid = static_cast<int>(i) + 1;
    std::string name = "rank " + std::to_string(d.process.global_rank) + " (" + d.process.host + ":" +
                       std::to_string(d.process.pid) + ")";
    if (tracks[i].culprit) name += " CULPRIT " + verdict.kind;
    events.push_back(Meta("process_name", pid, 0, {{"name", name}}));
    events.push_back(Meta("process_sort_index", pid, 0, {{"sort_index", static_cast<int>(i)}}));
    int64_t detected = aligned(d, d.incident.detected_mono_ns);
    for (size_t ci = 0; ci < d.comms.size(); ++ci) {
      const auto& c = d.comms[ci];
      int tid = static_cast<int>(ci) + 1;
      events.push_back(Meta("thread_name", pid, tid,
                            {{"name", "comm " + dump::FormatHex(c.comm_hash) + " rank " + std::to_string(c.rank) +
                                          "/" + std::to_string(c.nranks)}}));
      for (const auto& r : c.records) {
        if (r.enqueue_ns == 0) continue;
        int64_t start = aligned(d, r.enqueue_ns);
        bool done = r.complete_ns != 0;
        int64_t end = done ? aligned(d, r.complete_ns) : std::max(start, detected);
        bool at_verdict = c.comm_hash == verdict.comm_hash && r.seq == verdict.seq;
        json args{{"seq", r.seq}, {"count", r.count}, {"datatype", r.datatype}, {"redop", r.redop},
                  {"root", r.root}, {"peer", r.peer}, {"stream", dump::FormatHex(r.stream)},
                  {"complete", done}};
        json span{{"ph", "X"}, {"name", r.op + " #" + std::to_string(r.seq) + (done ? "" : " (incomplete)")},
                  {"cat", "collective"}, {"pid", pid}, {"tid", tid}, {"ts", micros(start)},
                  {"dur", static_cast<double>(end - start) / 1000.0}, {"args", std::move(args)}};
        if (at_verdict && tracks[i].culprit) span["cname"] = "terrible";
        events.push_back(std::move(span));
      }
    }
    if (tracks[i].culprit) {
      std::string label = "culprit: " + verdict.kind + (verdict.seq ? " #" + std::to_string(verdict.seq) : "") +
                          (verdict.op.empty() ? "" : " " + verdict.op);
      events.push_back(json{{"ph", "i"}, {"s", "p"}, {"name", label}, {"cat", "verdict"}, {"pid", pid},
                            {"tid", 0}, {"ts", micros(detected)}, {"args", {{"summary", verdict.summary}}}});
    }
  }
  return json{{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ms"},
              {"otherData", {{"generator", "ncclwatch trace"}, {"verdict", verdict.kind},
                             {"summary", verdict.summary}}}};
}

}  // namespace ncclwatch::analyze
