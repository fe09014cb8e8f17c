#include "core/analyze/user_frames.h"

#include <algorithm>
#include <cctype>

#include "core/dump/dump_json.h"

namespace ncclwatch::analyze {
namespace {

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool StartsWith(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

std::string Describe(const dump::NativeFrame& f) {
  std::string where = Basename(f.module);
  if (where.empty()) where = "?";
  return (f.function.empty() ? "??" : f.function) + " (" + where + "+" + dump::FormatHex(f.offset) + ")";
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

bool IsSignalTrampoline(const dump::NativeFrame& frame) {
  return frame.function == "__restore_rt" || frame.function == "__kernel_rt_sigreturn" ||
         frame.module.find("[vdso]") != std::string::npos;
}

bool IsSystemFrame(const dump::NativeFrame& frame) {
  std::string base = Basename(frame.module);
  return StartsWith(base, "libc.so") || StartsWith(base, "libc-") || StartsWith(base, "libpthread") ||
         StartsWith(base, "ld-linux") || StartsWith(base, "ld64.so");
}

UserFrames NativeUserFrames(const dump::NativeThread& thread, size_t max_frames) {
  UserFrames out;
  bool seen_user_frame = false;
  for (const auto& f : thread.frames) {
    bool hide = f.internal || IsSignalTrampoline(f) || (!seen_user_frame && IsSystemFrame(f));
    if (hide || out.frames.size() >= max_frames) {
      ++out.hidden;
      continue;
    }
    seen_user_frame = true;
    out.frames.push_back(Describe(f));
  }
  return out;
}

std::vector<std::string> PythonUserFrames(const dump::PythonThread& thread, size_t max_frames) {
  std::vector<std::string> out;
  for (const auto& f : thread.frames) {
    if (out.size() >= max_frames) break;
    out.push_back(f.function + " (" + f.file + ":" + std::to_string(f.line) + ")");
  }
  return out;
}

bool LooksLikeDataLoading(const std::string& text) {
  static const char* const kWords[] = {"load", "dataloader", "data_loader", "batch", "resume", "restore", "skip"};
  std::string lower = Lower(text);
  return std::any_of(std::begin(kWords), std::end(kWords),
                     [&](const char* w) { return lower.find(w) != std::string::npos; });
}

}  // namespace ncclwatch::analyze
