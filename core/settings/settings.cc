#include "core/settings/settings.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>

#include "core/format/escape.h"
#include "core/shm/layout.h"
#include "core/shm/segment_name.h"

extern char** environ;

namespace ncclwatch::settings {
namespace {

constexpr uint64_t kNsPerSec = detect::kNsPerSec;
constexpr uint64_t kNsPerMs = detect::kNsPerMs;
// Durations are uint64_t nanoseconds: a value must convert to at least 1 ns and at most
// 1e19 ns (uint64_t holds 1.8e19; converting a larger double is undefined behaviour).
constexpr double kMaxNs = 1e19;
// A capture that waits 10 minutes for threads is no longer a snapshot of the hang.
constexpr int kMaxStackTimeoutMs = 600'000;
// Slots are preallocated (anonymous pages, touched only by a capture); 65536 threads is
// far beyond any training process.
constexpr long long kMaxStackThreads = 65'536;

std::optional<double> ParseNumber(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || stop != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<long long> ParseInteger(std::string_view text) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || stop != end) return std::nullopt;
  return value;
}

// Seconds or milliseconds to nanoseconds, within [1 ns, kMaxNs].
bool ParseDuration(std::string_view text, uint64_t ns_per_unit, uint64_t* out) {
  const std::optional<double> value = ParseNumber(text);
  if (!value || *value < 1.0 / ns_per_unit || *value > kMaxNs / ns_per_unit) return false;
  *out = std::max<uint64_t>(1, static_cast<uint64_t>(*value * ns_per_unit));
  return true;
}

template <typename T>
bool ParseIntegerIn(std::string_view text, long long min_value, long long max_value, T* out) {
  const std::optional<long long> value = ParseInteger(text);
  if (!value || *value < min_value || *value > max_value) return false;
  *out = static_cast<T>(*value);
  return true;
}

bool ParseSignal(std::string_view text, int* out) { return ParseIntegerIn(text, SIGRTMIN, SIGRTMAX, out); }

bool ParseLogLevel(std::string_view text, LogLevel* out) {
  struct Name {
    std::string_view name;
    LogLevel level;
  };
  for (const Name& n : {Name{"debug", LogLevel::kDebug}, Name{"info", LogLevel::kInfo}, Name{"warn", LogLevel::kWarn},
                        Name{"error", LogLevel::kError}, Name{"off", LogLevel::kOff}}) {
    if (text == n.name) {
      *out = n.level;
      return true;
    }
  }
  return false;
}

// One of two words: `second` sets the flag, `first` clears it.
bool ParseChoice(std::string_view text, std::string_view first, std::string_view second, bool* out) {
  if (text != first && text != second) return false;
  *out = text == second;
  return true;
}

using Apply = std::function<bool(std::string_view value, Settings* settings)>;

struct Row {
  Variable variable;
  Apply apply;  // false: the value is rejected and the default kept
};

std::string SignalRange() {
  return "a real-time signal number in [" + std::to_string(SIGRTMIN) + ", " + std::to_string(SIGRTMAX) + "]";
}

std::vector<Row> MakeRows() {
  std::vector<Row> rows;
  auto add = [&](std::string name, std::string meaning, std::string default_text, std::string accepted, Apply apply) {
    Variable variable{std::move(name), std::move(meaning), std::move(default_text), std::move(accepted)};
    rows.push_back({std::move(variable), std::move(apply)});
  };
  add("NCCLWATCH_DISABLE", "`1`: every hook is a pure pass-through", "0", "0 or 1",
      [](std::string_view v, Settings* s) { return ParseChoice(v, "0", "1", &s->disable); });
  add("NCCLWATCH_STALL_SEC", "stall threshold, seconds (fractional)", "60", "seconds in [1e-09, 1e+10]",
      [](std::string_view v, Settings* s) { return ParseDuration(v, kNsPerSec, &s->stall_threshold_ns); });
  add("NCCLWATCH_POLL_MS", "watchdog poll interval, ms (fractional)", "500", "milliseconds in [1e-06, 1e+13]",
      [](std::string_view v, Settings* s) { return ParseDuration(v, kNsPerMs, &s->poll_interval_ns); });
  add("NCCLWATCH_LAST_GASP_FLOOR_SEC",
      "a rank torn down (SIGTERM, SIGINT, SIGABRT, comm abort/revoke) dumps first if it has waited this long, seconds",
      "1", "seconds in [1e-09, 1e+10]",
      [](std::string_view v, Settings* s) { return ParseDuration(v, kNsPerSec, &s->last_gasp_floor_ns); });
  add("NCCLWATCH_LAST_GASP_SEC", "how long teardown waits for that dump, seconds; `0`: no last-gasp dumps", "3",
      "seconds in [0, 600]", [](std::string_view v, Settings* s) {
        if (v == "0") {
          s->last_gasp_budget_ns = 0;
          return true;
        }
        uint64_t budget = 0;
        if (!ParseDuration(v, kNsPerSec, &budget) || budget > 600 * kNsPerSec) return false;
        s->last_gasp_budget_ns = budget;
        return true;
      });
  add("NCCLWATCH_DUMP_DIR", "where dumps and trigger files go (a shared file system for multi-node jobs)",
      "./ncclwatch-dumps/<job>", "a path", [](std::string_view v, Settings* s) {
        while (v.size() > 1 && v.back() == '/') v.remove_suffix(1);
        s->dump_dir = std::string(v);
        return true;
      });
  add("NCCLWATCH_JOB_ID", "job id (else `TORCHELASTIC_RUN_ID`, `SLURM_JOB_ID`, `MASTER_ADDR:MASTER_PORT`)",
      "see left", "any text (sanitized to [A-Za-z0-9_.-], 64 bytes)", [](std::string_view v, Settings* s) {
        s->job_id = shm::SanitizeJobId(v);
        return true;
      });
  add("NCCLWATCH_TRIGGER_JOB_ID",
      "job id written into and required in trigger files, when hosts were given different job ids", "the job id",
      "any text (sanitized to [A-Za-z0-9_.-], 64 bytes)", [](std::string_view v, Settings* s) {
        s->trigger_job_id = shm::SanitizeJobId(v);
        return true;
      });
  add("NCCLWATCH_LOG_LEVEL", "`off`, `error`, `warn`, `info`, `debug`", "warn", "off, error, warn, info or debug",
      [](std::string_view v, Settings* s) { return ParseLogLevel(v, &s->log_level); });
  add("NCCLWATCH_RING", "records kept per communicator, 16 to 65536 (rounded up to a power of two)", "1024",
      "an integer in [" + std::to_string(shm::kMinRingCapacity) + ", " + std::to_string(shm::kMaxRingCapacity) + "]",
      [](std::string_view v, Settings* s) {
        uint64_t requested = 0;
        if (!ParseIntegerIn(v, shm::kMinRingCapacity, shm::kMaxRingCapacity, &requested)) return false;
        s->ring_capacity = shm::NormalizeRingCapacity(requested);
        return true;
      });
  add("NCCLWATCH_LONE_RANK_FACTOR",
      "a rank alone on its host is hung after max(threshold, factor x its median collective interval)", "10",
      "a number >= 1", [](std::string_view v, Settings* s) {
        const std::optional<double> value = ParseNumber(v);
        if (!value || *value < 1) return false;
        s->lone_rank_factor = *value;
        return true;
      });
  add("NCCLWATCH_ADAPTIVE", "`1`: threshold from each communicator's cadence (see core/detect/README.md)", "0",
      "0 or 1", [](std::string_view v, Settings* s) { return ParseChoice(v, "0", "1", &s->adaptive); });
  add("NCCLWATCH_CAPTURE_QUERY",
      "`always`: ask CUDA about stream capture on every op, even with no capture seen to begin (preload/observe/capture_watch.h)",
      "auto", "auto or always",
      [](std::string_view v, Settings* s) { return ParseChoice(v, "auto", "always", &s->capture_query_always); });
  add("NCCLWATCH_STACK_TIMEOUT_MS", "how long a dump waits for threads to answer", "300",
      "an integer in [1, " + std::to_string(kMaxStackTimeoutMs) + "]",
      [](std::string_view v, Settings* s) { return ParseIntegerIn(v, 1, kMaxStackTimeoutMs, &s->stack_timeout_ms); });
  add("NCCLWATCH_STACK_SIGNAL", "real-time signal used for native stack capture", "highest free", SignalRange(),
      [](std::string_view v, Settings* s) { return ParseSignal(v, &s->stack_signal); });
  add("NCCLWATCH_PYTHON_STACK_SIGNAL", "real-time signal used by the Python faulthandler fallback", "highest free",
      SignalRange(), [](std::string_view v, Settings* s) { return ParseSignal(v, &s->python_stack_signal); });
  add("NCCLWATCH_STACK_MAX_THREADS", "threads captured per dump", "1024",
      "an integer in [1, " + std::to_string(kMaxStackThreads) + "]",
      [](std::string_view v, Settings* s) { return ParseIntegerIn(v, 1, kMaxStackThreads, &s->stack_max_threads); });
  add("NCCLWATCH_STACK_UNWINDER", "`backtrace` forces glibc backtrace() over libunwind", "libunwind",
      "libunwind or backtrace",
      [](std::string_view v, Settings* s) { return ParseChoice(v, "libunwind", "backtrace", &s->backtrace_unwinder); });
  add("NCCLWATCH_SYMBOLIZER", "path of `libncclwatch_symbolizer.so`, or `none`", "next to the library",
      "a path or none", [](std::string_view v, Settings* s) {
        s->symbolizer = std::string(v);
        return true;
      });
  add("NCCLWATCH_PYTHON_STACKS", "`faulthandler` forces the Python fallback", "direct", "direct or faulthandler",
      [](std::string_view v, Settings* s) {
        return ParseChoice(v, "direct", "faulthandler", &s->faulthandler_python);
      });
  add("NCCLWATCH_CALL_SITES",
      "`1`: record the Python file:line that issued each op (about 0.1-0.2 us per op; off: nothing)", "0",
      "0 or 1", [](std::string_view v, Settings* s) { return ParseChoice(v, "0", "1", &s->call_sites); });
  return rows;
}

const std::vector<Row>& Rows() {
  static const std::vector<Row>* rows = new std::vector<Row>(MakeRows());  // never destroyed: read at exit too
  return *rows;
}

const char* NonEmpty(const EnvVars& env, std::string_view name) {
  const auto it = env.find(name);
  return it != env.end() && !it->second.empty() ? it->second.c_str() : nullptr;
}

std::string LauncherJobId(const EnvVars& env) {
  for (std::string_view name : {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID"}) {
    if (const char* value = NonEmpty(env, name)) return shm::SanitizeJobId(value);
  }
  const char* addr = NonEmpty(env, "MASTER_ADDR");
  const char* port = NonEmpty(env, "MASTER_PORT");
  if (addr != nullptr && port != nullptr) return shm::SanitizeJobId(std::string(addr) + ":" + port);
  return shm::SanitizeJobId("");
}

int NonNegativeOr(const EnvVars& env, std::string_view name, int fallback) {
  const char* value = NonEmpty(env, name);
  int parsed = 0;
  return value != nullptr && ParseIntegerIn(value, 0, INT32_MAX, &parsed) ? parsed : fallback;
}

bool TryLauncher(const EnvVars& env, std::string_view rank, std::string_view local, std::string_view world,
                 shm::RankSource source, shm::RankIdentity* out) {
  const int global_rank = NonNegativeOr(env, rank, -1);
  if (global_rank < 0) return false;
  out->global_rank = global_rank;
  out->local_rank = NonNegativeOr(env, local, -1);
  out->world_size = NonNegativeOr(env, world, -1);
  out->source = source;
  return true;
}

shm::RankIdentity LauncherRank(const EnvVars& env) {
  shm::RankIdentity id;
  if (!TryLauncher(env, "RANK", "LOCAL_RANK", "WORLD_SIZE", shm::RankSource::kTorchrun, &id) &&
      !TryLauncher(env, "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", shm::RankSource::kSlurm, &id) &&
      !TryLauncher(env, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
                   shm::RankSource::kOpenMpi, &id)) {
    id = shm::RankIdentity{};
  }
  // The attempt, whichever launcher gave the rank: torchrun restarts inside a SLURM requeue.
  id.restart_count = NonNegativeOr(env, "TORCHELASTIC_RESTART_COUNT", -1);
  id.requeue_count = NonNegativeOr(env, "SLURM_RESTART_COUNT", -1);
  id.max_restarts = NonNegativeOr(env, "TORCHELASTIC_MAX_RESTARTS", -1);
  return id;
}

void AddEntry(std::string_view entry, EnvVars* env) {
  const size_t eq = entry.find('=');
  if (eq != std::string_view::npos) env->emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
}

}  // namespace

const std::vector<Variable>& Variables() {
  static const std::vector<Variable>* variables = [] {
    auto* out = new std::vector<Variable>;
    for (const Row& row : Rows()) out->push_back(row.variable);
    return out;
  }();
  return *variables;
}

Settings ParseSettings(const EnvVars& env, std::vector<std::string>* warnings) {
  Settings settings;
  bool job_id_given = false;
  bool trigger_job_id_given = false;
  for (const Row& row : Rows()) {
    const char* value = NonEmpty(env, row.variable.name);
    if (value == nullptr) continue;
    if (row.apply(value, &settings)) {
      job_id_given |= row.variable.name == "NCCLWATCH_JOB_ID";
      trigger_job_id_given |= row.variable.name == "NCCLWATCH_TRIGGER_JOB_ID";
    } else if (warnings != nullptr) {
      warnings->push_back(row.variable.name + "=" + format::EscapeForTerminal(value) + " ignored: expected " +
                          row.variable.accepted + "; using the default " + row.variable.default_text);
    }
  }
  if (!job_id_given) settings.job_id = LauncherJobId(env);
  if (!trigger_job_id_given) settings.trigger_job_id = settings.job_id;
  settings.launcher_rank = LauncherRank(env);
  for (const auto& [name, value] : env) {
    if (name.rfind("NCCL_", 0) == 0) settings.nccl_env.emplace(name, value);
  }
  if (const char* path = NonEmpty(env, "PATH")) settings.path = path;
  if (const char* preload = NonEmpty(env, "LD_PRELOAD")) settings.ld_preload = preload;
  return settings;
}

Settings ReadSettings(std::vector<std::string>* warnings) {
  EnvVars env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) AddEntry(*entry, &env);
  return ParseSettings(env, warnings);
}

