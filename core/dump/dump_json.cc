#include "core/dump/dump_json.h"

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/format/hex.h"

namespace ncclwatch::dump {
namespace {

using nlohmann::json;
using format::FormatHex;
using format::ParseHex;

// Far beyond any real job; keeps a hostile dump from making the analyzer list billions of ranks.
constexpr int kMaxRanks = 1 << 20;

// ---- writing ----

json ToJson(const CollectiveRecord& r) {
  return json{{"seq", r.seq},         {"op", r.op},       {"count", r.count},
              {"datatype", r.datatype}, {"redop", r.redop}, {"root", r.root},
              {"peer", r.peer},       {"stream", FormatHex(r.stream)}, {"group", r.group},
              {"enqueue_ns", r.enqueue_ns}, {"complete_ns", r.complete_ns},
              {"never_completes", r.never_completes},
              {"untracked", r.untracked}};
}

json ToJson(const CommDump& c) {
  json records = json::array();
  for (const auto& r : c.records) records.push_back(ToJson(r));
  return json{{"comm", FormatHex(c.comm_hash)},
              {"rank", c.rank},
              {"nranks", c.nranks},
              {"device", c.device},
              {"init_started_ns", c.init_started_ns},
              {"init_done_ns", c.init_done_ns},
              {"last_enqueued_seq", c.last_enqueued_seq},
              {"last_completed_seq", c.last_completed_seq},
              {"async_error", c.async_error},
              {"left", c.left},
              {"untracked_ops", c.untracked_ops},
              {"records", std::move(records)}};
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

class Node;

// Names a field for error messages: `key` of `node`, or element `index` of that key. The
// dotted path is built only when a message needs it: building it for every field read
// (millions in a big dump) used to cost a string allocation each.
struct FieldName {
  const Node* node;
  const char* key;
  std::optional<size_t> index;

  std::string str() const;
};

// A JSON object together with where it is in the document, so every error names the field.
class Node {
 public:
  explicit Node(const json& value) : value_(value) {}
  Node(const json& value, const Node* parent, const char* key, std::optional<size_t> index = std::nullopt)
      : value_(value), parent_(parent), key_(key), index_(index) {}

  const json& value() const { return value_; }

  // "comms[3].records[0]"; "" for the document itself.
  std::string path() const { return parent_ ? FieldName{parent_, key_, index_}.str() : std::string(); }

  bool Has(const char* key) const { return value_.contains(key); }

  Node Child(const char* key, json::value_t expected) const {
    auto it = value_.find(key);
    if (it == value_.end()) Fail({this, key, {}}, "is missing");
    if (it->type() != expected) Fail({this, key, {}}, std::string("must be ") + TypeName(expected));
    return Node(*it, this, key);
  }

  // Optional fields keep the default when absent; a present field of the wrong type fails.
  template <typename T>
  void Get(const char* key, T* out, bool required = false) const {
    auto it = value_.find(key);
    if (it == value_.end()) {
      if (required) Fail({this, key, {}}, "is missing");
      return;
    }
    Convert(*it, {this, key, {}}, out);
  }

  void GetHex(const char* key, uint64_t* out, bool required = false) const {
    auto it = value_.find(key);
    if (it == value_.end()) {
      if (required) Fail({this, key, {}}, "is missing");
      return;
    }
    if (!it->is_string()) Fail({this, key, {}}, "must be a string");
    const std::string& text = it->get_ref<const std::string&>();
    if (text.empty() && !required) return;
    auto parsed = ParseHex(text);
    if (!parsed) Fail({this, key, {}}, "must be a hex string like \"0x1f\"");
    *out = *parsed;
  }

  // The elements of array `key`, each an object; they refer to this node, which must outlive them.
  std::vector<Node> Elements(const char* key) const {
    std::vector<Node> out;
    auto it = value_.find(key);
    if (it == value_.end()) return out;
    if (!it->is_array()) Fail({this, key, {}}, "must be an array");
    out.reserve(it->size());
    for (size_t i = 0; i < it->size(); ++i) {
      const json& element = (*it)[i];
      if (!element.is_object()) Fail({this, key, i}, "must be an object");
      out.emplace_back(element, this, key, i);
    }
    return out;
  }

  [[noreturn]] static void Fail(const std::string& path, const std::string& what) {
    throw DumpFormatError("field '" + path + "' " + what);
  }
  [[noreturn]] static void Fail(const FieldName& field, const std::string& what) { Fail(field.str(), what); }

 private:
  static const char* TypeName(json::value_t type) {
    return type == json::value_t::object ? "an object" : type == json::value_t::array ? "an array" : "a value";
  }

  static void Convert(const json& v, const FieldName& field, std::string* out) {
    if (!v.is_string()) Fail(field, "must be a string");
    *out = v.get_ref<const std::string&>();
  }
  static void Convert(const json& v, const FieldName& field, bool* out) {
    if (!v.is_boolean()) Fail(field, "must be true or false");
    *out = v.get<bool>();
  }
  static void Convert(const json& v, const FieldName& field, uint64_t* out) {
    if (!v.is_number_unsigned()) Fail(field, "must be a non-negative integer");
    *out = v.get<uint64_t>();
  }
  static void Convert(const json& v, const FieldName& field, int* out) {
    if (!v.is_number_integer()) Fail(field, "must be an integer");
    int64_t x = v.get<int64_t>();
    if (x < INT32_MIN || x > INT32_MAX) Fail(field, "is out of range");
    *out = static_cast<int>(x);
  }
  static void Convert(const json& v, const FieldName& field, std::vector<int>* out) {
    if (!v.is_array()) Fail(field, "must be an array of integers");
    out->clear();
    out->reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      int x = 0;
      Convert(v[i], FieldName{field.node, field.key, i}, &x);
      out->push_back(x);
    }
  }
  static void Convert(const json& v, const FieldName& field, std::vector<std::string>* out) {
    if (!v.is_array()) Fail(field, "must be an array of strings");
    out->clear();
    out->reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      std::string s;
      Convert(v[i], FieldName{field.node, field.key, i}, &s);
      out->push_back(std::move(s));
    }
  }

