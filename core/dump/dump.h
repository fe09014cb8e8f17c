// The hang dump: everything one rank knows at the moment an incident is declared.
//
// Plain data, no behaviour. The watchdog of each rank fills one RankDump per incident and
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
#include <string>
#include <vector>

#include "core/stacks/process_stacks.h"

namespace ncclwatch::dump {

inline constexpr char kSchemaName[] = "ncclwatch.dump";
// 2: exit evidence (process.alive, process.exit, written_by, comms[].left, comms[].untracked_ops).
// Readers accept 1..kSchemaVersion; a version 1 dump reads as a live process's own dump.
inline constexpr int kSchemaVersion = 2;

struct Incident {
  std::string id;            // Same on every rank of one host for one incident.
  std::string trigger;       // "local", "trigger-file" or "lone-rank".
  std::string job_id;        // NCCLWATCH_JOB_ID, may be empty.
  uint64_t detected_mono_ns = 0;
  uint64_t detected_unix_ns = 0;
  std::string detected_iso;  // UTC, e.g. "2026-11-21T23:12:53.123456789Z".
};

// The verdict as this rank's host detector saw it; kind "none" when the dump was
// requested without a local diagnosis (e.g. trigger-file).
struct LocalVerdict {
  std::string kind = "none";  // straggler|mismatch|collective_hang|init_hang|sync_stuck|rank_exited|none
  uint64_t comm_hash = 0;
  uint64_t seq = 0;
  std::string op;
  std::vector<int> culprit_ranks;
  std::vector<int> other_ranks;
  uint64_t since_mono_ns = 0;
  std::string summary;
  bool partial = false;       // the host saw fewer ranks than the communicator has
};

// How a process that is gone left (layout.h's exit evidence, detect::ExitFacts).
struct ProcessExit {
  bool recorded = false;  // it recorded its exit; false: killed or crashed without a word
  int status = 0;         // exit status when recorded and not by signal
  int signal = 0;         // fatal signal when recorded by the crash path, else 0
  uint64_t exit_ns = 0;   // when, CLOCK_MONOTONIC of its host; 0 unknown
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
  ProcessExit exit;  // meaningful when !alive
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

struct CollectiveRecord {
  uint64_t seq = 0;
  std::string op;         // NCCL name without prefix: "AllReduce", "Broadcast", ...
  uint64_t count = 0;
  int datatype = -1;      // ncclDataType_t
  int redop = -1;         // ncclRedOp_t, -1 when the op has none
  int root = -1;          // -1 when the op has none
  int peer = -1;          // Send/Recv peer, -1 otherwise
  uint64_t stream = 0;    // cudaStream_t value
  uint64_t group = 0;     // the ncclGroupStart/End that launched it, 0 none (detect::RecordFacts::group)
  uint64_t enqueue_ns = 0;
  uint64_t complete_ns = 0;  // 0 while not known complete
  // Its completion is never published (captured, untracked or failed): kept so that
  // `analyze` computes completion as the live detector does (detect/completion.h).
  bool never_completes = false;
  // No completion event could be recorded: its completion is unknown, never counted complete
  // (detect::RecordFacts::untracked).
  bool untracked = false;
};

struct CommDump {
  uint64_t comm_hash = 0;
  int rank = -1;
  int nranks = 0;
  int device = -1;
  uint64_t init_started_ns = 0;
  uint64_t init_done_ns = 0;  // 0 while init has not finished
  uint64_t last_enqueued_seq = 0;
  uint64_t last_completed_seq = 0;
  int async_error = 0;        // ncclResult_t
  // This rank destroyed, finalized, aborted or revoked the communicator: it takes no further
  // part in it.
  bool left = false;
  uint64_t untracked_ops = 0;  // ops whose completion could not be tracked: unknown, never complete
  std::vector<CollectiveRecord> records;  // the last N, ascending seq
};

// One thread blocked in a host-side CUDA synchronisation.
struct HostSync {
  int32_t tid = 0;
  uint64_t since_ns = 0;
  std::string target;     // "stream", "event" or "device"
  uint64_t handle = 0;    // stream/event value, or the device ordinal
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
  LocalVerdict verdict;
  ProcessInfo process;
  DumpWriter written_by;  // set (pid != 0) only for a dump written on behalf of a gone process
  Environment environment;
  std::vector<CommDump> comms;
  std::vector<HostSync> host_syncs;
  std::vector<NativeThread> threads;
  std::vector<std::string> stack_errors;  // degradations of native capture
  PythonStacks python;
};

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_DUMP_H_
