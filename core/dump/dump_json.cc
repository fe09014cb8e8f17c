#include "core/dump/dump_json.h"

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/detect/comm_lifecycle.h"
#include "core/detect/p2p_op.h"
#include "core/dump/checked_reader.h"
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
// Each NCCL number goes out with its name beside it (a reader should not need nccl.h): `datatype` and
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
           {"untracked", r.untracked},
           {"aborted", r.aborted}};
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

// ---- reading: the schema as the checked reader's specs (checked_reader.h), in the order
// of README.md's tables, which is the order fields are checked in ----

const ObjectSpec& TeardownSpec() {
  static const ObjectSpec spec({
      StringField<&Teardown::cause>("cause", kRequired),
      U64Field<&Teardown::began_mono_ns>("began_mono_ns"),
  });
  return spec;
}

const ObjectSpec& IncidentSpec() {
  static const ObjectSpec spec({
      StringField<&Incident::id>("id", kRequired),
      StringField<&Incident::trigger>("trigger"),
      StringField<&Incident::job_id>("job_id"),
      U64Field<&Incident::detected_mono_ns>("detected_mono_ns"),
      U64Field<&Incident::detected_unix_ns>("detected_unix_ns"),
      StringField<&Incident::detected_iso>("detected_iso"),
      HexField<&Incident::run_key>("run_key"),  // absent in older dumps: unknown (0)
      ObjectField<&Incident::teardown>("teardown", &TeardownSpec()),  // last gasps only
  });
  return spec;
}

const ObjectSpec& VerdictSpec() {
  static const ObjectSpec spec([] {
    // A kind this version does not know (a newer writer, a forged file) reads as unknown.
    const auto set_kind = [](void* t, const std::string& name) {
      static_cast<detect::Verdict*>(t)->kind = detect::ParseVerdictKind(name).value_or(detect::VerdictKind::kUnknown);
    };
    return std::vector<FieldSpec>{
        StringFieldTo("kind", set_kind, kRequired),
        HexField<&detect::Verdict::comm_hash>("comm"),
        U64Field<&detect::Verdict::seq>("seq"),
        U64Field<&detect::Verdict::framework_seq>("framework_seq"),  // absent before shm layout 6: 0, unknown
        StringField<&detect::Verdict::op>("op"),
        StringField<&detect::Verdict::graph_label>("graph_label"),  // absent in older dumps: not a replay
        IntArrayField<&detect::Verdict::culprit_ranks>("culprit_ranks"),
        IntArrayField<&detect::Verdict::other_ranks>("other_ranks"),
        U64Field<&detect::Verdict::since_ns>("since_mono_ns"),
        StringField<&detect::Verdict::summary>("summary"),
        BoolField<&detect::Verdict::partial>("partial"),
    };
  }());
  return spec;
}

const ObjectSpec& ExitSpec() {
  static const ObjectSpec spec({
      BoolField<&detect::ExitFacts::recorded>("recorded"),
      IntField<&detect::ExitFacts::status>("status"),
      IntField<&detect::ExitFacts::signal>("signal"),
      U64Field<&detect::ExitFacts::exit_ns>("exit_ns"),
  });
  return spec;
}

// Each of restart and requeue is -1 (the launcher said nothing) or a count.
std::optional<CheckFailure> AttemptInRange(void* target, const KeptValues&) {
  const auto* a = static_cast<const detect::Attempt*>(target);
  if (a->restart < -1 || a->requeue < -1) return CheckFailure{nullptr, "is out of range"};
  return std::nullopt;
}

const ObjectSpec& AttemptSpec() {
  static const ObjectSpec spec({
      IntField<&detect::Attempt::restart>("restart"),
      IntField<&detect::Attempt::requeue>("requeue"),
      CheckField(&AttemptInRange),
  });
  return spec;
}

// A process state of /proc/<pid>/stat: one letter.
std::optional<CheckFailure> OsStateLetter(void* target, const KeptValues& kept) {
  const std::string* state = kept.Text("state");
  if (state == nullptr) return std::nullopt;  // missing: said where the field is
  if (state->size() != 1 || (*state)[0] < 'A' || (*state)[0] > 'z') {
    return CheckFailure{"state", "is not a process state letter"};
  }
  static_cast<detect::OsFacts*>(target)->state = (*state)[0];
  return std::nullopt;
}

