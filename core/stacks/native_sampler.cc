#include "core/stacks/native_sampler.h"

#include <semaphore.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <thread>

#include "core/stacks/task_list.h"
#include "core/stacks/unwinder.h"

namespace ncclwatch::stacks_internal {
namespace {

constexpr int kMaxFrames = 128;
constexpr size_t kDefaultSlotCount = 1024;

// Slot state word: (generation << 2) | phase.
enum Phase : uint64_t { kIdle = 0, kReady = 1, kWriting = 2, kDone = 3 };

uint64_t MakeState(uint64_t generation, Phase phase) { return (generation << 2) | phase; }
Phase PhaseOf(uint64_t state) { return static_cast<Phase>(state & 3); }

struct Slot {
  std::atomic<pid_t> tid;
  std::atomic<uint64_t> state;
  uintptr_t interrupted_pc;
  int depth;
  void* pcs[kMaxFrames];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<pid_t>::is_always_lock_free);

// Everything the handler touches lives in static storage or in the slot table,
// which is never freed: a late handler can never write into released memory.
Slot* g_slots = nullptr;
size_t g_slot_capacity = 0;
std::atomic<size_t> g_slots_in_use{0};
std::atomic<uint64_t> g_active_generation{0};  // 0: no capture running.
uint64_t g_last_generation = 0;
sem_t g_answered;
struct sigaction g_previous_action;
UnwindFunction g_unwind = nullptr;
const char* g_unwinder_name = "none";
std::atomic<int> g_signal{0};
std::mutex g_arm_mutex;
bool g_arm_attempted = false;
bool g_armed = false;
std::string g_arm_error;

bool IsRealHandler(const struct sigaction& action) {
  if (action.sa_flags & SA_SIGINFO) return action.sa_sigaction != nullptr;
  return action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
}

void ChainToPrevious(int signal_number, siginfo_t* info, void* context) {
  if (!IsRealHandler(g_previous_action)) return;  // Never default-terminate on a late answer.
  if (g_previous_action.sa_flags & SA_SIGINFO) {
    g_previous_action.sa_sigaction(signal_number, info, context);
  } else {
    g_previous_action.sa_handler(signal_number);
  }
}

Slot* FindReadySlot(pid_t self, uint64_t generation) {
  size_t count = g_slots_in_use.load(std::memory_order_acquire);
  for (size_t i = 0; i < count; ++i) {
    if (g_slots[i].tid.load(std::memory_order_relaxed) != self) continue;
    uint64_t expected = MakeState(generation, kReady);
    if (g_slots[i].state.compare_exchange_strong(expected, MakeState(generation, kWriting),
                                                 std::memory_order_acq_rel)) {
      return &g_slots[i];
    }
    return nullptr;  // Already answered, or prepared for another generation.
  }
  return nullptr;
}

uintptr_t InterruptedPc(void* context) {
#if defined(__x86_64__)
  return static_cast<uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.pc);
#else
  (void)context;
  return 0;
#endif
}

// Async-signal-safe: no allocation, locks or stdio.
void HandleSampleSignal(int signal_number, siginfo_t* info, void* context) {
  int saved_errno = errno;
  uint64_t generation = g_active_generation.load(std::memory_order_acquire);
  bool from_us = info != nullptr && info->si_code == SI_TKILL && info->si_pid == getpid();
  Slot* slot = (generation != 0 && from_us)
                   ? FindReadySlot(static_cast<pid_t>(syscall(SYS_gettid)), generation)
                   : nullptr;
  if (slot == nullptr) {
    if (!from_us) ChainToPrevious(signal_number, info, context);
    errno = saved_errno;
    return;
  }
  slot->interrupted_pc = InterruptedPc(context);
  slot->depth = g_unwind(slot->pcs, kMaxFrames);
  slot->state.store(MakeState(generation, kDone), std::memory_order_release);
  sem_post(&g_answered);
  errno = saved_errno;
}

size_t SlotCountFromEnvironment() {
  const char* value = std::getenv("NCCLWATCH_STACK_MAX_THREADS");
  long parsed = value != nullptr ? std::strtol(value, nullptr, 10) : 0;
  return parsed > 0 ? static_cast<size_t>(parsed) : kDefaultSlotCount;
}

bool HandlerIsDefault(int signal_number) {
  struct sigaction current;
  return sigaction(signal_number, nullptr, &current) == 0 && !(current.sa_flags & SA_SIGINFO) &&
         current.sa_handler == SIG_DFL;
}

// The highest free real-time signal: low ones are the popular picks of other
// libraries. With none free, share SIGRTMAX and chain its handler.
int ChooseSignal() {
  if (const char* value = std::getenv("NCCLWATCH_STACK_SIGNAL")) {
    long parsed = std::strtol(value, nullptr, 10);
    if (parsed > 0 && parsed < NSIG) return static_cast<int>(parsed);
  }
  for (int candidate = SIGRTMAX; candidate >= SIGRTMIN; --candidate) {
    if (HandlerIsDefault(candidate)) return candidate;
  }
  return SIGRTMAX;
}

bool AllocateSlots(std::string* error) {
  g_slot_capacity = SlotCountFromEnvironment();
  // Anonymous pages cost nothing until a capture touches them.
  void* memory = mmap(nullptr, g_slot_capacity * sizeof(Slot), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    *error = "cannot allocate stack slots";
    return false;
  }
  g_slots = static_cast<Slot*>(memory);
  return true;
}

bool InstallHandler(int signal_number, std::string* error) {
  struct sigaction action = {};
  action.sa_sigaction = &HandleSampleSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(signal_number, &action, &g_previous_action) != 0) {
    *error = "sigaction(" + std::to_string(signal_number) + ") failed";
    return false;
  }
  return true;
}

