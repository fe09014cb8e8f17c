#include "core/shm/segment_name.h"

#include <charconv>

namespace ncclwatch::shm {
namespace {

bool IsJobIdChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-';
}

template <typename T>
bool ParseWholeNumber(std::string_view text, T* value) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string SanitizeJobId(std::string_view raw) {
  std::string id;
  for (char c : raw.substr(0, kMaxJobIdLength)) id.push_back(IsJobIdChar(c) ? c : '_');
  // "." and ".." would make odd file names; keep them readable but harmless.
  if (id.empty() || id == "." || id == "..") return "default";
  return id;
}

std::string JobEntryPrefix(uid_t uid, std::string_view job_id) {
  std::string prefix(kSegmentPrefix);
  prefix += std::to_string(uid);
  prefix += '.';
  prefix += job_id;
  prefix += '.';
  return prefix;
}

std::string SegmentName(uid_t uid, std::string_view job_id, pid_t pid, uint64_t start_ticks, int attempt) {
  std::string name = "/" + JobEntryPrefix(uid, job_id) + std::to_string(pid) + "." + std::to_string(start_ticks);
  if (attempt > 0) name += "-" + std::to_string(attempt);
  return name;
}

bool ParseSegmentEntry(std::string_view entry, uid_t uid, std::string_view job_id, ParsedSegmentName* out) {
  const std::string prefix = JobEntryPrefix(uid, job_id);
  if (entry.substr(0, prefix.size()) != prefix) return false;
  const std::string_view rest = entry.substr(prefix.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return false;
  ParsedSegmentName parsed;
  if (!ParseWholeNumber(rest.substr(0, dot), &parsed.pid) || parsed.pid <= 0) return false;
  std::string_view ticks = rest.substr(dot + 1);
  const size_t dash = ticks.find('-');
  if (dash != std::string_view::npos) {
    int attempt = 0;
    if (!ParseWholeNumber(ticks.substr(dash + 1), &attempt) || attempt <= 0 || attempt >= kMaxSegmentNameAttempts) {
      return false;
    }
    ticks = ticks.substr(0, dash);
  }
  if (!ParseWholeNumber(ticks, &parsed.start_ticks)) return false;
  *out = parsed;
  return true;
}

}  // namespace ncclwatch::shm