const ObjectSpec& OsSpec() {
  static const ObjectSpec spec({
      KeptStringField("state", kRequired),
      CheckField(&OsStateLetter),
      StringField<&detect::OsFacts::wchan>("wchan"),
      StringArrayField<&detect::OsFacts::kernel_stack>("kernel_stack"),
  });
  return spec;
}

const ObjectSpec& ProcessSpec() {
  static const ObjectSpec spec({
      IntField<&ProcessInfo::global_rank>("global_rank", kRequired),
      IntField<&ProcessInfo::local_rank>("local_rank"),
      IntField<&ProcessInfo::world_size>("world_size"),
      StringField<&ProcessInfo::host>("host", kRequired),
      IntField<&ProcessInfo::pid>("pid", kRequired),
      IntField<&ProcessInfo::device>("device"),
      StringField<&ProcessInfo::exe>("exe"),
      StringArrayField<&ProcessInfo::cmdline>("cmdline"),
      BoolField<&ProcessInfo::alive>("alive"),  // version 2; a version 1 dump was written by its live process
      ObjectField<&ProcessInfo::attempt>("attempt", &AttemptSpec()),  // absent before shm layout 7, and when the launcher gave none
      ObjectField<&ProcessInfo::exit>("exit", &ExitSpec()),
      ObjectField<&ProcessInfo::os>("os", &OsSpec()),
  });
  return spec;
}

const ObjectSpec& WriterSpec() {
  static const ObjectSpec spec({
      IntField<&DumpWriter::pid>("pid", kRequired),
      StringField<&DumpWriter::host>("host"),
      IntField<&DumpWriter::global_rank>("global_rank"),
  });
  return spec;
}

const ObjectSpec& EnvironmentSpec() {
  static const ObjectSpec spec({
      StringMapField<&Environment::nccl_env>("nccl_env"),
      IntField<&Environment::cuda_driver_version>("cuda_driver_version"),
      IntField<&Environment::cuda_runtime_version>("cuda_runtime_version"),
      IntField<&Environment::nccl_version>("nccl_version"),
      StringField<&Environment::nvidia_driver>("nvidia_driver"),
      StringField<&Environment::kernel_release>("kernel_release"),
  });
  return spec;
}

const ObjectSpec& RecordSpec() {
  static const ObjectSpec spec([] {
    // The model numbers groups in 32 bits; a hostile value stays a group. Absent in dumps
    // before groups were recorded: 0, not grouped.
    const auto set_group = [](void* t, uint64_t v) {
      static_cast<detect::RecordFacts*>(t)->group = static_cast<uint32_t>(std::min<uint64_t>(v, kMaxGroup));
    };
    return std::vector<FieldSpec>{
        U64Field<&detect::RecordFacts::seq>("seq", kRequired),
        U64Field<&detect::RecordFacts::framework_seq>("framework_seq"),  // absent before shm layout 6: 0, unknown
        StringField<&detect::RecordFacts::op>("op", kRequired),
        U64Field<&detect::RecordFacts::count>("count"),
        IntField<&detect::RecordFacts::datatype>("datatype"),
        IntField<&detect::RecordFacts::redop>("redop"),
        IntField<&detect::RecordFacts::root>("root"),
        IntField<&detect::RecordFacts::peer>("peer"),
        HexField<&detect::RecordFacts::stream>("stream"),
        U64FieldTo("group", set_group),
        U64Field<&detect::RecordFacts::enqueue_ns>("enqueue_ns"),
        U64Field<&detect::RecordFacts::complete_ns>("complete_ns"),
        BoolField<&detect::RecordFacts::never_completes>("never_completes"),  // absent in older dumps: false
        BoolField<&detect::RecordFacts::captured>("captured"),  // absent in older dumps: false
        BoolField<&detect::RecordFacts::untracked>("untracked"),  // absent before schema 2's untracked: false
        BoolField<&detect::RecordFacts::aborted>("aborted"),  // absent in older dumps: false
        StringField<&detect::RecordFacts::call_site>("call_site"),  // absent unless NCCLWATCH_CALL_SITES=1
    };
  }());
  return spec;
}

// nranks within [1, kMaxRanks], then rank within [0, nranks): checked where README.md lists
// them, after both were read.
std::optional<CheckFailure> CommRanksInRange(void* target, const KeptValues&) {
  const auto* c = static_cast<const detect::CommFacts*>(target);
  if (c->nranks <= 0 || c->nranks > kMaxRanks) return CheckFailure{"nranks", "is out of range"};
  if (c->rank < 0 || c->rank >= c->nranks) return CheckFailure{"rank", "must be within [0, nranks)"};
  return std::nullopt;
}