  const json& value_;
  const Node* parent_ = nullptr;
  const char* key_ = nullptr;
  std::optional<size_t> index_;
};

std::string FieldName::str() const {
  std::string base = node->path();
  std::string name = base.empty() ? key : base + "." + key;
  if (index) name += "[" + std::to_string(*index) + "]";
  return name;
}

void CheckSchema(const json& doc) {
  if (!doc.is_object()) throw DumpFormatError("foreign JSON: top level is not an object");
  auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_string()) {
    throw DumpFormatError("foreign JSON: no \"schema\" field (not an ncclwatch dump)");
  }
  if (*schema != kSchemaName) {
    throw DumpFormatError("foreign JSON: schema is \"" + schema->get<std::string>() + "\", expected \"" +
                          kSchemaName + "\"");
  }
  auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer()) {
    throw DumpFormatError("field 'version' is missing or not an integer");
  }
  int64_t v = version->get<int64_t>();
  if (v > kSchemaVersion) {
    throw DumpFormatError("dump version " + std::to_string(v) + " is newer than this ncclwatch supports (" +
                          std::to_string(kSchemaVersion) + "); upgrade ncclwatch");
  }
  if (v < 1) throw DumpFormatError("dump version " + std::to_string(v) + " is invalid");
}

void Read(const Node& n, Incident* out) {
  n.Get("id", &out->id, true);
  n.Get("trigger", &out->trigger);
  n.Get("job_id", &out->job_id);
  n.Get("detected_mono_ns", &out->detected_mono_ns);
  n.Get("detected_unix_ns", &out->detected_unix_ns);
  n.Get("detected_iso", &out->detected_iso);
}

void Read(const Node& n, LocalVerdict* out) {
  n.Get("kind", &out->kind, true);
  n.GetHex("comm", &out->comm_hash);
  n.Get("seq", &out->seq);
  n.Get("op", &out->op);
  n.Get("culprit_ranks", &out->culprit_ranks);
  n.Get("other_ranks", &out->other_ranks);
  n.Get("since_mono_ns", &out->since_mono_ns);
  n.Get("summary", &out->summary);
  n.Get("partial", &out->partial);
}

void Read(const Node& n, ProcessInfo* out) {
  n.Get("global_rank", &out->global_rank, true);
  n.Get("local_rank", &out->local_rank);
  n.Get("world_size", &out->world_size);
  n.Get("host", &out->host, true);
  n.Get("pid", &out->pid, true);
  n.Get("device", &out->device);
  n.Get("exe", &out->exe);
  n.Get("cmdline", &out->cmdline);
  n.Get("alive", &out->alive);  // version 2; a version 1 dump was written by its live process
  if (n.Has("exit")) {
    Node exit = n.Child("exit", json::value_t::object);
    exit.Get("recorded", &out->exit.recorded);
    exit.Get("status", &out->exit.status);
    exit.Get("signal", &out->exit.signal);
    exit.Get("exit_ns", &out->exit.exit_ns);
  }
}

void Read(const Node& n, DumpWriter* out) {
  n.Get("pid", &out->pid, true);
  n.Get("host", &out->host);
  n.Get("global_rank", &out->global_rank);
}

void Read(const Node& n, Environment* out) {
  if (n.Has("nccl_env")) {
    Node env = n.Child("nccl_env", json::value_t::object);
    for (const auto& [key, value] : env.value().items()) {
      if (!value.is_string()) Node::Fail(env.path() + "." + key, "must be a string");
      out->nccl_env[key] = value.get<std::string>();
    }
  }
  n.Get("cuda_driver_version", &out->cuda_driver_version);
  n.Get("cuda_runtime_version", &out->cuda_runtime_version);
  n.Get("nccl_version", &out->nccl_version);
  n.Get("nvidia_driver", &out->nvidia_driver);
  n.Get("kernel_release", &out->kernel_release);
}

