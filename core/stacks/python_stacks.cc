#include "core/stacks/python_stacks.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "core/stacks/armed_options.h"
#include "core/stacks/python_faulthandler.h"
#include "core/stacks/python_traceback_parser.h"

namespace ncclwatch::stacks_internal {
namespace {

// Same signature in CPython 3.6 to 3.13; interpreter and thread state are
// opaque here.
using DumpTracebackThreads = const char* (*)(int fd, void* interpreter, void* current_thread);
using InterpreterStateGetter = void* (*)();
using IsInitialized = int (*)();

template <typename Function>
Function Lookup(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

void* MainInterpreter() {
  if (auto main = Lookup<InterpreterStateGetter>("PyInterpreterState_Main")) return main();
  if (auto head = Lookup<InterpreterStateGetter>("PyInterpreterState_Head")) return head();
  return nullptr;  // The dumper then derives it from the GIL state.
}

std::string ReadFromStart(int fd) {
  std::string text;
  if (lseek(fd, 0, SEEK_SET) != 0) return text;
  char buffer[8192];
  for (;;) {
    ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  return text;
}

std::string Unavailable(const std::string& reason) { return "python stacks unavailable: " + reason; }

bool FaulthandlerForced() {
  return ArmedOptions().faulthandler_python;
}

bool IsPythonProcess() {
  return Lookup<IsInitialized>("Py_IsInitialized") != nullptr ||
         Lookup<DumpTracebackThreads>("_Py_DumpTracebackThreads") != nullptr;
}

DumpTracebackThreads DirectDumper() {
  return FaulthandlerForced() ? nullptr : Lookup<DumpTracebackThreads>("_Py_DumpTracebackThreads");
}

void CaptureThroughFaulthandler(PythonCapture* capture) {
  capture->method = "faulthandler";
  const Status armed = ArmFaulthandlerFallback();
  if (!armed.ok()) {
    capture->error = Unavailable(armed.message());
    return;
  }
  const Result<std::string> text = DumpThroughFaulthandler();
  if (!text.ok()) {
    capture->error = Unavailable(text.error().message());
    return;
  }
  capture->threads = ParsePythonTracebacks(*text);
}

}  // namespace

void ArmPythonStacks() {
  auto is_initialized = Lookup<IsInitialized>("Py_IsInitialized");
  if (!IsPythonProcess() || DirectDumper() != nullptr) return;
  if (is_initialized != nullptr && !is_initialized()) return;
  // A failure shows at the first capture, which arms again and reports why.
  static_cast<void>(ArmFaulthandlerFallback());
}

PythonCapture CapturePythonStacks() {
  PythonCapture capture;
  auto is_initialized = Lookup<IsInitialized>("Py_IsInitialized");
  capture.is_python = IsPythonProcess();
  if (!capture.is_python) return capture;
  if (is_initialized != nullptr && !is_initialized()) {
    capture.error = Unavailable("interpreter not initialized");
    return capture;
  }
  DumpTracebackThreads dump = DirectDumper();
  if (dump == nullptr) {
    CaptureThroughFaulthandler(&capture);
    return capture;
  }
  capture.method = "dump_traceback_threads";
  // A memfd never fills up and blocks the dumper, unlike a pipe we would
  // have to drain from this same thread.
  int fd = memfd_create("ncclwatch-pystacks", MFD_CLOEXEC);
  if (fd < 0) {
    capture.error = Unavailable("memfd_create failed");
    return capture;
  }
  const char* dump_error = dump(fd, MainInterpreter(), nullptr);
  capture.threads = ParsePythonTracebacks(ReadFromStart(fd));
  close(fd);
  if (dump_error != nullptr) capture.error = Unavailable(dump_error);
  return capture;
}

}  // namespace ncclwatch::stacks_internal