bool ReadDisable() {
  const char* value = std::getenv("NCCLWATCH_DISABLE");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

EnvVars ReadEnvironmentOf(pid_t pid) {
  constexpr size_t kMaxBytes = 1 << 20;  // the kernel's own limit for argv + envp is a few MiB
  EnvVars env;
  const std::string path = "/proc/" + std::to_string(pid) + "/environ";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return env;
  std::string text;
  char buffer[8192];
  while (text.size() < kMaxBytes) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    AddEntry(std::string_view(text).substr(start, end - start), &env);
    start = end + 1;
  }
  return env;
}

detect::DetectConfig DetectConfigOf(const Settings& settings) {
  detect::DetectConfig config;
  config.stall_threshold_ns = settings.stall_threshold_ns;
  config.poll_interval_ns = settings.poll_interval_ns;
  config.lone_rank_factor = settings.lone_rank_factor;
  config.adaptive = settings.adaptive;
  return config;
}

CaptureOptions CaptureOptionsOf(const Settings& settings) {
  CaptureOptions options;
  options.timeout = std::chrono::milliseconds(settings.stack_timeout_ms);
  options.native_signal = settings.stack_signal;
  options.python_signal = settings.python_stack_signal;
  options.max_threads = settings.stack_max_threads;
  options.backtrace_unwinder = settings.backtrace_unwinder;
  options.symbolizer = settings.symbolizer;
  options.faulthandler_python = settings.faulthandler_python;
  return options;
}

}  // namespace ncclwatch::settings
