#include "core/stacks/native_sampler.h"

#include <semaphore.h>
#include <signal.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <thread>

#include "core/stacks/armed_options.h"
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
Status g_armed;  // what the one attempt to arm gave
std::string g_arm_warning;
uintptr_t g_cookie = 0;  // set before the handler is installed, constant afterwards

// Whether a delivery is one of our requests: sent by SendRequest with rt_tgsigqueueinfo,
// si_code SI_QUEUE, our pid and the per-process random cookie in si_value. The job's own
// signals (kill, tgkill's SI_TKILL, sigqueue, pthread_sigqueue with its own values) do not
// carry the cookie, so they are passed on, even while a capture is running.
bool IsOurRequest(const siginfo_t* info) {
  return info != nullptr && info->si_code == SI_QUEUE && info->si_pid == getpid() &&
         reinterpret_cast<uintptr_t>(info->si_value.sival_ptr) == g_cookie;
}

// The default action of every signal we accept (real-time only) is to terminate: do what
// would have happened without us. Restore SIG_DFL, queue the signal to this thread again
// and unblock it; it is delivered before pthread_sigmask returns.
void ReraiseWithDefaultAction(int signal_number) {
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal_number, &default_action, nullptr);
  syscall(SYS_tgkill, getpid(), static_cast<pid_t>(syscall(SYS_gettid)), signal_number);
  sigset_t just_this;
  sigemptyset(&just_this);
  sigaddset(&just_this, signal_number);
  pthread_sigmask(SIG_UNBLOCK, &just_this, nullptr);
}

// Passes a signal that is not ours to the disposition that was there before us, as the
// kernel would have: SIG_IGN drops it, SIG_DFL takes the default action, a handler runs
// with its own sa_mask added, in the form (SA_SIGINFO or not) it was installed with.
void ChainToPrevious(int signal_number, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_previous_action;
  const bool with_info = (previous.sa_flags & SA_SIGINFO) != 0;
  if (!with_info && previous.sa_handler == SIG_IGN) return;
  if (!with_info && previous.sa_handler == SIG_DFL) {
    ReraiseWithDefaultAction(signal_number);
    return;
  }
  if (with_info && previous.sa_sigaction == nullptr) return;
  sigset_t saved_mask;
  pthread_sigmask(SIG_BLOCK, &previous.sa_mask, &saved_mask);
  if (with_info) {
    previous.sa_sigaction(signal_number, info, context);
  } else {
    previous.sa_handler(signal_number);
  }
  pthread_sigmask(SIG_SETMASK, &saved_mask, nullptr);
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
  if (!IsOurRequest(info)) {
    ChainToPrevious(signal_number, info, context);
    errno = saved_errno;
    return;
  }
  uint64_t generation = g_active_generation.load(std::memory_order_acquire);
  Slot* slot = generation != 0 ? FindReadySlot(static_cast<pid_t>(syscall(SYS_gettid)), generation) : nullptr;
  if (slot == nullptr) {  // a late answer to a capture that timed out: ours, dropped
    errno = saved_errno;
    return;
  }
  slot->interrupted_pc = InterruptedPc(context);
  slot->depth = g_unwind(slot->pcs, kMaxFrames);
  slot->state.store(MakeState(generation, kDone), std::memory_order_release);
  sem_post(&g_answered);
  errno = saved_errno;
}

size_t SlotCount() {
  const size_t wanted = ArmedOptions().max_threads;
  return wanted > 0 ? wanted : kDefaultSlotCount;
}

bool HandlerIsDefault(int signal_number) {
  struct sigaction current;
  return sigaction(signal_number, nullptr, &current) == 0 && !(current.sa_flags & SA_SIGINFO) &&
         current.sa_handler == SIG_DFL;
}

// The highest free real-time signal: low ones are the popular picks of other
// libraries. With none free, share SIGRTMAX and chain its handler.
// NCCLWATCH_STACK_SIGNAL must name a real-time signal: taking SIGTERM or SIGINT would
// change how the job stops, SIGSEGV or SIGCHLD how it works. Others are refused with a
// warning and the default is used.
int ChooseSignal() {
  if (const int chosen = ArmedOptions().native_signal; chosen != 0) {
    if (chosen >= SIGRTMIN && chosen <= SIGRTMAX) return chosen;
    g_arm_warning = "NCCLWATCH_STACK_SIGNAL=" + std::to_string(chosen) + " refused: only real-time signals " +
                    std::to_string(SIGRTMIN) + ".." + std::to_string(SIGRTMAX) + " may be used; using the default";
  }
  for (int candidate = SIGRTMAX; candidate >= SIGRTMIN; --candidate) {
    if (HandlerIsDefault(candidate)) return candidate;
  }
  return SIGRTMAX;
}

Status AllocateSlots() {
  g_slot_capacity = SlotCount();
  // Anonymous pages cost nothing until a capture touches them.
  void* memory = mmap(nullptr, g_slot_capacity * sizeof(Slot), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return Status::Error("cannot allocate stack slots", errno);
  g_slots = static_cast<Slot*>(memory);
  return OkStatus();
}

Status InstallHandler(int signal_number) {
  struct sigaction action = {};
  action.sa_sigaction = &HandleSampleSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(signal_number, &action, &g_previous_action) != 0) {
    return Status::Error("sigaction(" + std::to_string(signal_number) + ") failed", errno);
  }
  return OkStatus();
}

// 64 random bits no signal of the job carries by accident (see IsOurRequest).
uintptr_t MakeCookie() {
  uintptr_t cookie = 0;
  if (getrandom(&cookie, sizeof cookie, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof cookie)) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    cookie = (static_cast<uintptr_t>(now.tv_nsec) << 32) ^ static_cast<uintptr_t>(now.tv_sec) ^
             reinterpret_cast<uintptr_t>(&now) ^ static_cast<uintptr_t>(getpid());
  }
  return cookie == 0 ? 0x6e63776174636831u : cookie;
}

// Queues one request to `tid` (see IsOurRequest).
bool SendRequest(pid_t tid, int signal_number) {
  siginfo_t info = {};
  info.si_signo = signal_number;
  info.si_code = SI_QUEUE;
  info.si_pid = getpid();
  info.si_uid = getuid();
  info.si_value.sival_ptr = reinterpret_cast<void*>(g_cookie);
  return syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, signal_number, &info) == 0;
}

Status ArmOnce() {
  g_cookie = MakeCookie();
  if (sem_init(&g_answered, 0, 0) != 0) return Status::Error("sem_init failed", errno);
  if (Status slots = AllocateSlots(); !slots.ok()) return slots;
  Unwinder unwinder = LoadUnwinder();
  g_unwind = unwinder.unwind;
  g_unwinder_name = unwinder.name;
  int signal_number = ChooseSignal();
  if (Status handler = InstallHandler(signal_number); !handler.ok()) return handler;
  g_signal.store(signal_number, std::memory_order_release);
  return OkStatus();
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

Status ArmNativeSampler() {
  std::lock_guard<std::mutex> lock(g_arm_mutex);
  if (!g_arm_attempted) {
    g_arm_attempted = true;
    g_armed = ArmOnce();
  }
  return g_armed;
}

std::string NativeSamplerWarning() {
  std::lock_guard<std::mutex> lock(g_arm_mutex);
  return g_arm_warning;
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
    if (!SendRequest(tids[i], signal_number)) {
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
