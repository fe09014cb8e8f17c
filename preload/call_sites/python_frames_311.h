// The calling thread's innermost user Python frame (core/stacks/python_call_site.h), read from
// CPython 3.11's own frame structures without the GIL, for NCCLWATCH_CALL_SITES (call_sites.h).
//
// Why the structures and not CPython's dumper: _Py_DumpTraceback(fd, tstate) into a memfd,
// parsed back, was tried first and measured at 250-310 us per op at 8 frames on 3.11 (its
// _Py_DumpASCII write()s each character of every path and name). Walking the frames costs
// about a microsecond (BENCHMARKS.md, "call sites").
//
// Safety: only the calling thread's frame chain is read (tstate from
// PyGILState_GetThisThreadState, a thread-local read that needs no GIL). The thread is inside
// our hook, so its chain cannot change, and every object on it is kept alive by the frames.
// The GIL is never taken (torch and ctypes release it around the NCCL call; PyGILState_Ensure
// there could deadlock, or wait out the 5 ms switch interval). The layouts are 3.11's, checked
// against its headers (tests/preload/python_frames_311_offsets.c); Resolve() refuses any other
// version, and each frame's code object and each string are checked to be of their type
// (PyCode_Type, PyUnicode_Type) before they are read, so a layout surprise ends the walk
// rather than the job. The line comes from PyCode_Addr2Line, which only reads the code
// object's line table (faulthandler calls it from a signal handler).
#ifndef NCCLWATCH_PRELOAD_CALL_SITES_PYTHON_FRAMES_311_H_
#define NCCLWATCH_PRELOAD_CALL_SITES_PYTHON_FRAMES_311_H_

#include <string>

#include "core/status/status.h"

namespace ncclwatch::preload {

// One frame: its code object and the instruction it is at. Equal frames name the same site
// for as long as the code object lives.
struct PythonFrameRef {
  const void* code = nullptr;
  const void* instr = nullptr;
  bool operator==(const PythonFrameRef&) const = default;
};

class PythonFrames311 {
 public:
  // Finds the interpreter's symbols; an error saying why when this process runs no CPython 3.11.
  Status Resolve();
  // The calling thread's innermost user frame; code == nullptr when the thread has no Python
  // frames or none of them is user code. Whether a code object is user code is remembered per
  // thread (64 entries, by address), so a hook walking torch's wrappers classifies each once.
  PythonFrameRef InnermostUserFrame() const;
  // "file:line in function" of a frame InnermostUserFrame() returned.
  std::string SiteText(const PythonFrameRef& frame) const;

 private:
  void* (*this_thread_state_)() = nullptr;
  int (*addr_to_line_)(const void* code, int byte_offset) = nullptr;
  const void* code_type_ = nullptr;
  const void* unicode_type_ = nullptr;
};

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_CALL_SITES_PYTHON_FRAMES_311_H_