void Read(const Node& n, CollectiveRecord* out) {
  n.Get("seq", &out->seq, true);
  n.Get("op", &out->op, true);
  n.Get("count", &out->count);
  n.Get("datatype", &out->datatype);
  n.Get("redop", &out->redop);
  n.Get("root", &out->root);
  n.Get("peer", &out->peer);
  n.GetHex("stream", &out->stream);
  n.Get("group", &out->group);  // absent before issue 19: 0 (not grouped)
  n.Get("enqueue_ns", &out->enqueue_ns);
  n.Get("complete_ns", &out->complete_ns);
  n.Get("never_completes", &out->never_completes);  // absent before 2026-11: false
  n.Get("untracked", &out->untracked);  // absent before schema 2's untracked: false (it was folded into never_completes)
}

void Read(const Node& n, CommDump* out) {
  n.GetHex("comm", &out->comm_hash, true);
  n.Get("rank", &out->rank, true);
  n.Get("nranks", &out->nranks, true);
  if (out->nranks <= 0 || out->nranks > kMaxRanks) Node::Fail(n.path() + ".nranks", "is out of range");
  if (out->rank < 0 || out->rank >= out->nranks) {
    Node::Fail(n.path() + ".rank", "must be within [0, nranks)");
  }
  n.Get("device", &out->device);
  n.Get("init_started_ns", &out->init_started_ns);
  n.Get("init_done_ns", &out->init_done_ns);
  n.Get("last_enqueued_seq", &out->last_enqueued_seq);
  n.Get("last_completed_seq", &out->last_completed_seq);
  n.Get("async_error", &out->async_error);
  n.Get("left", &out->left);                    // version 2
  n.Get("untracked_ops", &out->untracked_ops);  // version 2
  for (const Node& r : n.Elements("records")) Read(r, &out->records.emplace_back());
}

void Read(const Node& n, HostSync* out) {
  n.Get("tid", &out->tid);
  n.Get("since_ns", &out->since_ns, true);
  n.Get("target", &out->target);
  n.GetHex("handle", &out->handle);
}

void Read(const Node& n, NativeThread* out) {
  n.Get("tid", &out->tid, true);
  n.Get("name", &out->name);
  n.Get("state", &out->state);
  n.Get("answered", &out->answered);
  for (const Node& f : n.Elements("frames")) {
    NativeFrame& frame = out->frames.emplace_back();
    f.GetHex("pc", &frame.pc);
    f.Get("function", &frame.function);
    f.Get("module", &frame.module);
    f.GetHex("offset", &frame.offset);
    f.Get("internal", &frame.internal);
  }
}

void Read(const Node& n, PythonStacks* out) {
  n.Get("available", &out->available);
  n.Get("reason", &out->reason);
  for (const Node& t : n.Elements("threads")) {
    PythonThread& thread = out->threads.emplace_back();
    t.Get("thread_id", &thread.thread_id);
    t.Get("current", &thread.current);
    for (const Node& f : t.Elements("frames")) {
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
    syncs.push_back(json{{"tid", s.tid}, {"since_ns", s.since_ns}, {"target", s.target}, {"handle", FormatHex(s.handle)}});
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
  if (!p.alive) {
    process["exit"] = {{"recorded", p.exit.recorded}, {"status", p.exit.status}, {"signal", p.exit.signal},
                       {"exit_ns", p.exit.exit_ns}};
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
      {"verdict", {{"kind", v.kind}, {"comm", FormatHex(v.comm_hash)}, {"seq", v.seq}, {"op", v.op},
                   {"culprit_ranks", v.culprit_ranks}, {"other_ranks", v.other_ranks},
                   {"since_mono_ns", v.since_mono_ns}, {"summary", v.summary}, {"partial", v.partial}}},
      {"process", std::move(process)},
      {"environment", {{"nccl_env", std::move(nccl_env)}, {"cuda_driver_version", e.cuda_driver_version},
                       {"cuda_runtime_version", e.cuda_runtime_version}, {"nccl_version", e.nccl_version},
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
  CheckSchema(doc);
  Node root(doc);
  RankDump d;
  root.Get("version", &d.version);
  Read(root.Child("incident", json::value_t::object), &d.incident);
  if (root.Has("verdict")) Read(root.Child("verdict", json::value_t::object), &d.verdict);
  Read(root.Child("process", json::value_t::object), &d.process);
  if (root.Has("written_by")) Read(root.Child("written_by", json::value_t::object), &d.written_by);
  if (root.Has("environment")) Read(root.Child("environment", json::value_t::object), &d.environment);
  for (const Node& c : root.Elements("comms")) Read(c, &d.comms.emplace_back());
  for (const Node& s : root.Elements("host_syncs")) Read(s, &d.host_syncs.emplace_back());
  if (root.Has("native_stacks")) {
    Node stacks = root.Child("native_stacks", json::value_t::object);
    for (const Node& t : stacks.Elements("threads")) Read(t, &d.threads.emplace_back());
    stacks.Get("errors", &d.stack_errors);
  }
  if (root.Has("python_stacks")) Read(root.Child("python_stacks", json::value_t::object), &d.python);
  return d;
}

}  // namespace ncclwatch::dump
