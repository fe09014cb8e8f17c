// The "call site" of a collective: the innermost user frame of the Python stack that issued it
// (NCCLWATCH_CALL_SITES, preload/call_sites/call_sites.h), as "file:line in function".
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

namespace ncclwatch {

// True for a frame the rule above skips.
bool IsLibraryPythonFile(std::string_view file);

// "file:line in function".
std::string CallSiteText(std::string_view file, int line, std::string_view function);

}  // namespace ncclwatch

#endif  // NCCLWATCH_CORE_STACKS_PYTHON_CALL_SITE_H_
