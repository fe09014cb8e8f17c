// The hang dump: everything one rank knows at the moment an incident is declared.
//
// Plain data, no behaviour. A communicator's state, a host sync and an exit are the job
// model's own types (core/detect/facts.h), not copies: the live detector judged exactly what
// the dump keeps. The watchdog of each rank fills one RankDump per incident and
// hands it to WriteDump (dump_writer.h); `ncclwatch analyze` reads them back with
// ReadDumpFile/ReadDumpDir (dump_reader.h). The on-disk schema is documented field by
// field in core/dump/README.md.
//
// Conventions:
//   * *_mono_ns / *_ns times are CLOCK_MONOTONIC nanoseconds of the writing host. They are
//     comparable between processes of one host only, never across hosts. 0 means unset.
//   * Communicator hashes are NCCL's commHash (printed "commId 0x..." by NCCL_DEBUG=INFO).
//   * Collective sequence numbers are 1-based per communicator.
#ifndef NCCLWATCH_CORE_DUMP_DUMP_H_
#define NCCLWATCH_CORE_DUMP_DUMP_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/detect/facts.h"
#include "core/detect/verdict.h"
#include "core/stacks/process_stacks.h"

namespace ncclwatch::dump {

inline constexpr char kSchemaName[] = "ncclwatch.dump";
// 2: exit evidence (process.alive, process.exit, written_by, comms[].left, comms[].untracked_ops).
// Readers accept 1..kSchemaVersion; a version 1 dump reads as a live process's own dump.
inline constexpr int kSchemaVersion = 2;

// A teardown that asked for a last-gasp dump (preload/lifecycle/last_gasp.h).
struct Teardown {
  std::string cause;           // "SIGTERM", "SIGABRT", "SIGINT", "ncclCommAbort", "ncclCommRevoke"; empty: none
  uint64_t began_mono_ns = 0;  // when the teardown began (the writer's host clock); 0 unknown
};

struct Incident {
  std::string id;            // Same on every rank of one host for one incident.
  std::string trigger;       // "local", "trigger-file", "lone-rank" or "last-gasp".
  std::string job_id;        // NCCLWATCH_JOB_ID, may be empty.
  uint64_t detected_mono_ns = 0;
  uint64_t detected_unix_ns = 0;
  std::string detected_iso;  // UTC, e.g. "2026-11-21T23:12:53.123456789Z".
  // The writer's run key (core/shm/run_identity.h): the processes one launcher started on one
  // host share it, whatever the job id; 0 unknown (older writers). A dump written on behalf of
  // another process carries its writer's: the watchdog judges only processes of its own run.
  uint64_t run_key = 0;
  // Set on a last-gasp dump, on the dumps its writer wrote beside it on behalf of gone
  // processes, and never otherwise.
  Teardown teardown;
};

struct ProcessInfo {
  int global_rank = -1;
  int local_rank = -1;
  int world_size = 0;
  std::string host;
  int32_t pid = 0;
  int device = -1;
  std::string exe;
  std::vector<std::string> cmdline;
  // false: the process had exited or died when the dump was written (by a peer, written_by).
  bool alive = true;
  detect::Attempt attempt;  // the launcher's attempt; absent from the file when not known
  detect::ExitFacts exit;  // meaningful when !alive
  // What the kernel said the process was doing, when a peer wrote the dump on its behalf
  // because it could not (stopped, in the kernel); state 0 otherwise.
  detect::OsFacts os;
};

// Who wrote a dump on behalf of a process that had exited or died (its peers' watchdog saw
// its segment); pid 0 when the process wrote its own dump.
struct DumpWriter {
  int32_t pid = 0;
  std::string host;
  int global_rank = -1;
};

struct Environment {
  std::map<std::string, std::string> nccl_env;  // every NCCL_* variable
  int cuda_driver_version = 0;    // cudaDriverGetVersion, e.g. 13000; 0 unknown
  int cuda_runtime_version = 0;   // cudaRuntimeGetVersion
  int nccl_version = 0;           // ncclGetVersion, e.g. 22809
  std::string nvidia_driver;      // e.g. "545.23.08"; empty when no driver
  std::string kernel_release;     // uname -r
};

struct NativeFrame {
  uint64_t pc = 0;
  std::string function;   // demangled; empty when unknown
  std::string module;     // path of the object; empty when unknown
  uint64_t offset = 0;    // pc minus the module's load base
  bool internal = false;  // capture machinery; reports hide it
};

struct NativeThread {
  int32_t tid = 0;
  std::string name;
  std::string state;      // one letter from /proc/<pid>/task/<tid>/stat
  bool answered = false;
  std::vector<NativeFrame> frames;  // innermost first
};

// ncclwatch's own threads, by the names it gives them (preload/tracker "ncclwatch", the
// watchdog "ncclwatch-wd"): reports show the job's threads and count these.
inline bool IsOwnThread(const NativeThread& t) { return t.name == "ncclwatch" || t.name.rfind("ncclwatch-", 0) == 0; }

// Python frames and threads are core/stacks' own types (process_stacks.h): the dump keeps
// exactly what the capture produced.
struct PythonStacks {
  bool available = false;
  std::string reason;     // why not available (empty when available)
  std::vector<PythonThread> threads;
};

struct RankDump {
  int version = kSchemaVersion;
  Incident incident;
  // The verdict as this rank's host detector saw it (detect::Verdict, the one verdict type);
  // kind kNone when the dump was requested without a local diagnosis (a trigger file, a last
  // gasp), kUnknown when read from a file whose kind this version does not know. The file
  // keeps kind, comm_hash, seq, framework_seq, op, culprit_ranks, other_ranks, since_ns,
  // summary and partial (README.md, "verdict"); the rest (comm_name, nranks, rank_evidence,
  // p2p, culprits_without_facts, notes) is the watchdog's and reads back empty: `analyze`
  // classifies the dumps anew.
  detect::Verdict verdict;
  ProcessInfo process;
  DumpWriter written_by;  // set (pid != 0) only for a dump written on behalf of a gone process
  Environment environment;
  // One entry per (communicator, rank) this process held, as the watchdog's facts had them
  // (core/watch/facts_from_snapshot.h): collectives in `records`, P2P ops in `p2p_records`;
  // the file keeps both in one "records" list, in issue order (records_in_order.h).
  std::vector<detect::CommFacts> comms;
  std::vector<detect::SyncFacts> host_syncs;  // threads blocked in a host-side CUDA sync
  std::vector<NativeThread> threads;
  std::vector<std::string> stack_errors;  // degradations of native capture
  PythonStacks python;
};

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_DUMP_H_