// "lifecycle" names the state; a dump without it (or of a state this version does not know)
// says only whether the rank left.
std::optional<CheckFailure> CommLifecycleOf(void* target, const KeptValues& kept) {
  auto* c = static_cast<detect::CommFacts*>(target);
  const std::string* name = kept.Text("lifecycle");
  if (const std::optional<detect::CommLifecycle> known = detect::ParseCommLifecycle(name ? *name : std::string())) {
    c->lifecycle = *known;
  } else {
    c->lifecycle = kept.Flag("left").value_or(false) ? detect::CommLifecycle::kDestroyed
                   : c->init_done_ns == 0            ? detect::CommLifecycle::kInitializing
                                                     : detect::CommLifecycle::kReady;
  }
  return std::nullopt;
}

const ObjectSpec& CommSpec() {
  static const ObjectSpec spec([] {
    // One list on disk; the model keeps P2P ops apart (their numbers count per peer).
    FieldSpec records = ObjectArrayField<&detect::CommFacts::records>("records", &RecordSpec());
    records.leave = [](void* t) {
      auto* c = static_cast<detect::CommFacts*>(t);
      if (!detect::IsPointToPoint(c->records.back().op)) return;
      c->p2p_records.push_back(std::move(c->records.back()));
      c->records.pop_back();
    };
    records.reset = [](void* t) {
      auto* c = static_cast<detect::CommFacts*>(t);
      c->records.clear();
      c->p2p_records.clear();
    };
    std::vector<FieldSpec> fields{
        HexField<&detect::CommFacts::comm_hash>("comm", kRequired),
        StringField<&detect::CommFacts::name>("comm_name"),  // absent before layout 5's names: none
        IntField<&detect::CommFacts::rank>("rank", kRequired),
        IntField<&detect::CommFacts::nranks>("nranks", kRequired),
        CheckField(&CommRanksInRange),
        IntField<&detect::CommFacts::device>("device"),
        U64Field<&detect::CommFacts::init_started_ns>("init_started_ns"),
        U64Field<&detect::CommFacts::init_done_ns>("init_done_ns"),
        U64Field<&detect::CommFacts::last_enqueued_seq>("last_enqueued_seq"),
        U64Field<&detect::CommFacts::last_completed_seq>("last_completed_seq"),
        IntField<&detect::CommFacts::async_error>("async_error"),
        KeptStringField("lifecycle"),
        KeptBoolField("left"),  // version 2
        CheckField(&CommLifecycleOf),
        U64Field<&detect::CommFacts::untracked_ops>("untracked_ops"),  // version 2
        BoolField<&detect::CommFacts::derived>("derived"),  // absent before shm layout 7: a root communicator
        records,
    };
    AppendReplayFields(&fields);  // absent in older dumps: none
    return fields;
  }());
  return spec;
}

const ObjectSpec& SyncSpec() {
  static const ObjectSpec spec([] {
    const auto set_target = [](void* t, const std::string& name) {
      static_cast<detect::SyncFacts*>(t)->target = SyncTargetNamed(name);
    };
    const auto set_api = [](void* t, const std::string& name) {
      static_cast<detect::SyncFacts*>(t)->api = name == "driver" ? detect::SyncApi::kDriver : detect::SyncApi::kRuntime;
    };
    return std::vector<FieldSpec>{
        IntField<&detect::SyncFacts::tid>("tid"),
        U64Field<&detect::SyncFacts::blocked_since_ns>("since_ns", kRequired),
        StringFieldTo("target", set_target),
        StringFieldTo("api", set_api),
        HexField<&detect::SyncFacts::handle>("handle"),
    };
  }());
  return spec;
}

const ObjectSpec& NativeFrameSpec() {
  static const ObjectSpec spec({
      HexField<&NativeFrame::pc>("pc"),
      StringField<&NativeFrame::function>("function"),
      StringField<&NativeFrame::module>("module"),
      HexField<&NativeFrame::offset>("offset"),
      BoolField<&NativeFrame::internal>("internal"),
  });
  return spec;
}

