#include "core/dump/replay_json.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

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

namespace {

// Drops the oldest replays beyond `keep`, counting them as dropped: a rank with none of a
// graph is then not known to have launched none.
void DropOldest(detect::CommFacts* c, size_t keep) {
  if (c->replays.size() <= keep) return;
  const size_t drop = c->replays.size() - keep;
  c->replays.erase(c->replays.begin(), c->replays.begin() + static_cast<std::ptrdiff_t>(drop));
  c->replays_dropped = c->replays_dropped > UINT64_MAX - drop ? UINT64_MAX : c->replays_dropped + drop;
}

const ObjectSpec& ReplaySpec() {
  static const ObjectSpec spec([] {
    const auto set_ops = [](void* t, uint64_t v) {
      static_cast<detect::ReplayFacts*>(t)->ops = static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX));
    };
    FieldSpec op_names = StringArrayField<&detect::ReplayFacts::op_names>("op_names");
    op_names.set_string = [](void* t, const std::string& v) {  // the writer keeps the first 8
      auto* r = static_cast<detect::ReplayFacts*>(t);
      if (r->op_names.size() < 8) r->op_names.push_back(v);
    };
    return std::vector<FieldSpec>{
        HexField<&detect::ReplayFacts::graph>("graph", kRequired),
        U64Field<&detect::ReplayFacts::replay>("replay", kRequired),
        U64Field<&detect::ReplayFacts::first_seq>("first_seq"),
        U64Field<&detect::ReplayFacts::framework_seq>("framework_seq"),
        U64FieldTo("ops", set_ops),
        op_names,
        HexField<&detect::ReplayFacts::stream>("stream"),
        U64Field<&detect::ReplayFacts::enqueue_ns>("enqueue_ns"),
        U64Field<&detect::ReplayFacts::complete_ns>("complete_ns"),
        BoolField<&detect::ReplayFacts::failed>("failed"),
        BoolField<&detect::ReplayFacts::untracked>("untracked"),
    };
  }());
  return spec;
}

}  // namespace

void AppendReplayFields(std::vector<FieldSpec>* fields) {
  FieldSpec replays = ObjectArrayField<&detect::CommFacts::replays>("replays", &ReplaySpec());
  // Trimmed in halves while reading (O(1) per replay amortised), then to the newest
  // kMaxReplaysPerComm once the communicator's object ended (the check below).
  replays.leave = [](void* t) {
    auto* c = static_cast<detect::CommFacts*>(t);
    if (c->replays.size() >= 2 * kMaxReplaysPerComm) DropOldest(c, kMaxReplaysPerComm);
  };
  fields->push_back(replays);
  // Added, not stored: the reader may have dropped some before it meets the key.
  fields->push_back(U64FieldTo("replays_dropped", [](void* t, uint64_t v) {
    auto* c = static_cast<detect::CommFacts*>(t);
    c->replays_dropped = c->replays_dropped > UINT64_MAX - v ? UINT64_MAX : c->replays_dropped + v;
  }));
  fields->push_back(CheckField([](void* t, const KeptValues&) -> std::optional<CheckFailure> {
    DropOldest(static_cast<detect::CommFacts*>(t), kMaxReplaysPerComm);
    return std::nullopt;
  }));
}

}  // namespace ncclwatch::dump
