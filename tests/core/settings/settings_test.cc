// core/settings: every NCCLWATCH_* variable, the one parsing policy, the launcher's job and
// rank variables, and README.md's Configuration table against Settings' own list.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/settings/settings.h"

namespace ncclwatch::settings {
namespace {

constexpr uint64_t kNsPerSec = detect::kNsPerSec;
constexpr uint64_t kNsPerMs = detect::kNsPerMs;

bool Mentions(const std::vector<std::string>& warnings, const std::string& text) {
  for (const std::string& w : warnings) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("an empty environment gives the documented defaults", "[defaults]") {
  std::vector<std::string> warnings;
  const Settings s = ParseSettings({}, &warnings);
  CHECK(warnings.empty());
  CHECK_FALSE(s.disable);
  CHECK(s.stall_threshold_ns == 60 * kNsPerSec);
  CHECK(s.poll_interval_ns == 500 * kNsPerMs);
  CHECK(s.dump_dir.empty());
  CHECK(s.job_id == "default");
  CHECK(s.trigger_job_id == "default");
  CHECK(s.log_level == LogLevel::kWarn);
  CHECK(s.ring_capacity == 1024);
  CHECK(s.lone_rank_factor == 10.0);
  CHECK_FALSE(s.adaptive);
  CHECK(s.stack_timeout_ms == 300);
  CHECK(s.stack_signal == 0);
  CHECK(s.python_stack_signal == 0);
  CHECK(s.stack_max_threads == 1024);
  CHECK_FALSE(s.backtrace_unwinder);
  CHECK(s.symbolizer.empty());
  CHECK_FALSE(s.faulthandler_python);
  CHECK(s.launcher_rank.global_rank == -1);
  CHECK(s.nccl_env.empty());
  // The libraries' own defaults agree with the settings' defaults.
  const detect::DetectConfig config = DetectConfigOf(s);
  CHECK(config.stall_threshold_ns == detect::DetectConfig{}.stall_threshold_ns);
  CHECK(config.poll_interval_ns == detect::DetectConfig{}.poll_interval_ns);
  CHECK(config.lone_rank_factor == detect::DetectConfig{}.lone_rank_factor);
  CHECK(config.adaptive == detect::DetectConfig{}.adaptive);
  const CaptureOptions capture = CaptureOptionsOf(s);
  CHECK(capture.timeout == CaptureOptions{}.timeout);
  CHECK(capture.native_signal == CaptureOptions{}.native_signal);
  CHECK(capture.max_threads == CaptureOptions{}.max_threads);
}

TEST_CASE("every variable overrides its default", "[values]") {
  const int signal = SIGRTMIN + 3;
  std::vector<std::string> warnings;
  const Settings s = ParseSettings({{"NCCLWATCH_DISABLE", "1"},
                                    {"NCCLWATCH_STALL_SEC", "2.5"},
                                    {"NCCLWATCH_POLL_MS", "250"},
                                    {"NCCLWATCH_DUMP_DIR", "/shared/dumps//"},
                                    {"NCCLWATCH_JOB_ID", "my job"},
                                    {"NCCLWATCH_TRIGGER_JOB_ID", "shared"},
                                    {"NCCLWATCH_LOG_LEVEL", "debug"},
                                    {"NCCLWATCH_RING", "100"},
                                    {"NCCLWATCH_LONE_RANK_FACTOR", "4"},
                                    {"NCCLWATCH_ADAPTIVE", "1"},
                                    {"NCCLWATCH_STACK_TIMEOUT_MS", "750"},
                                    {"NCCLWATCH_STACK_SIGNAL", std::to_string(signal)},
                                    {"NCCLWATCH_PYTHON_STACK_SIGNAL", std::to_string(signal + 1)},
                                    {"NCCLWATCH_STACK_MAX_THREADS", "64"},
                                    {"NCCLWATCH_STACK_UNWINDER", "backtrace"},
                                    {"NCCLWATCH_SYMBOLIZER", "none"},
                                    {"NCCLWATCH_PYTHON_STACKS", "faulthandler"}},
                                   &warnings);
  CHECK(warnings.empty());
  CHECK(s.disable);
  CHECK(s.stall_threshold_ns == 2'500'000'000ull);
  CHECK(s.poll_interval_ns == 250 * kNsPerMs);
  CHECK(s.dump_dir == "/shared/dumps");
  CHECK(s.job_id == "my_job");
  CHECK(s.trigger_job_id == "shared");
  CHECK(s.log_level == LogLevel::kDebug);
  CHECK(s.ring_capacity == 128);  // rounded up to a power of two
  CHECK(s.lone_rank_factor == 4.0);
  CHECK(s.adaptive);
  CHECK(s.stack_timeout_ms == 750);
  CHECK(s.stack_signal == signal);
  CHECK(s.python_stack_signal == signal + 1);
  CHECK(s.stack_max_threads == 64);
  CHECK(s.backtrace_unwinder);
  CHECK(s.symbolizer == "none");
  CHECK(s.faulthandler_python);

  const detect::DetectConfig config = DetectConfigOf(s);
  CHECK(config.stall_threshold_ns == 2'500'000'000ull);
  CHECK(config.poll_interval_ns == 250 * kNsPerMs);
  CHECK(config.lone_rank_factor == 4.0);
  CHECK(config.adaptive);
  const CaptureOptions capture = CaptureOptionsOf(s);
  CHECK(capture.timeout == std::chrono::milliseconds(750));
  CHECK(capture.native_signal == signal);
  CHECK(capture.python_signal == signal + 1);
  CHECK(capture.max_threads == 64);
  CHECK(capture.backtrace_unwinder);
  CHECK(capture.symbolizer == "none");
  CHECK(capture.faulthandler_python);
}

TEST_CASE("a rejected value keeps the default with one warning naming variable, value and range", "[policy]") {
  const std::map<std::string, std::string> bad = {
      {"NCCLWATCH_DISABLE", "true"},          {"NCCLWATCH_STALL_SEC", "soon"},
      {"NCCLWATCH_POLL_MS", "0"},             {"NCCLWATCH_LOG_LEVEL", "trace"},
      {"NCCLWATCH_RING", "8"},                {"NCCLWATCH_LONE_RANK_FACTOR", "0.5"},
      {"NCCLWATCH_ADAPTIVE", "yes"},          {"NCCLWATCH_STACK_TIMEOUT_MS", "10s"},
      {"NCCLWATCH_STACK_SIGNAL", "15"},       {"NCCLWATCH_PYTHON_STACK_SIGNAL", "2"},
      {"NCCLWATCH_STACK_MAX_THREADS", "-1"},  {"NCCLWATCH_STACK_UNWINDER", "gdb"},
      {"NCCLWATCH_PYTHON_STACKS", "py-spy"}};
  EnvVars env;
  for (const auto& [name, value] : bad) env[name] = value;
  std::vector<std::string> warnings;
  const Settings s = ParseSettings(env, &warnings);
  CHECK(warnings.size() == bad.size());
  for (const auto& [name, value] : bad) {
    INFO(name);
    CHECK(Mentions(warnings, name + "=" + value + " ignored: expected "));
  }
  CHECK(Mentions(warnings,
                 "NCCLWATCH_POLL_MS=0 ignored: expected milliseconds in [1e-06, 1e+13]; using the default 500"));
  CHECK(Mentions(warnings, "NCCLWATCH_STACK_SIGNAL=15 ignored: expected a real-time signal number in [" +
                               std::to_string(SIGRTMIN) + ", " + std::to_string(SIGRTMAX) + "]"));
  CHECK(Mentions(warnings, "NCCLWATCH_RING=8 ignored: expected an integer in [16, 65536]; using the default 1024"));
  // Every field kept its default.
  const Settings defaults = ParseSettings({});
  CHECK(s.disable == defaults.disable);
  CHECK(s.stall_threshold_ns == defaults.stall_threshold_ns);
  CHECK(s.poll_interval_ns == defaults.poll_interval_ns);
  CHECK(s.log_level == defaults.log_level);
  CHECK(s.ring_capacity == defaults.ring_capacity);
  CHECK(s.lone_rank_factor == defaults.lone_rank_factor);
  CHECK(s.adaptive == defaults.adaptive);
  CHECK(s.stack_timeout_ms == defaults.stack_timeout_ms);
  CHECK(s.stack_signal == defaults.stack_signal);
  CHECK(s.python_stack_signal == defaults.python_stack_signal);
  CHECK(s.stack_max_threads == defaults.stack_max_threads);
  CHECK(s.backtrace_unwinder == defaults.backtrace_unwinder);
  CHECK(s.faulthandler_python == defaults.faulthandler_python);
}

TEST_CASE("empty values count as unset; without a warnings list nothing is reported", "[policy]") {
  std::vector<std::string> warnings;
  const Settings s = ParseSettings({{"NCCLWATCH_STALL_SEC", ""}, {"NCCLWATCH_JOB_ID", ""}}, &warnings);
  CHECK(warnings.empty());
  CHECK(s.stall_threshold_ns == 60 * kNsPerSec);
  CHECK(s.job_id == "default");
  CHECK(ParseSettings({{"NCCLWATCH_STALL_SEC", "x"}}).stall_threshold_ns == 60 * kNsPerSec);
}

TEST_CASE("a warning escapes control characters of the value", "[policy]") {
  std::vector<std::string> warnings;
  ParseSettings({{"NCCLWATCH_LOG_LEVEL", "warn\n\x1b[2J"}}, &warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find('\n') == std::string::npos);
  CHECK(warnings[0].find('\x1b') == std::string::npos);
  CHECK(warnings[0].find("NCCLWATCH_LOG_LEVEL=warn\\n\\x1b[2J ignored") != std::string::npos);
}

TEST_CASE("durations that overflow or round to 0 ns are rejected; the bounds are accepted", "[durations]") {
  for (const char* huge : {"1e300", "1.0000001e10", "inf", "nan"}) {
    std::vector<std::string> warnings;
    const Settings s = ParseSettings({{"NCCLWATCH_STALL_SEC", huge}, {"NCCLWATCH_POLL_MS", "1e17"}}, &warnings);
    CHECK(s.stall_threshold_ns == 60 * kNsPerSec);
    CHECK(s.poll_interval_ns == 500 * kNsPerMs);
    CHECK(warnings.size() == 2);
  }
  std::vector<std::string> warnings;
  Settings s = ParseSettings({{"NCCLWATCH_STALL_SEC", "1e-10"}, {"NCCLWATCH_POLL_MS", "1e-7"}}, &warnings);
  CHECK(s.stall_threshold_ns == 60 * kNsPerSec);
  CHECK(s.poll_interval_ns == 500 * kNsPerMs);
  CHECK(warnings.size() == 2);
  s = ParseSettings({{"NCCLWATCH_STALL_SEC", "1e10"}, {"NCCLWATCH_POLL_MS", "1e-6"}});
  CHECK(s.stall_threshold_ns == 10'000'000'000ull * kNsPerSec);
  CHECK(s.poll_interval_ns == 1);
}

TEST_CASE("integer ranges: bounds accepted, one past rejected", "[ranges]") {
  CHECK(ParseSettings({{"NCCLWATCH_RING", "16"}}).ring_capacity == 16);
  CHECK(ParseSettings({{"NCCLWATCH_RING", "65536"}}).ring_capacity == 65536);
  CHECK(ParseSettings({{"NCCLWATCH_RING", "65537"}}).ring_capacity == 1024);
  CHECK(ParseSettings({{"NCCLWATCH_RING", "1024.0"}}).ring_capacity == 1024);
  CHECK(ParseSettings({{"NCCLWATCH_RING", "2048 "}}).ring_capacity == 1024);
  CHECK(ParseSettings({{"NCCLWATCH_STACK_TIMEOUT_MS", "1"}}).stack_timeout_ms == 1);
  CHECK(ParseSettings({{"NCCLWATCH_STACK_TIMEOUT_MS", "600000"}}).stack_timeout_ms == 600000);
  CHECK(ParseSettings({{"NCCLWATCH_STACK_TIMEOUT_MS", "600001"}}).stack_timeout_ms == 300);
  CHECK(ParseSettings({{"NCCLWATCH_STACK_MAX_THREADS", "0"}}).stack_max_threads == 1024);
  CHECK(ParseSettings({{"NCCLWATCH_STACK_SIGNAL", std::to_string(SIGRTMIN)}}).stack_signal == SIGRTMIN);
  CHECK(ParseSettings({{"NCCLWATCH_STACK_SIGNAL", std::to_string(SIGRTMAX)}}).stack_signal == SIGRTMAX);
  CHECK(ParseSettings({{"NCCLWATCH_STACK_SIGNAL", std::to_string(SIGRTMAX + 1)}}).stack_signal == 0);
  CHECK(ParseSettings({{"NCCLWATCH_DISABLE", "0"}}).disable == false);
  CHECK(ParseSettings({{"NCCLWATCH_LONE_RANK_FACTOR", "1"}}).lone_rank_factor == 1.0);
}

TEST_CASE("job id precedence: NCCLWATCH_JOB_ID, TORCHELASTIC_RUN_ID, SLURM_JOB_ID, master", "[job]") {
  EnvVars env = {{"NCCLWATCH_JOB_ID", "mine"},
                 {"TORCHELASTIC_RUN_ID", "te"},
                 {"SLURM_JOB_ID", "42"},
                 {"MASTER_ADDR", "10.0.0.1"},
                 {"MASTER_PORT", "29500"}};
  CHECK(ParseSettings(env).job_id == "mine");
  env.erase("NCCLWATCH_JOB_ID");
  CHECK(ParseSettings(env).job_id == "te");
  env["TORCHELASTIC_RUN_ID"] = "";  // empty counts as unset
  CHECK(ParseSettings(env).job_id == "42");
  env.erase("SLURM_JOB_ID");
  CHECK(ParseSettings(env).job_id == "10.0.0.1_29500");
  CHECK(ParseSettings(env).trigger_job_id == "10.0.0.1_29500");  // follows the job id
  env.erase("MASTER_PORT");
  CHECK(ParseSettings(env).job_id == "default");
  CHECK(ParseSettings({{"NCCLWATCH_JOB_ID", std::string(100, 'j')}}).job_id.size() <= 64);
}

TEST_CASE("rank comes from torchrun, then SLURM, then Open MPI", "[rank]") {
  EnvVars env = {{"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "8"}, {"OMPI_COMM_WORLD_RANK", "6"}};
  shm::RankIdentity id = ParseSettings(env).launcher_rank;
  CHECK(id.global_rank == 5);
  CHECK(id.local_rank == 1);
  CHECK(id.world_size == 8);
  CHECK(id.source == shm::RankSource::kSlurm);
  env["RANK"] = "3";
  env["WORLD_SIZE"] = "4";
  id = ParseSettings(env).launcher_rank;
  CHECK(id.global_rank == 3);
  CHECK(id.local_rank == -1);
  CHECK(id.world_size == 4);
  CHECK(id.source == shm::RankSource::kTorchrun);
  id = ParseSettings({{"OMPI_COMM_WORLD_RANK", "6"}, {"RANK", "garbage"}}).launcher_rank;
  CHECK(id.global_rank == 6);
  CHECK(id.source == shm::RankSource::kOpenMpi);
  id = ParseSettings({{"RANK", "-2"}}).launcher_rank;
  CHECK(id.global_rank == -1);
  CHECK(id.source == shm::RankSource::kUnknown);
}

TEST_CASE("the attempt comes from TORCHELASTIC_RESTART_COUNT and SLURM_RESTART_COUNT, whatever gave the rank",
          "[rank]") {
  shm::RankIdentity id = ParseSettings({}).launcher_rank;
  CHECK(id.restart_count == -1);
  CHECK(id.requeue_count == -1);
  id = ParseSettings({{"TORCHELASTIC_RESTART_COUNT", "2"}, {"SLURM_RESTART_COUNT", "1"}}).launcher_rank;
  CHECK(id.global_rank == -1);  // no rank given: the attempt still is
  CHECK(id.restart_count == 2);
  CHECK(id.requeue_count == 1);
  id = ParseSettings({{"RANK", "1"}, {"TORCHELASTIC_RESTART_COUNT", "x"}, {"SLURM_RESTART_COUNT", "-1"}}).launcher_rank;
  CHECK(id.global_rank == 1);
  CHECK(id.restart_count == -1);
  CHECK(id.requeue_count == -1);
}

TEST_CASE("NCCL_* variables, PATH and LD_PRELOAD are kept; other variables are not", "[environment]") {
  const Settings s = ParseSettings({{"NCCL_DEBUG", "INFO"},
                                    {"NCCL_SOCKET_IFNAME", "eth0"},
                                    {"NCCLX", "no"},
                                    {"HOME", "/root"},
                                    {"PATH", "/usr/bin:/bin"},
                                    {"LD_PRELOAD", "libx.so"}});
  CHECK(s.nccl_env == std::map<std::string, std::string>{{"NCCL_DEBUG", "INFO"}, {"NCCL_SOCKET_IFNAME", "eth0"}});
  CHECK(s.path == "/usr/bin:/bin");
  CHECK(s.ld_preload == "libx.so");
}

TEST_CASE("ReadSettings and ReadDisable see the process environment", "[process]") {
  setenv("NCCLWATCH_STALL_SEC", "7", 1);
  setenv("NCCL_NCCLWATCH_SETTINGS_TEST", "on", 1);
  setenv("NCCLWATCH_DISABLE", "1", 1);
  std::vector<std::string> warnings;
  Settings s = ReadSettings(&warnings);
  CHECK(s.stall_threshold_ns == 7 * kNsPerSec);
  CHECK(s.nccl_env.at("NCCL_NCCLWATCH_SETTINGS_TEST") == "on");
  CHECK(s.disable);
  CHECK(ReadDisable());
  setenv("NCCLWATCH_DISABLE", "yes", 1);  // rejected alike by both
  CHECK_FALSE(ReadDisable());
  CHECK_FALSE(ReadSettings().disable);
  unsetenv("NCCLWATCH_DISABLE");
  unsetenv("NCCLWATCH_STALL_SEC");
  unsetenv("NCCL_NCCLWATCH_SETTINGS_TEST");
  CHECK_FALSE(ReadDisable());
}

TEST_CASE("another process's environment is read from /proc/PID/environ", "[process]") {
  char name[] = "NCCL_NCCLWATCH_CHILD=seen";
  char path[] = "PATH=/nowhere";
  char* child_env[] = {name, path, nullptr};
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    execle("/bin/sleep", "sleep", "10", static_cast<char*>(nullptr), child_env);
    _exit(127);
  }
  EnvVars env;
  for (int i = 0; i < 200 && env.count("NCCL_NCCLWATCH_CHILD") == 0; ++i) {  // until exec is done, <= 2 s
    usleep(10'000);
    env = ReadEnvironmentOf(child);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  CHECK(env == EnvVars{{"NCCL_NCCLWATCH_CHILD", "seen"}, {"PATH", "/nowhere"}});
  CHECK(ReadEnvironmentOf(child).empty());  // gone
}

struct ReadmeRow {
  std::string meaning;       // as written
  std::string default_text;  // without backquotes
};

// README.md's "## Configuration" table: `| `NAME` | meaning | default |`.
std::map<std::string, ReadmeRow> ReadmeVariables() {
  std::ifstream in(NCCLWATCH_README_PATH);
  REQUIRE(in.good());
  std::map<std::string, ReadmeRow> rows;
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Configuration";
    if (!in_section || line.rfind("| `NCCLWATCH_", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    std::string cell;
    while (std::getline(row, cell, '|')) {
      const size_t first = cell.find_first_not_of(' ');
      const size_t last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    }
    REQUIRE(cells.size() >= 3);
    auto strip = [](std::string text) {
      std::string out;
      for (char c : text) {
        if (c != '`') out += c;
      }
      return out;
    };
    rows[strip(cells[0])] = {cells[1], strip(cells[2])};
  }
  return rows;
}

TEST_CASE("README.md's Configuration table lists exactly the settings, with their meaning and default", "[readme]") {
  const std::map<std::string, ReadmeRow> readme = ReadmeVariables();
  std::set<std::string> names;
  for (const Variable& v : Variables()) {
    INFO(v.name);
    names.insert(v.name);
    REQUIRE(readme.count(v.name) == 1);
    CHECK(readme.at(v.name).meaning == v.meaning);
    CHECK(readme.at(v.name).default_text == v.default_text);
  }
  for (const auto& [name, row] : readme) {
    INFO(name << " is in README.md but not a setting");
    CHECK(names.count(name) == 1);
  }
  CHECK(names.size() == Variables().size());  // no name twice
}

TEST_CASE("every listed variable states its meaning, default and what it accepts", "[readme]") {
  for (const Variable& v : Variables()) {
    INFO(v.name);
    CHECK(v.name.rfind("NCCLWATCH_", 0) == 0);
    CHECK_FALSE(v.meaning.empty());
    CHECK_FALSE(v.default_text.empty());
    CHECK_FALSE(v.accepted.empty());
  }
}

}  // namespace
}  // namespace ncclwatch::settings
