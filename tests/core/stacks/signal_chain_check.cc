// How the stack sampler shares its real-time signal with the job: signal_chain_check MODE
//   job_handler_same_signal   the job's SA_SIGINFO handler is on the sampler's signal
//   job_plain_handler_same_signal   the same with a plain (non-SA_SIGINFO) handler
//   job_handler_other_signal  the job's handler is on another real-time signal
//     In these three, a job thread tgkills a worker 300 times while the sampler samples
//     the worker: every one of the job's signals reaches its handler, none of ours does.
//   default_disposition       nothing was installed on the sampler's signal: the job's own
//                             tgkill of it kills the process, as it would without us
//   ignored_disposition       SIG_IGN was installed: the job's tgkill is ignored
//   refuse_sigterm / refuse_sigint   native_signal 15 / 2 (what core/settings never passes:
//                             it rejects NCCLWATCH_STACK_SIGNAL=15) is refused with a
//                             warning, a real-time signal is used, SIGTERM/SIGINT still kill
// Each mode runs in a child process (the sampler arms once per process). Exit 0 pass, 1 fail.
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/stacks/armed_options.h"
#include "core/stacks/native_sampler.h"

namespace ss = ncclwatch::stacks_internal;

namespace {

constexpr int kJobSignals = 300;
std::atomic<int> g_job_deliveries{0};
std::atomic<bool> g_stop{false};
std::atomic<pid_t> g_worker_tid{0};

void JobInfoHandler(int, siginfo_t*, void*) { g_job_deliveries.fetch_add(1); }
void JobPlainHandler(int) { g_job_deliveries.fetch_add(1); }

pid_t Gettid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

bool Expect(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
  return ok;
}

void InstallJobHandler(int sig, bool with_info) {
  struct sigaction action = {};
  sigemptyset(&action.sa_mask);
  if (with_info) {
    action.sa_sigaction = &JobInfoHandler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
  } else {
    action.sa_handler = &JobPlainHandler;
    action.sa_flags = SA_RESTART;
  }
  sigaction(sig, &action, nullptr);
}

bool ArmWithSignal(int sig) {
  ncclwatch::CaptureOptions options;
  options.native_signal = sig;  // 0: the default choice
  ss::FixArmedOptions(options);
  const ncclwatch::Status armed = ss::ArmNativeSampler();
  return Expect(armed.ok(), "sampler armed " + armed.message());
}

// The job signals a worker thread while the sampler samples the same worker.
int SharedSignal(int job_sig, int sampler_sig, bool with_info) {
  InstallJobHandler(job_sig, with_info);
  if (!ArmWithSignal(sampler_sig)) return 1;
  bool ok = Expect(ss::NativeSamplerSignal() == (sampler_sig ? sampler_sig : ss::NativeSamplerSignal()),
                   "sampler uses signal " + std::to_string(ss::NativeSamplerSignal()));
  std::thread worker([] {
    g_worker_tid = Gettid();
    while (!g_stop) std::this_thread::sleep_for(std::chrono::microseconds(200));
  });
  while (g_worker_tid == 0) std::this_thread::yield();
  const pid_t tid = g_worker_tid;
  std::thread job([tid, job_sig] {
    for (int i = 0; i < kJobSignals; ++i) {
      syscall(SYS_tgkill, getpid(), tid, job_sig);
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  // A worker still returning from our previous request has the signal blocked; signal it
  // anyway (it answers on return) rather than skip it, so that every sample must answer.
  ss::SampleOptions options;
  options.signal_blocked_threads = true;
  int answered = 0, samples = 0;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
  while (std::chrono::steady_clock::now() < until || samples < 20) {
    std::vector<std::string> errors;
    for (const ss::RawThreadStack& s : ss::SampleThreads({tid}, options, &errors)) answered += s.answered ? 1 : 0;
    ++samples;
  }
  job.join();
  for (int i = 0; i < 200 && g_job_deliveries < kJobSignals; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  g_stop = true;
  worker.join();
  ok &= Expect(g_job_deliveries == kJobSignals, "job handler ran " + std::to_string(g_job_deliveries.load()) +
                                                    " times for " + std::to_string(kJobSignals) + " tgkills");
  ok &= Expect(answered == samples, "sampler answered " + std::to_string(answered) + "/" + std::to_string(samples));
  return ok ? 0 : 1;
}

int SendsItselfOurSignal(void (*install)(int)) {
  const int sig = SIGRTMIN + 5;
  install(sig);
  if (!ArmWithSignal(sig)) return 1;
  syscall(SYS_tgkill, getpid(), Gettid(), sig);
  return 3;  // still alive
}

int RefusesAndStillStops(int sig) {
  if (!ArmWithSignal(sig)) return 1;
  const int used = ss::NativeSamplerSignal();
  bool ok = Expect(used >= SIGRTMIN && used <= SIGRTMAX, "falls back to real-time signal " + std::to_string(used));
  const std::string warning = ss::NativeSamplerWarning();
  std::printf("warning: %s\n", warning.c_str());
  ok &= Expect(warning.find("NCCLWATCH_STACK_SIGNAL=" + std::to_string(sig) + " refused") != std::string::npos,
               "a warning names the refused setting");
  if (!ok) return 1;
  kill(getpid(), sig);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  return 3;  // still alive: the signal did not stop us
}

int RunMode(const std::string& mode) {
  if (mode == "job_handler_same_signal") return SharedSignal(SIGRTMIN + 4, SIGRTMIN + 4, true);
  if (mode == "job_plain_handler_same_signal") return SharedSignal(SIGRTMIN + 4, SIGRTMIN + 4, false);
  if (mode == "job_handler_other_signal") return SharedSignal(SIGRTMIN + 4, 0, true);
  if (mode == "default_disposition") return SendsItselfOurSignal([](int) {});
  if (mode == "ignored_disposition") return SendsItselfOurSignal([](int sig) { signal(sig, SIG_IGN); });
  if (mode == "refuse_sigterm") return RefusesAndStillStops(SIGTERM);
  if (mode == "refuse_sigint") return RefusesAndStillStops(SIGINT);
  std::printf("unknown mode %s\n", mode.c_str());
  return 2;
}

// What the child's wait status must be for each mode.
bool StatusIsExpected(const std::string& mode, int status) {
  if (mode == "default_disposition") return WIFSIGNALED(status) && WTERMSIG(status) == SIGRTMIN + 5;
  if (mode == "ignored_disposition") return WIFEXITED(status) && WEXITSTATUS(status) == 3;
  if (mode == "refuse_sigterm") return WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM;
  if (mode == "refuse_sigint") return WIFSIGNALED(status) && WTERMSIG(status) == SIGINT;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::printf("usage: signal_chain_check MODE\n");
    return 2;
  }
  const std::string mode = argv[1];
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    const int rc = RunMode(mode);
    std::fflush(stdout);
    _exit(rc);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return 1;
  const bool ok = StatusIsExpected(mode, status);
  std::printf("%s: child %s %d\n", ok ? "PASS" : "FAIL", WIFSIGNALED(status) ? "killed by signal" : "exited with",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  return ok ? 0 : 1;
}
