// Fallback for interpreters that keep _Py_DumpTracebackThreads private
// (pyenv builds of 3.9, 3.10, 3.13): have Python's faulthandler dump every
// thread on a dedicated real-time signal.
//
// Arming schedules faulthandler.register(sig, file=<memfd>, all_threads=True,
// chain=False) with Py_AddPendingCall, so it runs on the main thread the next
// time that thread executes Python code: arm early (at watchdog start), since
// a main thread already stuck in native code never runs it. Dumping sends the
// signal to the calling thread, where faulthandler writes synchronously.
#ifndef NCCLWATCH_CORE_STACKS_PYTHON_FAULTHANDLER_H_
#define NCCLWATCH_CORE_STACKS_PYTHON_FAULTHANDLER_H_

#include <string>

#include "core/status/status.h"

namespace ncclwatch::stacks_internal {

// Schedules the registration once. NCCLWATCH_PYTHON_STACK_SIGNAL overrides the
// signal (default: highest free real-time signal). False with a reason when
// the interpreter lacks the needed C API or no signal is free.
Status ArmFaulthandlerFallback();

// faulthandler's dump of all threads; an error when not armed or the
// registration has not run yet.
Result<std::string> DumpThroughFaulthandler();

}  // namespace ncclwatch::stacks_internal

#endif  // NCCLWATCH_CORE_STACKS_PYTHON_FAULTHANDLER_H_
