// Turns a captured thread into what a person should read first: the innermost frames of
// user code. Hidden: frames marked internal (the capture machinery), ncclwatch's own frames,
// the signal trampoline, and the libc/pthread/ld.so wait frames below the first user frame.
#ifndef NCCLWATCH_CORE_ANALYZE_USER_FRAMES_H_
#define NCCLWATCH_CORE_ANALYZE_USER_FRAMES_H_

#include <string>
#include <vector>

#include "core/dump/dump.h"

namespace ncclwatch::analyze {

struct UserFrames {
  std::vector<std::string> frames;  // "function (module+0xoff)", innermost first
  int hidden = 0;
};

bool IsSignalTrampoline(const dump::NativeFrame& frame);
// A frame of ncclwatch itself (its hooks and threads): never the user's problem.
bool IsNcclwatchFrame(const dump::NativeFrame& frame);
// A frame of libc, libpthread or the dynamic loader.
bool IsSystemFrame(const dump::NativeFrame& frame);

UserFrames NativeUserFrames(const dump::NativeThread& thread, size_t max_frames);
// Python frames are all user frames: "function (file:line)".
std::vector<std::string> PythonUserFrames(const PythonThread& thread, size_t max_frames);

// True when a word of `text` (split at non-alphanumerics and camelCase) starts with load,
// dataloader, batch, resum, restor or skip: data loading or restoring state.
bool LooksLikeDataLoading(const std::string& text);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_USER_FRAMES_H_