bool ArmOnce(std::string* error) {
  if (sem_init(&g_answered, 0, 0) != 0) {
    *error = "sem_init failed";
    return false;
  }
  if (!AllocateSlots(error)) return false;
  Unwinder unwinder = LoadUnwinder();
  g_unwind = unwinder.unwind;
  g_unwinder_name = unwinder.name;
  int signal_number = ChooseSignal();
  if (!InstallHandler(signal_number, error)) return false;
  g_signal.store(signal_number, std::memory_order_release);
  return true;
}

bool OurHandlerStillInstalled(int signal_number) {
  struct sigaction current;
  return sigaction(signal_number, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
         current.sa_sigaction == &HandleSampleSignal;
}

void DrainSemaphore() {
  while (sem_trywait(&g_answered) == 0) {
  }
}

timespec ToTimespec(std::chrono::steady_clock::time_point when) {
  auto since_epoch = when.time_since_epoch();
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds);
  return timespec{static_cast<time_t>(seconds.count()), static_cast<long>(nanos.count())};
}

// Prepares one slot per tid, skipping slots a stale handler may still be
// writing. Returns the slot index per tid, -1 when out of slots.
std::vector<long> PrepareSlots(const std::vector<pid_t>& tids, uint64_t generation) {
  std::vector<long> slot_of(tids.size(), -1);
  size_t next = 0;
  for (size_t i = 0; i < tids.size(); ++i) {
    while (next < g_slot_capacity &&
           PhaseOf(g_slots[next].state.load(std::memory_order_acquire)) == kWriting) {
      ++next;
    }
    if (next == g_slot_capacity) break;
    Slot& slot = g_slots[next];
    slot.tid.store(tids[i], std::memory_order_relaxed);
    slot.depth = 0;
    slot.state.store(MakeState(generation, kReady), std::memory_order_relaxed);
    slot_of[i] = static_cast<long>(next++);
  }
  g_slots_in_use.store(next, std::memory_order_release);
  return slot_of;
}

bool IsDone(long slot, uint64_t generation) {
  return slot >= 0 && g_slots[slot].state.load(std::memory_order_acquire) == MakeState(generation, kDone);
}

void WaitForAnswers(const std::vector<long>& awaited, uint64_t generation,
                    std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    bool all_done = true;
    for (long slot : awaited) all_done = all_done && IsDone(slot, generation);
    if (all_done || std::chrono::steady_clock::now() >= deadline) return;
    timespec until = ToTimespec(deadline);
    // Each answer posts once; a stray post from an earlier capture only causes a recount.
    if (sem_clockwait(&g_answered, CLOCK_MONOTONIC, &until) != 0 && errno == ETIMEDOUT) return;
  }
}

