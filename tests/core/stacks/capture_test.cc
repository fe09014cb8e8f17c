// Native capture of other threads. This executable is deliberately linked
// without -rdynamic: its own functions are absent from the dynamic symbol
// table, so their names can only come from .symtab.
#include <dlfcn.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <future>
#include <stdexcept>
#include <thread>

#include "core/stacks/native_sampler.h"
#include "core/stacks/process_stacks.h"
#include "core/stacks/task_list.h"
#include "environment_options.h"
#include "parked_threads.h"

// Distinct side effects keep identical-code folding from merging the two
// functions under one symbol; the increment after Wait() prevents a tail call.
// Atomic: several parked threads run the same function.
std::atomic<int> g_waits_in_namespaced_function{0};
std::atomic<int> g_waits_in_static_function{0};

namespace stackstest {

__attribute__((noinline)) void WaitInNamespacedFunction(ncclwatch::testing::Park& park) {
  park.Wait();
  g_waits_in_namespaced_function.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace stackstest

static __attribute__((noinline)) void WaitInStaticFunction(ncclwatch::testing::Park& park) {
  park.Wait();
  g_waits_in_static_function.fetch_add(1, std::memory_order_relaxed);
}

namespace ncclwatch {
namespace {

using testing::Park;
using testing::ParkedThreads;

const ThreadStack* FindThread(const ProcessStacks& stacks, pid_t tid) {
  for (const ThreadStack& thread : stacks.threads) {
    if (thread.tid == tid) return &thread;
  }
  return nullptr;
}

bool HasFunction(const ThreadStack& thread, const std::string& needle) {
  return std::any_of(thread.frames.begin(), thread.frames.end(), [&](const Frame& frame) {
    return !frame.internal && frame.function.find(needle) != std::string::npos;
  });
}

const Frame* FirstForeignFrame(const ThreadStack& thread) {
  for (const Frame& frame : thread.frames) {
    if (!frame.internal) return &frame;
  }
  return nullptr;
}

__attribute__((noinline)) ProcessStacks CaptureFromHere(const CaptureOptions& options) {
  ProcessStacks stacks = CaptureProcessStacks(options);
  asm volatile("");
  return stacks;
}

std::string ExpectedUnwinder() { return testing::EnvironmentOptions().backtrace_unwinder ? "backtrace" : "libunwind"; }

void BlockAllSignals() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

TEST_CASE("functions of an executable without -rdynamic are named", "[native]") {
  // Precondition of the test: dladdr alone cannot name these functions.
  Dl_info info = {};
  REQUIRE(dladdr(reinterpret_cast<void*>(&stackstest::WaitInNamespacedFunction), &info) != 0);
  REQUIRE(info.dli_sname == nullptr);

  ParkedThreads threads;
  pid_t in_static = threads.Start("stk-static", [](Park& park) { WaitInStaticFunction(park); });
  pid_t in_namespace =
      threads.Start("stk-namespaced", [](Park& park) { stackstest::WaitInNamespacedFunction(park); });
  threads.Start("stk-idle", [](Park& park) { park.Wait(); });
  REQUIRE(threads.AwaitParked(3));

  ProcessStacks stacks = CaptureFromHere(testing::EnvironmentOptions());
  CHECK(stacks.symbolizer == "absl");
  CHECK(stacks.unwinder == ExpectedUnwinder());
  CHECK(stacks.signal_number >= SIGRTMIN);
  CHECK(stacks.errors.empty());

  const ThreadStack* static_thread = FindThread(stacks, in_static);
  REQUIRE(static_thread != nullptr);
  CHECK(static_thread->answered);
  CHECK(static_thread->name == "stk-static");
  CHECK(static_thread->state == 'S');
  CHECK(HasFunction(*static_thread, "WaitInStaticFunction"));
  CHECK_FALSE(HasFunction(*static_thread, "WaitInNamespacedFunction"));

  const ThreadStack* namespaced = FindThread(stacks, in_namespace);
  REQUIRE(namespaced != nullptr);
  CHECK(HasFunction(*namespaced, "stackstest::WaitInNamespacedFunction("));
  CHECK_FALSE(HasFunction(*namespaced, "WaitInStaticFunction"));
}

// A thread blocked in std::future::wait, which waits inside a non-inline,
// exported libstdc++ member function. Released and joined on destruction.
class FutureWaiter {
 public:
  FutureWaiter()
      : thread_([this, future = promise_.get_future()] {
          tid_.store(static_cast<pid_t>(syscall(SYS_gettid)));
          future.wait();
        }) {}
  ~FutureWaiter() {
    promise_.set_value();
    thread_.join();
  }
  bool AwaitSleeping() {
    for (int i = 0; i < 500; ++i) {
      if (tid_.load() != 0 && stacks_internal::ReadThreadState(tid_.load()) == 'S') return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  pid_t tid() const { return tid_.load(); }

 private:
  std::atomic<pid_t> tid_{0};
  std::promise<void> promise_;
  std::thread thread_;
};

TEST_CASE("exported C++ functions of shared libraries are demangled", "[native][demangle]") {
  // Found by tid: a sanitizer runtime may have a thread of its own (TSan does).
  FutureWaiter waiter;
  REQUIRE(waiter.AwaitSleeping());
  ProcessStacks stacks = CaptureProcessStacks(testing::EnvironmentOptions());
  const ThreadStack* found = FindThread(stacks, waiter.tid());
  REQUIRE(found != nullptr);
  const ThreadStack& thread = *found;
  REQUIRE(thread.answered);
  for (const Frame& frame : thread.frames) UNSCOPED_INFO(frame.function << " in " << frame.module);
  const std::string expected = "std::__atomic_futex_unsigned_base::_M_futex_wait_until";
  CHECK(HasFunction(thread, expected));
  for (const Frame& frame : thread.frames) {
    if (frame.function.find(expected) != std::string::npos) {
      CHECK(frame.module.find("libstdc++") != std::string::npos);
    }
  }
}

// Run by its own ctest entry with NCCLWATCH_SYMBOLIZER=none.
TEST_CASE("without the symbolizer helper, frames still carry module and offset", "[.][without-symbolizer]") {
  ParkedThreads threads;
  pid_t parked = threads.Start("stk-parked", [](Park& park) { WaitInStaticFunction(park); });
  REQUIRE(threads.AwaitParked(1));
  ProcessStacks stacks = CaptureProcessStacks(testing::EnvironmentOptions());
  CHECK(stacks.symbolizer == "dladdr");
  const ThreadStack* thread = FindThread(stacks, parked);
  REQUIRE(thread != nullptr);
  REQUIRE(thread->answered);
  char self_path[4096] = {};
  REQUIRE(readlink("/proc/self/exe", self_path, sizeof(self_path) - 1) > 0);
  int frames_in_executable = 0;
  for (const Frame& frame : thread->frames) {
    if (frame.internal || frame.module != self_path) continue;
    ++frames_in_executable;
    CHECK(frame.offset > 0);
  }
  // The executable's functions are in .symtab only, which dladdr cannot read.
  CHECK(frames_in_executable > 0);
  CHECK_FALSE(HasFunction(*thread, "WaitInStaticFunction"));
}

TEST_CASE("frames carry module, offset and an internal flag", "[native]") {
  ParkedThreads threads;
  pid_t parked = threads.Start("stk-parked", [](Park& park) { WaitInStaticFunction(park); });
  REQUIRE(threads.AwaitParked(1));
  ProcessStacks stacks = CaptureFromHere(testing::EnvironmentOptions());

  const ThreadStack* other = FindThread(stacks, parked);
  REQUIRE(other != nullptr);
  REQUIRE(other->answered);
  // The handler and the signal trampoline sit above the interrupted frame.
  REQUIRE(!other->frames.empty());
  CHECK(other->frames.front().internal);
  const Frame* interrupted = FirstForeignFrame(*other);
  REQUIRE(interrupted != nullptr);
  CHECK(interrupted->function.find("HandleSampleSignal") == std::string::npos);
  for (const Frame& frame : other->frames) {
    if (frame.function.find("WaitInStaticFunction") == std::string::npos) continue;
    char self_path[4096] = {};
    REQUIRE(readlink("/proc/self/exe", self_path, sizeof(self_path) - 1) > 0);
    CHECK(frame.module == self_path);
    CHECK(frame.offset > 0);
    CHECK(frame.offset < frame.pc);
  }

  REQUIRE(!stacks.threads.empty());
  const ThreadStack& self = stacks.threads.front();
  CHECK(self.is_capturing_thread);
  CHECK(self.answered);
  const Frame* caller = FirstForeignFrame(self);
  REQUIRE(caller != nullptr);
  CHECK(caller->function.find("CaptureFromHere") != std::string::npos);
}

TEST_CASE("a thread with every signal blocked does not answer and capture stays bounded", "[native]") {
  ParkedThreads threads;
  pid_t deaf = threads.Start("stk-deaf", [](Park& park) {
    BlockAllSignals();
    park.Wait();
  });
  pid_t listening = threads.Start("stk-listening", [](Park& park) { park.Wait(); });
  REQUIRE(threads.AwaitParked(2));

  CaptureOptions options = testing::EnvironmentOptions();
  options.timeout = std::chrono::milliseconds(200);
  auto start = std::chrono::steady_clock::now();
  ProcessStacks stacks = CaptureProcessStacks(options);
  auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(elapsed < std::chrono::seconds(2));

  const ThreadStack* deaf_thread = FindThread(stacks, deaf);
  REQUIRE(deaf_thread != nullptr);
  CHECK_FALSE(deaf_thread->answered);
  CHECK(deaf_thread->frames.empty());
  CHECK(deaf_thread->name == "stk-deaf");
  CHECK(deaf_thread->state == 'S');
  const ThreadStack* listening_thread = FindThread(stacks, listening);
  REQUIRE(listening_thread != nullptr);
  CHECK(listening_thread->answered);
}

TEST_CASE("a late answer is ignored and the next capture succeeds", "[native]") {
  REQUIRE(ArmStackCapture(testing::EnvironmentOptions()).ok());
  const int signal_number = stacks_internal::NativeSamplerSignal();

  std::mutex mutex;
  std::condition_variable changed;
  bool masked = false;
  bool unblock = false;
  bool unblocked = false;
  ParkedThreads threads;
  pid_t late = threads.Start("stk-late", [&](Park& park) {
    sigset_t only_ours;
    sigemptyset(&only_ours);
    sigaddset(&only_ours, signal_number);
    pthread_sigmask(SIG_BLOCK, &only_ours, nullptr);
    {
      std::unique_lock<std::mutex> lock(mutex);
      masked = true;
      changed.notify_all();
      changed.wait_for(lock, std::chrono::seconds(30), [&] { return unblock; });
    }
    // The signal from the timed-out capture is delivered here, late.
    pthread_sigmask(SIG_UNBLOCK, &only_ours, nullptr);
    {
      std::lock_guard<std::mutex> lock(mutex);
      unblocked = true;
      changed.notify_all();
    }
    park.Wait();
  });
  // Lets the thread go on if an assertion below ends the test early.
  struct Unblocker {
    std::mutex& mutex;
    std::condition_variable& changed;
    bool& unblock;
    ~Unblocker() {
      std::lock_guard<std::mutex> lock(mutex);
      unblock = true;
      changed.notify_all();
    }
  } unblocker{mutex, changed, unblock};
  {
    std::unique_lock<std::mutex> lock(mutex);
    REQUIRE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return masked; }));
  }

  stacks_internal::SampleOptions sample;
  sample.timeout = std::chrono::milliseconds(150);
  sample.signal_blocked_threads = true;  // Forces a real wait for an answer that cannot come.
  std::vector<std::string> errors;
  auto start = std::chrono::steady_clock::now();
  std::vector<stacks_internal::RawThreadStack> first = stacks_internal::SampleThreads({late}, sample, &errors);
  auto elapsed = std::chrono::steady_clock::now() - start;
  REQUIRE(first.size() == 1);
  CHECK_FALSE(first[0].answered);
  CHECK(elapsed >= std::chrono::milliseconds(140));
  CHECK(elapsed < std::chrono::seconds(2));

  {
    std::unique_lock<std::mutex> lock(mutex);
    unblock = true;
    changed.notify_all();
    REQUIRE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return unblocked; }));
  }
  REQUIRE(threads.AwaitParked(1));
  std::vector<stacks_internal::RawThreadStack> second = stacks_internal::SampleThreads({late}, sample, &errors);
  REQUIRE(second.size() == 1);
  CHECK(second[0].answered);
  CHECK_FALSE(second[0].pcs.empty());
  CHECK(errors.empty());
}