const ObjectSpec& NativeThreadSpec() {
  static const ObjectSpec spec({
      IntField<&NativeThread::tid>("tid", kRequired),
      StringField<&NativeThread::name>("name"),
      StringField<&NativeThread::state>("state"),
      BoolField<&NativeThread::answered>("answered"),
      ObjectArrayField<&NativeThread::frames>("frames", &NativeFrameSpec()),
  });
  return spec;
}

// "native_stacks" holds two members of RankDump itself.
const ObjectSpec& NativeStacksSpec() {
  static const ObjectSpec spec({
      ObjectArrayField<&RankDump::threads>("threads", &NativeThreadSpec()),
      StringArrayField<&RankDump::stack_errors>("errors"),
  });
  return spec;
}

const ObjectSpec& PythonFrameSpec() {
  static const ObjectSpec spec({
      StringField<&PythonFrame::file>("file"),
      IntField<&PythonFrame::line>("line"),
      StringField<&PythonFrame::function>("function"),
  });
  return spec;
}

const ObjectSpec& PythonThreadSpec() {
  static const ObjectSpec spec({
      U64Field<&PythonThread::thread_id>("thread_id"),
      BoolField<&PythonThread::current>("current"),
      ObjectArrayField<&PythonThread::frames>("frames", &PythonFrameSpec()),
  });
  return spec;
}

const ObjectSpec& PythonStacksSpec() {
  static const ObjectSpec spec({
      BoolField<&PythonStacks::available>("available"),
      StringField<&PythonStacks::reason>("reason"),
      ObjectArrayField<&PythonStacks::threads>("threads", &PythonThreadSpec()),
  });
  return spec;
}

const ObjectSpec& DumpSpec() {
  static const ObjectSpec spec([] {
    const auto reset_native_stacks = [](void* t) {
      auto* d = static_cast<RankDump*>(t);
      d->threads.clear();
      d->stack_errors.clear();
    };
    return std::vector<FieldSpec>{
        ObjectField<&RankDump::incident>("incident", &IncidentSpec(), kRequired),
        ObjectField<&RankDump::verdict>("verdict", &VerdictSpec()),
        ObjectField<&RankDump::process>("process", &ProcessSpec(), kRequired),
        ObjectField<&RankDump::written_by>("written_by", &WriterSpec()),
        ObjectField<&RankDump::environment>("environment", &EnvironmentSpec()),
        ObjectArrayField<&RankDump::comms>("comms", &CommSpec()),
        ObjectArrayField<&RankDump::host_syncs>("host_syncs", &SyncSpec()),
        InlineObjectField("native_stacks", &NativeStacksSpec(), reset_native_stacks),
        ObjectField<&RankDump::python>("python_stacks", &PythonStacksSpec()),
    };
  }());
  return spec;
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
  json incident = {{"id", d.incident.id}, {"trigger", d.incident.trigger}, {"job_id", d.incident.job_id},
                   {"detected_mono_ns", d.incident.detected_mono_ns},
                   {"detected_unix_ns", d.incident.detected_unix_ns},
                   {"detected_iso", d.incident.detected_iso}};
  if (d.incident.run_key != 0) incident["run_key"] = FormatHex(d.incident.run_key);
  if (!d.incident.teardown.cause.empty()) {
    incident["teardown"] = {{"cause", d.incident.teardown.cause}, {"began_mono_ns", d.incident.teardown.began_mono_ns}};
  }
  json doc = json{
      {"schema", kSchemaName},
      {"version", kSchemaVersion},
      {"incident", std::move(incident)},
      {"verdict", {{"kind", detect::ToString(v.kind)}, {"comm", FormatHex(v.comm_hash)}, {"seq", v.seq},
                   {"framework_seq", v.framework_seq}, {"op", v.op}, {"graph_label", v.graph_label},
                   {"culprit_ranks", v.culprit_ranks},
                   {"other_ranks", v.other_ranks}, {"since_mono_ns", v.since_ns}, {"summary", v.summary}, {"partial", v.partial}}},
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

Result<RankDump> ParseDump(std::string_view text) noexcept {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return Status::Error("empty file (truncated?)");
  RankDump dump;
  static constexpr SchemaHeader kHeader{kSchemaName, kSchemaVersion, "dump", "unreadable dump: "};
  if (Status read = ReadCheckedJson(text, kHeader, DumpSpec(), &dump, &dump.version); !read.ok()) return read;
  return dump;
}

}  // namespace ncclwatch::dump
