// One process's threads as a person reads them, the way py-spy prints a dump: a header per
// thread (tid, name, Python thread name, idle or active, the call it is blocked in), the
// Python frames merged into the native stack where the interpreter runs them, threads with
// identical stacks collapsed into one entry, and a count of what is left out.
//
// Pure: reads one dump::RankDump and nothing else.
#ifndef NCCLWATCH_CORE_ANALYZE_THREAD_VIEWS_H_
#define NCCLWATCH_CORE_ANALYZE_THREAD_VIEWS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "core/analyze/analysis.h"
#include "core/dump/dump.h"

namespace ncclwatch::analyze {

// At most this many entries (after collapsing) per process; the rest are counted.
inline constexpr size_t kMaxThreadViewsPerProcess = 8;
// At most this many frames per entry, innermost first; the rest are counted as hidden.
inline constexpr size_t kMaxFramesPerThreadView = 16;

struct ThreadViews {
  std::vector<ThreadStackView> views;  // sync-blocked threads first, then the main thread, then the rest
  size_t threads_total = 0;            // threads in the dump (native, plus Python threads no native one runs)
  size_t threads_not_shown = 0;        // of threads_total, in no view (cut, or no frame worth showing)
};

ThreadViews BuildThreadViews(const dump::RankDump& dump);

// "Thread 29681 "python" (MainThread, idle, in time_sleep)", "Threads 30315, 30318 "python"
// (2 threads, idle, in ncclsim::Stream::RunWorker()): same stack".
std::string ThreadHeader(const ThreadStackView& view);

// "skip_samples (/app/train.py:69)" for a Python frame, "time_sleep (libpython3.11.so+0x315ada)"
// for a native one.
std::string FrameText(const FrameView& frame);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_THREAD_VIEWS_H_
