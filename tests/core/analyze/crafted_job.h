// Builders of crafted rank dumps for analyzer and CLI tests: a job of N ranks on one world
// communicator, spread over hosts whose monotonic clocks deliberately disagree.
#ifndef NCCLWATCH_TESTS_CORE_ANALYZE_CRAFTED_JOB_H_
#define NCCLWATCH_TESTS_CORE_ANALYZE_CRAFTED_JOB_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/detect/p2p_op.h"
#include "core/dump/dump.h"
#include "core/dump/dump_writer.h"

namespace ncclwatch::testing {

inline constexpr uint64_t kWorldComm = 0xfeedface12345678ull;
inline constexpr uint64_t kTpComm = 0x1111222233334444ull;

// Host h's monotonic clock starts at a different point: never comparable across hosts.
inline uint64_t HostClockBase(int host_index) { return 1'000'000'000'000ull * (7 - host_index % 7); }

inline std::string HostName(int rank, int ranks_per_host) { return "node" + std::to_string(rank / ranks_per_host); }

inline dump::RankDump MakeRankDump(int rank, int nranks, int ranks_per_host = 8) {
  dump::RankDump d;
  int host_index = rank / ranks_per_host;
  uint64_t base = HostClockBase(host_index);
  d.incident.id = "inc1";
  d.incident.trigger = "local";
  d.incident.job_id = "job";
  d.incident.detected_mono_ns = base + 100'000'000'000ull;
  d.incident.detected_unix_ns = 1'700'000'100'000'000'000ull;
  d.incident.detected_iso = "2023-11-14T22:15:00Z";
  d.process.global_rank = rank;
  d.process.local_rank = rank % ranks_per_host;
  d.process.world_size = nranks;
  d.process.host = HostName(rank, ranks_per_host);
  d.process.pid = 1000 + rank;
  d.process.device = rank % ranks_per_host;
  d.process.exe = "/usr/bin/python3";
  d.process.cmdline = {"python3", "train.py"};
  d.environment.nvidia_driver = "535.154.05";
  d.environment.kernel_release = "6.1.0-18-amd64";
  d.environment.nccl_version = 22809;
  d.environment.cuda_runtime_version = 13000;
  d.python.available = false;
  d.python.reason = "not a Python process";
  detect::CommFacts& world = d.comms.emplace_back();
  world.comm_hash = kWorldComm;
  world.rank = rank;
  world.nranks = nranks;
  world.device = d.process.device;
  world.init_started_ns = base + 1'000'000;
  world.init_done_ns = base + 2'000'000;
  return d;
}

inline detect::CommFacts& Comm(dump::RankDump& d, uint64_t hash = kWorldComm) {
  for (auto& c : d.comms) {
    if (c.comm_hash == hash) return c;
  }
  throw std::logic_error("no such comm in crafted dump");
}

// Issues #1..#through of `op` on `c` (a P2P op: its #1..#through); #1..#completed_through complete. Collective #s
// completes at the same job-wide instant on every rank (base + s ms + 0.5 ms).
inline void Issue(dump::RankDump& d, detect::CommFacts& c, uint64_t through, uint64_t completed_through,
                  const std::string& op = "AllReduce") {
  uint64_t base = HostClockBase(std::stoi(d.process.host.substr(4)));
  c.records.clear();
  c.p2p_records.clear();
  for (uint64_t s = 1; s <= through; ++s) {
    detect::RecordFacts r;
    r.seq = s;
    r.op = op;
    r.count = 1024;
    r.datatype = 7;
    r.redop = op == "AllReduce" ? 0 : -1;
    r.root = op == "Broadcast" ? 0 : -1;
    r.stream = 0x7f00;
    r.enqueue_ns = base + 10'000'000 + s * 1'000'000 + static_cast<uint64_t>(c.rank) * 1000;
    r.complete_ns = s <= completed_through ? base + 10'000'000 + s * 1'000'000 + 500'000 : 0;
    (detect::IsPointToPoint(op) ? c.p2p_records : c.records).push_back(r);  // as the model keeps them
  }
  c.last_enqueued_seq = through;
  c.last_completed_seq = completed_through;
}

inline void Issue(dump::RankDump& d, uint64_t through, uint64_t completed_through, const std::string& op = "AllReduce") {
  Issue(d, Comm(d), through, completed_through, op);
}

inline dump::NativeFrame Frame(const std::string& function, const std::string& module, bool internal = false) {
  dump::NativeFrame f;
  f.pc = 0x400000 + function.size();
  f.function = function;
  f.module = module;
  f.offset = 0x1000 + function.size();
  f.internal = internal;
  return f;
}

// A main thread blocked in a condition wait under `user_function`, as the capture sees it.
inline void AddBlockedMainThread(dump::RankDump& d, const std::string& user_function) {
  dump::NativeThread t;
  t.tid = d.process.pid;
  t.name = "python3";
  t.state = "S";
  t.answered = true;
  t.frames = {Frame("ncclwatch_capture_handler", "/build/lib/libncclwatch.so", true),
              Frame("__restore_rt", "/lib/x86_64-linux-gnu/libc.so.6"),
              Frame("__futex_abstimed_wait_common", "/lib/x86_64-linux-gnu/libc.so.6"),
              Frame("pthread_cond_wait", "/lib/x86_64-linux-gnu/libc.so.6"),
              Frame(user_function, "/opt/app/libtrain.so"),
              Frame("main", "/usr/bin/python3"),
              Frame("__libc_start_main", "/lib/x86_64-linux-gnu/libc.so.6")};
  d.threads.push_back(std::move(t));
}

inline void AddPythonStack(dump::RankDump& d, std::vector<PythonFrame> innermost_first) {
  d.python.available = true;
  d.python.reason.clear();
  PythonThread t;
  t.thread_id = 140000000000ull + static_cast<uint64_t>(d.process.pid);
  t.current = true;
  t.frames = std::move(innermost_first);
  d.python.threads.push_back(std::move(t));
}

// A job of `nranks` ranks that all completed #1..#through: the healthy baseline.
inline std::vector<dump::RankDump> HealthyJob(int nranks, uint64_t through, int ranks_per_host = 8) {
  std::vector<dump::RankDump> dumps;
  for (int r = 0; r < nranks; ++r) {
    dumps.push_back(MakeRankDump(r, nranks, ranks_per_host));
    Issue(dumps.back(), through, through);
  }
  return dumps;
}

inline void WriteJob(const std::vector<dump::RankDump>& dumps, const std::string& dir) {
  for (const auto& d : dumps) {
    Result<dump::DumpFiles> result = dump::WriteDump(d, dir);
    if (!result.ok()) throw std::runtime_error(result.error().message());
  }
}

}  // namespace ncclwatch::testing

#endif  // NCCLWATCH_TESTS_CORE_ANALYZE_CRAFTED_JOB_H_
