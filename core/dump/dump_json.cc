#include "core/dump/dump_json.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/detect/comm_lifecycle.h"
#include "core/detect/p2p_op.h"
#include "core/dump/checked_json.h"
#include "core/dump/records_in_order.h"
#include "core/dump/replay_json.h"
#include "core/format/hex.h"
#include "core/format/nccl_names.h"

namespace ncclwatch::dump {
namespace {

using nlohmann::json;
using format::FormatHex;

// Far beyond any real job; keeps a hostile dump from making the analyzer list billions of ranks.
constexpr int kMaxRanks = 1 << 20;
// Group numbers beyond this are clamped to it on reading (detect::RecordFacts::group is 32 bits).
constexpr uint64_t kMaxGroup = 0x10000;

// "stream", "event"; anything else is a device sync, as the classifier would read it.
detect::SyncTarget SyncTargetNamed(const std::string& name) {
  return name == "stream" ? detect::SyncTarget::kStream
         : name == "event" ? detect::SyncTarget::kEvent
                           : detect::SyncTarget::kDevice;
}

// ---- writing ----
// Each NCCL number goes out with its name beside it (issue 20: names, not numbers): `datatype` and
// `datatype_name`. The numbers stay the schema (readers and tools depend on them); the names are
// for a person reading the file and are never read back, so a dump without them still reads.

json ToJson(const detect::RecordFacts& r) {
  json out{{"seq", r.seq},         {"framework_seq", r.framework_seq}, {"op", r.op}, {"count", r.count},
           {"datatype", r.datatype}, {"datatype_name", format::DataTypeName(r.datatype)},
           {"redop", r.redop}, {"redop_name", format::RedOpName(r.redop)}, {"root", r.root},
           {"peer", r.peer},       {"stream", FormatHex(r.stream)}, {"group", r.group},
           {"enqueue_ns", r.enqueue_ns}, {"complete_ns", r.complete_ns},
           {"never_completes", r.never_completes},
           {"captured", r.captured},
           {"untracked", r.untracked}};
  if (!r.call_site.empty()) out["call_site"] = r.call_site;  // only with NCCLWATCH_CALL_SITES=1
  return out;
}

json ToJson(const detect::CommFacts& c) {
  json records = json::array();
  for (const detect::RecordFacts* r : RecordsInIssueOrder(c)) records.push_back(ToJson(*r));
  json out{{"comm", FormatHex(c.comm_hash)},
              {"comm_name", c.name},
              {"rank", c.rank},
              {"nranks", c.nranks},
              {"device", c.device},
              {"init_started_ns", c.init_started_ns},
              {"init_done_ns", c.init_done_ns},
              {"last_enqueued_seq", c.last_enqueued_seq},
              {"last_completed_seq", c.last_completed_seq},
              {"async_error", c.async_error},
              {"async_error_name", format::NcclResultName(c.async_error)},
              {"lifecycle", std::string(detect::ToString(c.lifecycle))},
              {"left", c.left()},  // what readers before "lifecycle" judge by
              {"untracked_ops", c.untracked_ops},
              {"derived", c.derived},
              {"records", std::move(records)}};
  AddReplaysJson(c, &out);  // CUDA graph replays (shm layout 8)
  return out;
}

json ToJson(const NativeThread& t) {
  json frames = json::array();
  for (const auto& f : t.frames) {
    frames.push_back(json{{"pc", FormatHex(f.pc)},
                          {"function", f.function},
                          {"module", f.module},
                          {"offset", FormatHex(f.offset)},
                          {"internal", f.internal}});
  }
  return json{{"tid", t.tid},
              {"name", t.name},
              {"state", t.state},
              {"answered", t.answered},
              {"frames", std::move(frames)}};
}

json ToJson(const PythonStacks& p) {
  json threads = json::array();
  for (const auto& t : p.threads) {
    json frames = json::array();
    for (const auto& f : t.frames) {
      frames.push_back(json{{"file", f.file}, {"line", f.line}, {"function", f.function}});
    }
    threads.push_back(json{{"thread_id", t.thread_id},
                           {"current", t.current},
                           {"frames", std::move(frames)}});
  }
  return json{{"available", p.available}, {"reason", p.reason}, {"threads", std::move(threads)}};
}

// ---- reading ----

void Read(const CheckedJson& n, Incident* out) {
  n.Get("id", &out->id, true);
  n.Get("trigger", &out->trigger);
  n.Get("job_id", &out->job_id);
  n.Get("detected_mono_ns", &out->detected_mono_ns);
  n.Get("detected_unix_ns", &out->detected_unix_ns);
  n.Get("detected_iso", &out->detected_iso);
}

void Read(const CheckedJson& n, LocalVerdict* out) {
  std::string kind;
  n.Get("kind", &kind, true);
  out->kind = detect::ParseVerdictKind(kind);  // nullopt: a kind this version does not know
  n.GetHex("comm", &out->comm_hash);
  n.Get("seq", &out->seq);
  n.Get("framework_seq", &out->framework_seq);  // absent before shm layout 6: 0, unknown
  n.Get("op", &out->op);
  n.Get("graph_label", &out->graph_label);  // absent before shm layout 8: not a replay
  n.Get("culprit_ranks", &out->culprit_ranks);
  n.Get("other_ranks", &out->other_ranks);
  n.Get("since_mono_ns", &out->since_mono_ns);
  n.Get("summary", &out->summary);
  n.Get("partial", &out->partial);
}

void Read(const CheckedJson& n, ProcessInfo* out) {
  n.Get("global_rank", &out->global_rank, true);
  n.Get("local_rank", &out->local_rank);
  n.Get("world_size", &out->world_size);
  n.Get("host", &out->host, true);
  n.Get("pid", &out->pid, true);
  n.Get("device", &out->device);
  n.Get("exe", &out->exe);
  n.Get("cmdline", &out->cmdline);
  n.Get("alive", &out->alive);  // version 2; a version 1 dump was written by its live process
  if (n.Has("attempt")) {  // absent before shm layout 7, and when the launcher gave none
    CheckedJson attempt = n.Child("attempt");
    attempt.Get("restart", &out->attempt.restart);
    attempt.Get("requeue", &out->attempt.requeue);
    if (out->attempt.restart < -1 || out->attempt.requeue < -1) CheckedJson::Fail(attempt.path(), "is out of range");
  }
  if (n.Has("exit")) {
    CheckedJson exit = n.Child("exit");
    exit.Get("recorded", &out->exit.recorded);
    exit.Get("status", &out->exit.status);
    exit.Get("signal", &out->exit.signal);
    exit.Get("exit_ns", &out->exit.exit_ns);
  }
  if (n.Has("os")) {
    CheckedJson os = n.Child("os");
    std::string state;
    os.Get("state", &state, true);
    if (state.size() != 1 || state[0] < 'A' || state[0] > 'z') CheckedJson::Fail(os.path() + ".state", "is not a process state letter");
    out->os.state = state[0];
    os.Get("wchan", &out->os.wchan);
    os.Get("kernel_stack", &out->os.kernel_stack);
  }
}

void Read(const CheckedJson& n, DumpWriter* out) {
  n.Get("pid", &out->pid, true);
  n.Get("host", &out->host);
  n.Get("global_rank", &out->global_rank);
}

void Read(const CheckedJson& n, Environment* out) {
  if (n.Has("nccl_env")) {
    CheckedJson env = n.Child("nccl_env");
    for (const auto& [key, value] : env.value().items()) {
      if (!value.is_string()) CheckedJson::Fail(env.path() + "." + key, "must be a string");
      out->nccl_env[key] = value.get<std::string>();
    }
  }
  n.Get("cuda_driver_version", &out->cuda_driver_version);
  n.Get("cuda_runtime_version", &out->cuda_runtime_version);
  n.Get("nccl_version", &out->nccl_version);
  n.Get("nvidia_driver", &out->nvidia_driver);
  n.Get("kernel_release", &out->kernel_release);
}

void Read(const CheckedJson& n, detect::RecordFacts* out) {
  n.Get("seq", &out->seq, true);
  n.Get("framework_seq", &out->framework_seq);  // absent before shm layout 6: 0, unknown
  n.Get("op", &out->op, true);
  n.Get("count", &out->count);
  n.Get("datatype", &out->datatype);
  n.Get("redop", &out->redop);
  n.Get("root", &out->root);
  n.Get("peer", &out->peer);
  n.GetHex("stream", &out->stream);
  uint64_t group = 0;  // absent before issue 19: 0 (not grouped)
  n.Get("group", &group);
  // The model numbers groups in 32 bits; a hostile value stays a group.
  out->group = static_cast<uint32_t>(std::min<uint64_t>(group, kMaxGroup));
  n.Get("enqueue_ns", &out->enqueue_ns);
  n.Get("complete_ns", &out->complete_ns);
  n.Get("never_completes", &out->never_completes);  // absent before 2026-11: false
  n.Get("captured", &out->captured);                // absent before shm layout 8: false
  n.Get("untracked", &out->untracked);
  n.Get("call_site", &out->call_site);  // absent unless NCCLWATCH_CALL_SITES=1  // absent before schema 2's untracked: false (it was folded into never_completes)
}

void Read(const CheckedJson& n, detect::CommFacts* out) {
  n.GetHex("comm", &out->comm_hash, true);
  n.Get("comm_name", &out->name);  // absent before layout 5's names: none
  n.Get("rank", &out->rank, true);
  n.Get("nranks", &out->nranks, true);
  if (out->nranks <= 0 || out->nranks > kMaxRanks) CheckedJson::Fail(n.path() + ".nranks", "is out of range");
  if (out->rank < 0 || out->rank >= out->nranks) {
    CheckedJson::Fail(n.path() + ".rank", "must be within [0, nranks)");
  }
  n.Get("device", &out->device);
  n.Get("init_started_ns", &out->init_started_ns);
  n.Get("init_done_ns", &out->init_done_ns);
  n.Get("last_enqueued_seq", &out->last_enqueued_seq);
  n.Get("last_completed_seq", &out->last_completed_seq);
  n.Get("async_error", &out->async_error);
  // "lifecycle" names the state; a dump without it says only whether the rank left.
  std::string lifecycle;
  bool left = false;
  n.Get("lifecycle", &lifecycle);
  n.Get("left", &left);  // version 2
  if (const std::optional<detect::CommLifecycle> known = detect::ParseCommLifecycle(lifecycle)) {
    out->lifecycle = *known;
  } else {
    out->lifecycle = left                    ? detect::CommLifecycle::kDestroyed
                     : out->init_done_ns == 0 ? detect::CommLifecycle::kInitializing
                                              : detect::CommLifecycle::kReady;
  }
  n.Get("untracked_ops", &out->untracked_ops);  // version 2
  n.Get("derived", &out->derived);              // absent before shm layout 7: a root communicator
  // One list on disk; the model keeps P2P ops apart (their numbers count per peer).
  for (const CheckedJson& r : n.Elements("records")) {
    detect::RecordFacts record;
    Read(r, &record);
    (detect::IsPointToPoint(record.op) ? out->p2p_records : out->records).push_back(std::move(record));
  }
  ReadReplaysJson(n, out);  // absent before shm layout 8: none
}

void Read(const CheckedJson& n, detect::SyncFacts* out) {
  n.Get("tid", &out->tid);
  n.Get("since_ns", &out->blocked_since_ns, true);
  std::string target;
  n.Get("target", &target);
  out->target = SyncTargetNamed(target);
  std::string api;
  n.Get("api", &api);
  out->api = api == "driver" ? detect::SyncApi::kDriver : detect::SyncApi::kRuntime;
  n.GetHex("handle", &out->handle);
}

void Read(const CheckedJson& n, NativeThread* out) {
  n.Get("tid", &out->tid, true);
  n.Get("name", &out->name);
  n.Get("state", &out->state);
  n.Get("answered", &out->answered);
  for (const CheckedJson& f : n.Elements("frames")) {
    NativeFrame& frame = out->frames.emplace_back();
    f.GetHex("pc", &frame.pc);
    f.Get("function", &frame.function);
    f.Get("module", &frame.module);
    f.GetHex("offset", &frame.offset);
    f.Get("internal", &frame.internal);
  }
}

void Read(const CheckedJson& n, PythonStacks* out) {
  n.Get("available", &out->available);
  n.Get("reason", &out->reason);
  for (const CheckedJson& t : n.Elements("threads")) {
    PythonThread& thread = out->threads.emplace_back();
    t.Get("thread_id", &thread.thread_id);
    t.Get("current", &thread.current);
    for (const CheckedJson& f : t.Elements("frames")) {
      PythonFrame& frame = thread.frames.emplace_back();
      f.Get("file", &frame.file);
      f.Get("line", &frame.line);
      f.Get("function", &frame.function);
    }
  }
}

}  // namespace

nlohmann::json ToJson(const RankDump& d) {
  json comms = json::array();
  for (const auto& c : d.comms) comms.push_back(ToJson(c));
  json syncs = json::array();
  for (const auto& s : d.host_syncs) {
    syncs.push_back(json{{"tid", s.tid},
                         {"since_ns", s.blocked_since_ns},
                         {"target", detect::ToString(s.target)},
                         {"api", detect::ToString(s.api)},
                         {"handle", FormatHex(s.handle)}});
  }
  json threads = json::array();
  for (const auto& t : d.threads) threads.push_back(ToJson(t));
  json nccl_env = json::object();
  for (const auto& [k, v] : d.environment.nccl_env) nccl_env[k] = v;
  const auto& v = d.verdict;
  const auto& p = d.process;
  const auto& e = d.environment;
  json process = {{"global_rank", p.global_rank}, {"local_rank", p.local_rank}, {"world_size", p.world_size},
                  {"host", p.host},               {"pid", p.pid},               {"device", p.device},
                  {"exe", p.exe},                 {"cmdline", p.cmdline},       {"alive", p.alive}};
  if (p.attempt.known()) process["attempt"] = {{"restart", p.attempt.restart}, {"requeue", p.attempt.requeue}};
  if (!p.alive) {
    process["exit"] = {{"recorded", p.exit.recorded}, {"status", p.exit.status}, {"signal", p.exit.signal},
                       {"exit_ns", p.exit.exit_ns}};
  }
  if (p.os.state != 0) {
    process["os"] = {{"state", std::string(1, p.os.state)}, {"wchan", p.os.wchan}, {"kernel_stack", p.os.kernel_stack}};
  }
  // nlohmann::ordered_json is not used: key order does not matter to readers, and the
  // default json sorts keys, which keeps files diffable.
  json doc = json{
      {"schema", kSchemaName},
      {"version", kSchemaVersion},
      {"incident", {{"id", d.incident.id}, {"trigger", d.incident.trigger}, {"job_id", d.incident.job_id},
                    {"detected_mono_ns", d.incident.detected_mono_ns},
                    {"detected_unix_ns", d.incident.detected_unix_ns},
                    {"detected_iso", d.incident.detected_iso}}},
      {"verdict", {{"kind", detect::ToString(v.kind)}, {"comm", FormatHex(v.comm_hash)}, {"seq", v.seq},
                   {"framework_seq", v.framework_seq}, {"op", v.op}, {"graph_label", v.graph_label},
                   {"culprit_ranks", v.culprit_ranks},
                   {"other_ranks", v.other_ranks}, {"since_mono_ns", v.since_mono_ns}, {"summary", v.summary}, {"partial", v.partial}}},
      {"process", std::move(process)},
      {"environment", {{"nccl_env", std::move(nccl_env)},
                       {"cuda_driver_version", e.cuda_driver_version},
                       {"cuda_driver_version_text", format::CudaVersionText(e.cuda_driver_version)},
                       {"cuda_runtime_version", e.cuda_runtime_version},
                       {"cuda_runtime_version_text", format::CudaVersionText(e.cuda_runtime_version)},
                       {"nccl_version", e.nccl_version},
                       {"nccl_version_text", format::NcclVersionText(e.nccl_version)},
                       {"nvidia_driver", e.nvidia_driver}, {"kernel_release", e.kernel_release}}},
      {"comms", std::move(comms)},
      {"host_syncs", std::move(syncs)},
      {"native_stacks", {{"threads", std::move(threads)}, {"errors", d.stack_errors}}},
      {"python_stacks", ToJson(d.python)},
  };
  if (d.written_by.pid != 0) {
    doc["written_by"] = {{"pid", d.written_by.pid}, {"host", d.written_by.host},
                         {"global_rank", d.written_by.global_rank}};
  }
  return doc;
}

RankDump FromJson(const nlohmann::json& doc) {
  CheckSchemaHeader(doc, kSchemaName, kSchemaVersion, "dump");
  CheckedJson root(doc);
  RankDump d;
  root.Get("version", &d.version);
  Read(root.Child("incident"), &d.incident);
  if (root.Has("verdict")) Read(root.Child("verdict"), &d.verdict);
  Read(root.Child("process"), &d.process);
  if (root.Has("written_by")) Read(root.Child("written_by"), &d.written_by);
  if (root.Has("environment")) Read(root.Child("environment"), &d.environment);
  for (const CheckedJson& c : root.Elements("comms")) Read(c, &d.comms.emplace_back());
  for (const CheckedJson& s : root.Elements("host_syncs")) Read(s, &d.host_syncs.emplace_back());
  if (root.Has("native_stacks")) {
    CheckedJson stacks = root.Child("native_stacks");
    for (const CheckedJson& t : stacks.Elements("threads")) Read(t, &d.threads.emplace_back());
    stacks.Get("errors", &d.stack_errors);
  }
  if (root.Has("python_stacks")) Read(root.Child("python_stacks"), &d.python);
  return d;
}

}  // namespace ncclwatch::dump
