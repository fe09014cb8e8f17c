// The "call site" of a collective: the innermost user frame of the Python stack that issued it
// (NCCLWATCH_CALL_SITES, preload/call_sites.h), as "file:line in function".
//
// The rule for "user frame", innermost first, the first frame that is none of:
//   * the interpreter's own pseudo-files: "<frozen importlib._bootstrap>", "<string>", ...
//     (any file starting with '<');
//   * torch itself: a path with a "site-packages/torch/" or "dist-packages/torch/" component
//     (torch.distributed's wrappers: distributed_c10d.py, c10d_logger.py, ...);
//   * ncclwatch's own Python: "site-packages/ncclwatch/" or "dist-packages/ncclwatch/";
//   * the standard library: ".../lib/pythonX.Y/<not site-packages or dist-packages>/..."
//     (functools.py, contextlib.py, threading.py wrap user calls).
// Everything else is user code, third-party libraries (lightning, deepspeed) included: their
// line is where the user's job issued the call. No user frame: no call site.
#ifndef NCCLWATCH_CORE_STACKS_PYTHON_CALL_SITE_H_
#define NCCLWATCH_CORE_STACKS_PYTHON_CALL_SITE_H_

#include <string>
#include <string_view>

#include "core/stacks/process_stacks.h"

namespace ncclwatch {

// True for a frame the rule above skips.
bool IsLibraryPythonFile(std::string_view file);

// "file:line in function".
std::string CallSiteText(const PythonFrame& frame);

// The call site in one thread's traceback as _Py_DumpTraceback writes it
// ("Stack (most recent call first):" then `  File "...", line N in f` lines, innermost
// first); empty when no user frame is found. A last line without its newline (cut by a
// read bound) is ignored.
std::string CallSiteFromTraceback(std::string_view text);

}  // namespace ncclwatch

#endif  // NCCLWATCH_CORE_STACKS_PYTHON_CALL_SITE_H_
