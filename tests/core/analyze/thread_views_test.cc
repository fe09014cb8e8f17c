// Threads as py-spy shows them (core/analyze/thread_views.h): headers, Python merged into the
// native stack where the interpreter runs, identical stacks collapsed, cuts counted.
#include <catch2/catch.hpp>

#include "core/analyze/thread_views.h"
#include "tests/core/analyze/crafted_job.h"

using namespace ncclwatch;
namespace frames = ncclwatch::testing;

namespace {

const char* kLibc = "/lib/x86_64-linux-gnu/libc.so.6";
const char* kPython = "/usr/lib/libpython3.11.so.1.0";

// The main thread of a Python process sleeping in time.sleep, as the native capture sees it.
dump::NativeThread InterpreterMainThread(int32_t pid) {
  dump::NativeThread t;
  t.tid = pid;
  t.name = "python";
  t.state = "S";
  t.answered = true;
  t.frames = {frames::Frame("ncclwatch_capture_handler", "/build/lib/libncclwatch.so", true),
              frames::Frame("__restore_rt", kLibc),
              frames::Frame("clock_nanosleep", kLibc),
              frames::Frame("time_sleep", kPython),
              frames::Frame("cfunction_vectorcall_O", kPython),
              frames::Frame("_PyEval_EvalFrameDefault", kPython),
              frames::Frame("_PyFunction_Vectorcall", kPython),
              frames::Frame("_PyEval_EvalFrameDefault", kPython),
              frames::Frame("PyEval_EvalCode", kPython),
              frames::Frame("Py_RunMain", kPython),
              frames::Frame("__libc_start_main", kLibc),
              frames::Frame("_start", "/usr/bin/python3")};
  return t;
}

dump::NativeThread Worker(int32_t tid, const std::string& name, const std::string& function) {
  dump::NativeThread t;
  t.tid = tid;
  t.name = name;
  t.state = "S";
  t.answered = true;
  t.frames = {frames::Frame("ncclwatch_capture_handler", "/build/lib/libncclwatch.so", true),
              frames::Frame("__futex_abstimed_wait_common", kLibc), frames::Frame(function, "/opt/lib/libtorch_cpu.so"),
              frames::Frame("", "/usr/lib/libstdc++.so.6"), frames::Frame("start_thread", kLibc), frames::Frame("clone3", kLibc)};
  return t;
}

// A thread with every signal blocked, in uninterruptible sleep: it cannot answer the capture.
dump::NativeThread DeafThread(int32_t tid, const std::string& name) {
  dump::NativeThread t;
  t.tid = tid;
  t.name = name;
  t.state = "D";
  t.answered = false;
  return t;
}

std::vector<std::string> Texts(const analyze::ThreadStackView& v) {
  std::vector<std::string> out;
  for (const auto& f : v.frames) out.push_back(analyze::FrameText(f));
  return out;
}

}  // namespace

TEST_CASE("the Python stack is merged into the main thread where the interpreter runs", "[analyze][threads]") {
  dump::RankDump d = testing::MakeRankDump(1, 2, 8);
  d.threads.push_back(InterpreterMainThread(d.process.pid));
  testing::AddPythonStack(d, {{"/app/data.py", 69, "skip_samples"}, {"/app/train.py", 171, "<module>"}});

  const analyze::ThreadViews views = analyze::BuildThreadViews(d);
  REQUIRE(views.views.size() == 1);
  const analyze::ThreadStackView& main = views.views[0];
  CHECK(main.python_merged);
  CHECK(main.python_name == "MainThread");
  const std::vector<std::string> texts = Texts(main);
  REQUIRE(texts.size() == 3);
  CHECK(texts[0].rfind("time_sleep (libpython3.11.so.1.0+0x", 0) == 0);  // the C function Python called
  CHECK(texts[1] == "skip_samples (/app/data.py:69)");
  CHECK(texts[2] == "<module> (/app/train.py:171)");
  // Every other native frame: the handler, the trampoline, the libc wait, the interpreter's
  // own frames and the start-up below it (11 of 12).
  CHECK(main.hidden_frames == 11);
  CHECK(analyze::ThreadHeader(main) ==
        "Thread " + std::to_string(d.process.pid) + " \"python\" (MainThread, idle, in time_sleep)");
  CHECK(views.threads_total == 1);
  CHECK(views.threads_not_shown == 0);
}

TEST_CASE("threads with identical stacks are collapsed and cuts are counted", "[analyze][threads]") {
  dump::RankDump d = testing::MakeRankDump(0, 2, 8);
  for (int i = 0; i < 6; ++i) {
    d.threads.push_back(Worker(100 + i, "pt_autograd_" + std::to_string(i), "torch::autograd::ReadyQueue::pop()"));
  }
  dump::NativeThread running = Worker(200, "busy", "gemm_kernel_loop");
  running.state = "R";
  d.threads.push_back(running);
  for (int i = 0; i < 12; ++i) {  // 12 distinct stacks: 1 + 12 > the 8 shown
    d.threads.push_back(Worker(300 + i, "w", "distinct_" + std::to_string(i)));
  }
  d.threads.push_back(DeafThread(400, "deaf"));

  const analyze::ThreadViews views = analyze::BuildThreadViews(d);
  REQUIRE(views.views.size() == analyze::kMaxThreadViewsPerProcess);
  const analyze::ThreadStackView& autograd = views.views[0];
  CHECK(autograd.tids.size() == 6);
  CHECK(autograd.names.size() == 6);
  REQUIRE(Texts(autograd).size() == 1);  // libc's wait and the thread's start-up are hidden
  CHECK(Texts(autograd)[0].rfind("torch::autograd::ReadyQueue::pop() (libtorch_cpu.so+0x", 0) == 0);
  CHECK(analyze::ThreadHeader(autograd) ==
        "Threads 100, 101, ..., 105 \"pt_autograd_0\", \"pt_autograd_1\", ..., \"pt_autograd_5\" (6 threads, idle, in "
        "torch::autograd::ReadyQueue::pop()): same stack");
  CHECK(analyze::ThreadHeader(views.views[1]).find("(active, in gemm_kernel_loop)") != std::string::npos);
  CHECK(views.threads_total == 20);
  // Shown: 6 collapsed + busy + 6 distinct (8 entries); not shown: 6 distinct and the deaf one.
  CHECK(views.threads_not_shown == 7);
}

TEST_CASE("a thread that did not answer says so in its header", "[analyze][threads]") {
  dump::RankDump d = testing::MakeRankDump(0, 2, 8);
  d.threads.push_back(DeafThread(77, "signal-deaf"));
  const analyze::ThreadViews views = analyze::BuildThreadViews(d);
  REQUIRE(views.views.size() == 1);
  CHECK(analyze::ThreadHeader(views.views[0]) ==
        "Thread 77 \"signal-deaf\" (did not answer the capture signal; state D)");
}
