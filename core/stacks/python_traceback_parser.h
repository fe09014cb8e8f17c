// Parses the text CPython's faulthandler writes for all threads
// (_Py_DumpTracebackThreads, faulthandler.dump_traceback), e.g.
//
//   Current thread 0x00007f0000000000 (most recent call first):
//     File "/x/train.py", line 12 in step
//     File "/x/train.py", line 40 in <module>
//
//   Thread 0x00007f0000000001 (most recent call first):
//     <no Python frame>
//
// Lines it does not recognise ("  ...", "<truncated rest of calls>") are
// skipped, so newer interpreters that add lines still parse.
#ifndef NCCLWATCH_CORE_STACKS_PYTHON_TRACEBACK_PARSER_H_
#define NCCLWATCH_CORE_STACKS_PYTHON_TRACEBACK_PARSER_H_

#include <string_view>
#include <vector>

#include "core/stacks/process_stacks.h"

namespace ncclwatch {

std::vector<PythonThread> ParsePythonTracebacks(std::string_view text);

}  // namespace ncclwatch

#endif  // NCCLWATCH_CORE_STACKS_PYTHON_TRACEBACK_PARSER_H_
