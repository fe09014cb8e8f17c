#include "bench/dump/stacks_to_dump.h"

namespace ncclwatch::bench {

namespace {

dump::NativeThread ToDumpThread(const ThreadStack& stack) {
  dump::NativeThread thread;
  thread.tid = stack.tid;
  thread.name = stack.name;
  thread.state = std::string(1, stack.state);
  thread.answered = stack.answered;
  for (const Frame& f : stack.frames) {
    thread.frames.push_back({f.pc, f.function, f.module, f.offset, f.internal});
  }
  return thread;
}

}  // namespace

void CopyStacksIntoDump(const ProcessStacks& stacks, dump::RankDump* dump) {
  for (const ThreadStack& stack : stacks.threads) dump->threads.push_back(ToDumpThread(stack));
  dump->stack_errors = stacks.errors;
  dump->python.available = stacks.is_python && stacks.python_error.empty();
  dump->python.reason = stacks.is_python ? stacks.python_error : "not a Python process";
}

}  // namespace ncclwatch::bench
