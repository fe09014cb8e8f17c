#include "preload/thread_state.h"

#include <pthread.h>
#include <unistd.h>

#include "core/shm/segment_writer.h"

namespace ncclwatch::preload {
namespace {

__attribute__((tls_model("initial-exec"))) thread_local ThreadState* t_state = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local HookDepths t_depths;

pthread_key_t g_exit_key;
pthread_once_t g_exit_key_once = PTHREAD_ONCE_INIT;

void FreeAtThreadExit(void* state) {
  auto* ts = static_cast<ThreadState*>(state);
  // In a forked child the slot is the parent's: it must stay untouched.
  if (ts->sync_slot != nullptr && ts->pid == getpid()) shm::SegmentWriter::ReleaseSyncSlot(ts->sync_slot);
  t_state = nullptr;
  delete ts;
}

void CreateExitKey() { pthread_key_create(&g_exit_key, FreeAtThreadExit); }

}  // namespace

HookDepths& ThisThreadDepths() { return t_depths; }

ThreadState* ThisThread(uint64_t generation) {
  ThreadState* ts = t_state;
  if (ts != nullptr && ts->generation == generation) return ts;
  // After a fork the child's copy of the parent's state refers to the parent's segment;
  // it is dropped (not freed: its memory is only the child's copy) and replaced.
  pthread_once(&g_exit_key_once, CreateExitKey);
  ts = new ThreadState();
  ts->generation = generation;
  ts->pid = static_cast<int>(getpid());
  ts->tid = static_cast<int>(gettid());
  t_state = ts;
  pthread_setspecific(g_exit_key, ts);
  return ts;
}

}  // namespace ncclwatch::preload
