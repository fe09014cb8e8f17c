// The threads of this process as seen in /proc/self/task.
#ifndef NCCLWATCH_CORE_STACKS_TASK_LIST_H_
#define NCCLWATCH_CORE_STACKS_TASK_LIST_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace ncclwatch::stacks_internal {

std::vector<pid_t> ListThreadIds();

// /proc/self/task/<tid>/comm without the trailing newline; empty if gone.
std::string ReadThreadName(pid_t tid);

// Scheduler state letter (R, S, D, T, Z, ...) or '?' if the thread is gone.
char ReadThreadState(pid_t tid);

// Whether `signal_number` is in the thread's blocked mask (SigBlk in
// /proc/self/task/<tid>/status). False when unknown.
bool IsSignalBlocked(pid_t tid, int signal_number);

}  // namespace ncclwatch::stacks_internal

#endif  // NCCLWATCH_CORE_STACKS_TASK_LIST_H_
