#include "core/analyze/user_frames.h"

#include <algorithm>
#include <cctype>

#include "core/format/hex.h"

namespace ncclwatch::analyze {
namespace {

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Describe(const dump::NativeFrame& f) {
  std::string where = Basename(f.module);
  if (where.empty()) where = "?";
  return (f.function.empty() ? "??" : f.function) + " (" + where + "+" + format::FormatHex(f.offset) + ")";
}

// Splits an identifier-ish text into lowercase words at non-alphanumerics and camelCase
// boundaries: "RestoreDataLoaderState" -> restore, data, loader, state.
std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) words.push_back(word);
    word.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (!std::isalnum(c)) {
      flush();
      continue;
    }
    const bool upper = std::isupper(c);
    const bool after_lower = i > 0 && std::islower(static_cast<unsigned char>(text[i - 1]));
    const bool before_lower = i + 1 < text.size() && std::islower(static_cast<unsigned char>(text[i + 1]));
    const bool after_upper = i > 0 && std::isupper(static_cast<unsigned char>(text[i - 1]));
    if (upper && (after_lower || (after_upper && before_lower))) flush();
    word.push_back(static_cast<char>(std::tolower(c)));
  }
  flush();
  return words;
}

bool StartsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

bool IsSignalTrampoline(const dump::NativeFrame& frame) {
  return frame.function == "__restore_rt" || frame.function == "__kernel_rt_sigreturn" ||
         frame.module.find("[vdso]") != std::string::npos;
}

bool IsNcclwatchFrame(const dump::NativeFrame& frame) {
  return StartsWith(Basename(frame.module), "libncclwatch");
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
    bool hide = f.internal || IsNcclwatchFrame(f) || IsSignalTrampoline(f) || (!seen_user_frame && IsSystemFrame(f));
    if (hide || out.frames.size() >= max_frames) {
      ++out.hidden;
      continue;
    }
    seen_user_frame = true;
    out.frames.push_back(Describe(f));
  }
  return out;
}

std::vector<std::string> PythonUserFrames(const PythonThread& thread, size_t max_frames) {
  std::vector<std::string> out;
  for (const auto& f : thread.frames) {
    if (out.size() >= max_frames) break;
    out.push_back(f.function + " (" + f.file + ":" + std::to_string(f.line) + ")");
  }
  return out;
}

bool LooksLikeDataLoading(const std::string& text) {
  // Word prefixes, so "LoadBatch" and "data_loader" match but "preload" and "download" do not.
  static const char* const kPrefixes[] = {"load", "dataloader", "batch", "resum", "restor", "skip"};
  for (const std::string& word : Words(text)) {
    for (const char* prefix : kPrefixes) {
      if (StartsWith(word, prefix)) return true;
    }
  }
  return false;
}

}  // namespace ncclwatch::analyze