TEST_CASE("64 threads answer repeated captures", "[native]") {
  constexpr int kThreads = 64;
  ParkedThreads threads;
  std::vector<pid_t> tids;
  for (int i = 0; i < kThreads; ++i) {
    tids.push_back(threads.Start("stk-" + std::to_string(i), [](Park& park) { WaitInStaticFunction(park); }));
  }
  REQUIRE(threads.AwaitParked(kThreads));
  for (int round = 0; round < 5; ++round) {
    CaptureOptions options = testing::EnvironmentOptions();
    options.timeout = std::chrono::seconds(5);  // Generous: two shared cores.
    ProcessStacks stacks = CaptureProcessStacks(options);
    int answered_in_function = 0;
    for (pid_t tid : tids) {
      const ThreadStack* thread = FindThread(stacks, tid);
      if (thread != nullptr && thread->answered && HasFunction(*thread, "WaitInStaticFunction")) {
        ++answered_in_function;
      }
    }
    INFO("round " << round);
    CHECK(answered_in_function == kThreads);
  }
}

TEST_CASE("the unwinder leaves C++ exception unwinding alone", "[native]") {
  void* before = dlsym(RTLD_DEFAULT, "_Unwind_Backtrace");
  REQUIRE(before != nullptr);
  Dl_info before_info = {};
  REQUIRE(dladdr(before, &before_info) != 0);
  std::string before_module = before_info.dli_fname;

  ParkedThreads threads;
  threads.Start("stk-parked", [](Park& park) { park.Wait(); });
  REQUIRE(threads.AwaitParked(1));
  ProcessStacks stacks = CaptureProcessStacks(testing::EnvironmentOptions());
  REQUIRE(stacks.unwinder == ExpectedUnwinder());
  if (stacks.unwinder == "libunwind") {
    CHECK(dlopen("libunwind.so.8", RTLD_NOLOAD | RTLD_LAZY) != nullptr);  // It is loaded ...
  }
  CHECK(dlsym(RTLD_DEFAULT, "unw_backtrace") == nullptr);  // ... but not global.
  void* after = dlsym(RTLD_DEFAULT, "_Unwind_Backtrace");
  CHECK(after == before);
  Dl_info after_info = {};
  REQUIRE(dladdr(after, &after_info) != 0);
  CHECK(std::string(after_info.dli_fname) == before_module);
  CHECK(before_module.find("libunwind") == std::string::npos);

  bool caught = false;
  try {
    throw std::runtime_error("after capture");
  } catch (const std::runtime_error& error) {
    caught = std::string(error.what()) == "after capture";
  }
  CHECK(caught);
}

TEST_CASE("a process without Python reports no Python stacks and no error", "[python]") {
  ProcessStacks stacks = CaptureProcessStacks(testing::EnvironmentOptions());
  CHECK_FALSE(stacks.is_python);
  CHECK(stacks.python.empty());
  CHECK(stacks.python_error.empty());
}

}  // namespace
}  // namespace ncclwatch
