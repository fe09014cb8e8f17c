// Python stacks of every interpreter thread, taken without the GIL.
//
// Uses CPython's own fatal-error dumper _Py_DumpTracebackThreads, found with
// dlsym(RTLD_DEFAULT), writing into a memfd; PyGILState_Ensure is never
// called because the stuck thread may hold the GIL. The dumper reads frames
// without locking: it is meant for threads that are stuck, and a thread that
// is running Python at that instant may be reported inconsistently.
#ifndef NCCLWATCH_CORE_STACKS_PYTHON_STACKS_H_
#define NCCLWATCH_CORE_STACKS_PYTHON_STACKS_H_

#include <string>
#include <vector>

#include "core/stacks/process_stacks.h"

namespace ncclwatch::stacks_internal {

struct PythonCapture {
  bool is_python = false;
  std::vector<PythonThread> threads;
  std::string error;   // "python stacks unavailable: <reason>" when not captured.
  std::string method;  // "dump_traceback_threads", "faulthandler" or empty.
};

// In a Python process whose interpreter keeps _Py_DumpTracebackThreads
// private (or with NCCLWATCH_PYTHON_STACKS=faulthandler), arms the
// faulthandler fallback (python_faulthandler.h). Otherwise does nothing.
void ArmPythonStacks();

PythonCapture CapturePythonStacks();

}  // namespace ncclwatch::stacks_internal

#endif  // NCCLWATCH_CORE_STACKS_PYTHON_STACKS_H_
