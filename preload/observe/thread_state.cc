#include "preload/observe/thread_state.h"

#include <pthread.h>
#include <unistd.h>

#include "core/shm/segment_writer.h"

namespace ncclwatch::preload {
namespace thread_detail {
__thread ThreadState* state __attribute__((tls_model("initial-exec"))) = nullptr;
__thread HookDepths depths __attribute__((tls_model("initial-exec")));
}  // namespace thread_detail

namespace {

using thread_detail::state;

pthread_key_t g_exit_key;
pthread_once_t g_exit_key_once = PTHREAD_ONCE_INIT;

void FreeAtThreadExit(void* value) {
  auto* ts = static_cast<ThreadState*>(value);
  // In a forked child the slot is the parent's: it must stay untouched.
  if (ts->sync_slot != nullptr && ts->pid == getpid()) shm::SegmentWriter::ReleaseSyncSlot(ts->sync_slot);
  state = nullptr;
  delete ts;
}

void CreateExitKey() { pthread_key_create(&g_exit_key, FreeAtThreadExit); }

}  // namespace

namespace thread_detail {

ThreadState* NewThreadState(uint64_t generation) {
  // After a fork the child's copy of the parent's state refers to the parent's segment;
  // it is dropped (not freed: its memory is only the child's copy) and replaced.
  pthread_once(&g_exit_key_once, CreateExitKey);
  auto* ts = new ThreadState();
  ts->generation = generation;
  ts->pid = static_cast<int>(getpid());
  ts->tid = static_cast<int>(gettid());
  state = ts;
  pthread_setspecific(g_exit_key, ts);
  return ts;
}

}  // namespace thread_detail
}  // namespace ncclwatch::preload
