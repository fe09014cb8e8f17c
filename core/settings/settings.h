// Every NCCLWATCH_* setting, read and validated in one place and passed down as plain data.
//
// settings.cc is the only file of core/, preload/ and tools/ that reads the environment:
// the NCCLWATCH_* variables below, the launcher's job and rank variables, the NCCL_*
// variables a dump records, PATH and LD_PRELOAD for the CLI, and another process's
// /proc/PID/environ. Everything else receives a Settings (or the part it needs).
//
// Parsing policy, one for every NCCLWATCH_* variable: unset or empty keeps the default; a
// value that is malformed or outside the accepted range also keeps the default and adds one
// warning line naming the variable, the value (escaped) and what is accepted:
//   NCCLWATCH_POLL_MS=0 ignored: expected milliseconds in [1e-06, 1e+13]; using the default 500
// Nothing throws and nothing aborts. Numbers are parsed whole ("10s" is malformed).
//
// Each field below states its variable, what is accepted, the default and the meaning.
// The same list, with the text README.md shows, is Variables(); a test checks README.md's
// Configuration table against it.
#ifndef NCCLWATCH_CORE_SETTINGS_SETTINGS_H_
#define NCCLWATCH_CORE_SETTINGS_SETTINGS_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/detect/detect_config.h"
#include "core/shm/job_identity.h"
#include "core/stacks/process_stacks.h"

namespace ncclwatch::settings {

// Environment variables, NAME -> VALUE.
using EnvVars = std::map<std::string, std::string, std::less<>>;

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

struct Settings {
  // NCCLWATCH_DISABLE (0 | 1, default 0): 1 makes every hook a pure pass-through.
  bool disable = false;
  // NCCLWATCH_STALL_SEC (seconds, fractional, 1e-9 .. 1e10, default 60): a collective, init
  // or host sync that has not progressed for this long is stalled. The bounds keep the value
  // at least 1 ns and at most 1e19 ns (uint64_t holds 1.8e19).
  uint64_t stall_threshold_ns = detect::DetectConfig{}.stall_threshold_ns;
  // NCCLWATCH_POLL_MS (ms, fractional, 1e-6 .. 1e13, default 500): watchdog poll interval.
  uint64_t poll_interval_ns = detect::DetectConfig{}.poll_interval_ns;
  // NCCLWATCH_LAST_GASP_FLOOR_SEC (seconds, fractional, 1e-9 .. 1e10, default 1): a rank torn
  // down (SIGTERM, SIGINT, SIGABRT, ncclCommAbort, ncclCommRevoke) dumps before it goes when
  // an op, init or host sync of its own has been pending this long, or an incident is open.
  // 1 s: far above a healthy op's time at teardown (a torchrun stop after a rank failed comes
  // seconds after the failure), so a job stopped while idle never dumps.
  uint64_t last_gasp_floor_ns = 1'000'000'000ull;
  // NCCLWATCH_LAST_GASP_SEC (seconds, fractional, 0 .. 600, default 3; 0 = no last-gasp
  // dumps): how long teardown may wait for that dump. 3 s: a dump takes 0.3-1 s (stack
  // capture is bounded by NCCLWATCH_STACK_TIMEOUT_MS), well inside the 30 s between SIGTERM
  // and SIGKILL of SLURM and Kubernetes.
  uint64_t last_gasp_budget_ns = 3'000'000'000ull;
  // NCCLWATCH_DUMP_DIR (a path, default empty = ./ncclwatch-dumps/<job id> under the working
  // directory at activation): where dumps and trigger files go. Trailing '/' removed.
  std::string dump_dir;
  // NCCLWATCH_JOB_ID (text, sanitized to [A-Za-z0-9_.-], at most 64 bytes), else
  // TORCHELASTIC_RUN_ID, SLURM_JOB_ID, "MASTER_ADDR:MASTER_PORT" (both needed), else
  // "default". Never empty.
  std::string job_id = "default";
  // NCCLWATCH_TRIGGER_JOB_ID (text, sanitized; default job_id): the job written into our
  // trigger files and required in the ones we act on, for hosts whose job ids differ.
  std::string trigger_job_id = "default";
  // NCCLWATCH_LOG_LEVEL (off | error | warn | info | debug, default warn).
  LogLevel log_level = LogLevel::kWarn;
  // NCCLWATCH_RING (integer 16 .. 65536, rounded up to a power of two, default 1024):
  // records kept per communicator.
  uint32_t ring_capacity = 1024;
  // NCCLWATCH_LONE_RANK_FACTOR (finite number >= 1, default 10): a rank alone on its host is
  // hung after max(threshold, factor x its median collective interval).
  double lone_rank_factor = detect::DetectConfig{}.lone_rank_factor;
  // NCCLWATCH_ADAPTIVE (0 | 1, default 0): thresholds from each communicator's cadence.
  bool adaptive = false;
  // Ask CUDA whether each op's stream captures, even when no capture was seen to begin.
  bool capture_query_always = false;
  // NCCLWATCH_STACK_TIMEOUT_MS (integer 1 .. 600000, default 300): how long a dump waits for
  // threads to answer the stack signal.
  int stack_timeout_ms = 300;
  // NCCLWATCH_STACK_SIGNAL, NCCLWATCH_PYTHON_STACK_SIGNAL (integer SIGRTMIN .. SIGRTMAX,
  // default 0 = the highest free real-time signal): signals of native and faulthandler capture.
  // Only real-time signals: taking SIGTERM or SIGINT would change how the job stops.
  int stack_signal = 0;
  int python_stack_signal = 0;
  // NCCLWATCH_STACK_MAX_THREADS (integer 1 .. 65536, default 1024): threads captured per dump.
  size_t stack_max_threads = 1024;
  // NCCLWATCH_STACK_UNWINDER (libunwind | backtrace, default libunwind): backtrace forces
  // glibc's backtrace().
  bool backtrace_unwinder = false;
  // NCCLWATCH_SYMBOLIZER (a path, or none; default empty = next to the library): the
  // libncclwatch_symbolizer.so to load.
  std::string symbolizer;
  // NCCLWATCH_PYTHON_STACKS (direct | faulthandler, default direct): faulthandler forces the
  // Python fallback.
  bool faulthandler_python = false;
  // NCCLWATCH_CALL_SITES (0 | 1, default 0): 1 records, for each collective and P2P op, the
  // innermost user Python frame that issued it ("train.py:88 in step"; preload/call_sites/call_sites.h),
  // shown in dumps and by analyze. Off by default: it adds about 0.1-0.2 us per op, beyond
  // the hook budget of 100 ns (BENCHMARKS.md, "call sites").
  bool call_sites = false;