// Closes the generation: unanswered slots are withdrawn so a late handler
// cannot claim them; handlers caught mid-write share a short grace period.
void Withdraw(const std::vector<long>& slot_of, uint64_t generation) {
  g_active_generation.store(0, std::memory_order_release);
  auto grace_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  for (long slot : slot_of) {
    if (slot < 0) continue;
    uint64_t expected = MakeState(generation, kReady);
    g_slots[slot].state.compare_exchange_strong(expected, MakeState(generation, kIdle));
    while (PhaseOf(g_slots[slot].state.load()) == kWriting && std::chrono::steady_clock::now() < grace_end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

RawThreadStack Collect(pid_t tid, long slot, uint64_t generation) {
  RawThreadStack stack;
  stack.tid = tid;
  stack.answered = IsDone(slot, generation);
  if (!stack.answered) return stack;
  const Slot& answer = g_slots[slot];
  stack.interrupted_pc = answer.interrupted_pc;
  int depth = answer.depth < 0 ? 0 : (answer.depth > kMaxFrames ? kMaxFrames : answer.depth);
  for (int i = 0; i < depth; ++i) stack.pcs.push_back(reinterpret_cast<uintptr_t>(answer.pcs[i]));
  return stack;
}

}  // namespace

bool ArmNativeSampler(std::string* error) {
  std::lock_guard<std::mutex> lock(g_arm_mutex);
  if (!g_arm_attempted) {
    g_arm_attempted = true;
    g_armed = ArmOnce(&g_arm_error);
  }
  if (!g_armed && error != nullptr) *error = g_arm_error;
  return g_armed;
}

int NativeSamplerSignal() { return g_signal.load(std::memory_order_acquire); }

const char* NativeUnwinderName() { return g_unwinder_name; }

std::vector<uintptr_t> UnwindCallingThread() {
  std::vector<uintptr_t> pcs;
  if (g_unwind == nullptr) return pcs;
  void* frames[kMaxFrames];
  int depth = g_unwind(frames, kMaxFrames);
  for (int i = 0; i < depth; ++i) pcs.push_back(reinterpret_cast<uintptr_t>(frames[i]));
  return pcs;
}

std::vector<RawThreadStack> SampleThreads(const std::vector<pid_t>& tids, const SampleOptions& options,
                                          std::vector<std::string>* errors) {
  auto deadline = std::chrono::steady_clock::now() + options.timeout;
  int signal_number = NativeSamplerSignal();
  if (signal_number != 0 && !OurHandlerStillInstalled(signal_number)) {
    errors->push_back("signal " + std::to_string(signal_number) + " handler was replaced by the application");
    signal_number = 0;
  }
  std::vector<RawThreadStack> result;
  if (signal_number == 0) {
    for (pid_t tid : tids) result.push_back(RawThreadStack{tid, false, 0, {}});
    return result;
  }
  uint64_t generation = ++g_last_generation;
  g_active_generation.store(0, std::memory_order_release);
  DrainSemaphore();
  std::vector<long> slot_of = PrepareSlots(tids, generation);
  g_active_generation.store(generation, std::memory_order_release);

  std::vector<long> awaited;
  std::vector<bool> gone(tids.size(), false);
  size_t without_slot = 0;
  for (size_t i = 0; i < tids.size(); ++i) {
    if (slot_of[i] < 0) {
      ++without_slot;
      continue;
    }
    if (!options.signal_blocked_threads && IsSignalBlocked(tids[i], signal_number)) continue;
    if (syscall(SYS_tgkill, getpid(), tids[i], signal_number) != 0) {
      gone[i] = (errno == ESRCH);
      continue;
    }
    awaited.push_back(slot_of[i]);
  }
  if (without_slot > 0) {
    errors->push_back(std::to_string(without_slot) +
                      " threads not sampled: raise NCCLWATCH_STACK_MAX_THREADS");
  }
  WaitForAnswers(awaited, generation, deadline);
  Withdraw(slot_of, generation);
  for (size_t i = 0; i < tids.size(); ++i) {
    if (!gone[i]) result.push_back(Collect(tids[i], slot_of[i], generation));
  }
  return result;
}

}  // namespace ncclwatch::stacks_internal
