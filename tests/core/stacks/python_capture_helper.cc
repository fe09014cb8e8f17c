// ctypes helper for python_capture_test.py: a native thread captures all
// stacks while the Python main thread is blocked inside another ctypes call.
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "core/stacks/process_stacks.h"
#include "environment_options.h"

namespace {

std::mutex g_mutex;
std::condition_variable g_changed;
bool g_main_blocked = false;
int g_release_pipe[2] = {-1, -1};
std::thread g_capturer;

void WriteReport(const ncclwatch::ProcessStacks& stacks, const std::string& path) {
  std::ofstream out(path);
  out << "is_python " << stacks.is_python << "\n";
  out << "python_error " << stacks.python_error << "\n";
  out << "python_method " << stacks.python_method << "\n";
  for (const ncclwatch::PythonThread& thread : stacks.python) {
    out << "pythread " << thread.thread_id << " " << thread.current << "\n";
    for (const ncclwatch::PythonFrame& frame : thread.frames) {
      out << "pyframe " << frame.function << " " << frame.line << " " << frame.file << "\n";
    }
  }
  for (const ncclwatch::ThreadStack& thread : stacks.threads) {
    out << "native " << thread.tid << " " << thread.answered << "\n";
    for (const ncclwatch::Frame& frame : thread.frames) {
      if (!frame.internal) out << "frame " << frame.function << "\n";
    }
  }
}

void CaptureWhileMainIsBlocked(std::string path) {
  {
    std::unique_lock<std::mutex> lock(g_mutex);
    g_changed.wait_for(lock, std::chrono::seconds(20), [] { return g_main_blocked; });
  }
  WriteReport(ncclwatch::CaptureProcessStacks(ncclwatch::testing::EnvironmentOptions()), path);
  char release = 1;
  if (write(g_release_pipe[1], &release, 1) != 1) return;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int stacks_arm() {
  return ncclwatch::ArmStackCapture(ncclwatch::testing::EnvironmentOptions()).ok() ? 0 : -1;
}

extern "C" __attribute__((visibility("default"))) int stacks_start_capture(const char* report_path) {
  if (pipe(g_release_pipe) != 0) return -1;
  g_capturer = std::thread(CaptureWhileMainIsBlocked, std::string(report_path));
  return 0;
}

// Blocks in native code (ctypes releases the GIL) until the capture is done;
// returns 1 when released, 0 on timeout.
extern "C" __attribute__((visibility("default"))) int stacks_block_until_captured(int timeout_ms) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_main_blocked = true;
    g_changed.notify_all();
  }
  // The capture signal interrupts poll (EINTR even under SA_RESTART): retry,
  // as any host code must.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return 0;
    pollfd readable = {g_release_pipe[0], POLLIN, 0};
    int ready = poll(&readable, 1, static_cast<int>(left.count()));
    if (ready == 1) return 1;
    if (ready == 0 || errno != EINTR) return 0;
  }
}

extern "C" __attribute__((visibility("default"))) void stacks_finish() {
  if (g_capturer.joinable()) g_capturer.join();
  close(g_release_pipe[0]);
  close(g_release_pipe[1]);
}