  // Not NCCLWATCH_* (read here so that the environment is read in one place):
  // the rank from RANK/LOCAL_RANK/WORLD_SIZE (torchrun), else SLURM_PROCID/SLURM_LOCALID/
  // SLURM_NTASKS, else OMPI_COMM_WORLD_RANK/_LOCAL_RANK/_SIZE; a malformed or negative
  // RANK counts as unset and the next launcher is tried. Unknown: -1, from the communicators.
  // With it the attempt: TORCHELASTIC_RESTART_COUNT and SLURM_RESTART_COUNT (-1 when unset or
  // malformed).
  shm::RankIdentity launcher_rank;
  // Every NCCL_* variable, recorded in dumps and shown by `ncclwatch doctor`.
  std::map<std::string, std::string> nccl_env;
  // PATH and LD_PRELOAD, for the CLI (`doctor BINARY`, `run`).
  std::string path;
  std::string ld_preload;
};

// One row of the NCCLWATCH_* table, as README.md's Configuration section shows it.
struct Variable {
  std::string name;          // NCCLWATCH_...
  std::string meaning;
  std::string default_text;  // README's default column, without backquotes
  std::string accepted;      // what the warning says is expected
};
const std::vector<Variable>& Variables();

// Pure: the settings `env` gives. A rejected value is no error (its default is used): it
// appends one line to *warnings (when non-null), core's shape for warnings
// (core/status/status.h). Variables not in Variables() are ignored.
Settings ParseSettings(const EnvVars& env, std::vector<std::string>* warnings = nullptr);

// ParseSettings over the process environment (a snapshot of `environ`). Call once per
// process where its configuration is fixed (preload: activation; CLI: main).
Settings ReadSettings(std::vector<std::string>* warnings = nullptr);

// NCCLWATCH_DISABLE alone, as ReadSettings() would parse it (a rejected value is false),
// without allocating: the hooks need it before activation, while the preload is inert.
bool ReadDisable();

// The environment of another process, from /proc/PID/environ (at most 1 MiB read); empty
// when unreadable.
EnvVars ReadEnvironmentOf(pid_t pid);

// The parts other libraries take.
detect::DetectConfig DetectConfigOf(const Settings& settings);
CaptureOptions CaptureOptionsOf(const Settings& settings);

}  // namespace ncclwatch::settings

#endif  // NCCLWATCH_CORE_SETTINGS_SETTINGS_H_
