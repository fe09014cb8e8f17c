#include "core/dump/replay_json.h"

#include <algorithm>

#include "core/format/hex.h"

namespace ncclwatch::dump {

void AddReplaysJson(const detect::CommFacts& comm, nlohmann::json* out) {
  nlohmann::json replays = nlohmann::json::array();
  for (const detect::ReplayFacts& r : comm.replays) {
    replays.push_back(nlohmann::json{{"graph", format::FormatHex(r.graph)},
                                     {"replay", r.replay},
                                     {"first_seq", r.first_seq},
                                     {"framework_seq", r.framework_seq},
                                     {"ops", r.ops},
                                     {"op_names", r.op_names},
                                     {"stream", format::FormatHex(r.stream)},
                                     {"enqueue_ns", r.enqueue_ns},
                                     {"complete_ns", r.complete_ns},
                                     {"failed", r.failed},
                                     {"untracked", r.untracked}});
  }
  (*out)["replays"] = std::move(replays);
  (*out)["replays_dropped"] = comm.replays_dropped;
}

void ReadReplaysJson(const CheckedJson& n, detect::CommFacts* out) {
  n.Get("replays_dropped", &out->replays_dropped);
  for (const CheckedJson& r : n.Elements("replays")) {
    detect::ReplayFacts replay;
    r.GetHex("graph", &replay.graph, true);
    r.Get("replay", &replay.replay, true);
    r.Get("first_seq", &replay.first_seq);
    r.Get("framework_seq", &replay.framework_seq);
    uint64_t ops = 0;
    r.Get("ops", &ops);
    replay.ops = static_cast<uint32_t>(std::min<uint64_t>(ops, UINT32_MAX));
    r.Get("op_names", &replay.op_names);
    if (replay.op_names.size() > 8) replay.op_names.resize(8);
    r.GetHex("stream", &replay.stream);
    r.Get("enqueue_ns", &replay.enqueue_ns);
    r.Get("complete_ns", &replay.complete_ns);
    r.Get("failed", &replay.failed);
    r.Get("untracked", &replay.untracked);
    out->replays.push_back(std::move(replay));
  }
  if (out->replays.size() > kMaxReplaysPerComm) {
    out->replays.erase(out->replays.begin(),
                       out->replays.end() - static_cast<std::ptrdiff_t>(kMaxReplaysPerComm));
    out->replays_dropped += 1;  // some were dropped: a rank with none of a graph is not known to have launched none
  }
}

}  // namespace ncclwatch::dump
