#include "core/watch/trigger_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <sstream>

#include "core/dump/dump_writer.h"
#include "core/format/hex.h"
#include "core/format/rank_list.h"

namespace ncclwatch::watch {
namespace {

constexpr char kHeader[] = "ncclwatch.trigger 1";

std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Ranks of one communicator: 2^20 is far above any job, and bounds what a file of 64 KiB
// can make a reader allocate ("0-2147483647" names 2^31 ranks).
constexpr size_t kMaxRanksPerList = size_t{1} << 20;

// A verdict's rank lists are sets: sorted, each rank once, whatever the writer repeated, so a
// trigger reads back as it is written (FormatRangeList writes each rank once).
std::vector<int> ParseRanks(const std::string& text) {
  std::vector<int> ranks = format::ParseRangeList(text, kMaxRanksPerList).value_or(std::vector<int>{});
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

constexpr size_t kMaxTriggerBytes = 65536;
constexpr size_t kMaxIncidentIdBytes = 160;

// The text of a regular file of ours, never following a symlink nor blocking on a FIFO, and
// when it was last written (wall clock ns).
std::optional<std::string> ReadOwnSmallFile(const std::string& path, uint64_t* mtime_unix_ns) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> text;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
      static_cast<uint64_t>(st.st_size) <= kMaxTriggerBytes) {
    *mtime_unix_ns = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull + static_cast<uint64_t>(st.st_mtim.tv_nsec);
    text.emplace();
    char buf[4096];
    ssize_t n;
    while (text->size() < kMaxTriggerBytes && (n = ::read(fd, buf, sizeof buf)) > 0) {
      text->append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return text;
}

bool IsIncidentId(const std::string& id) {
  if (id.empty() || id.size() > kMaxIncidentIdBytes) return false;
  for (char c : id) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
      return false;
    }
  }
  return true;
}

std::string CommList(const std::vector<uint64_t>& comms) {
  std::string out;
  for (size_t i = 0; i < comms.size() && i < kMaxTriggerComms; ++i) out += (i ? "," : "") + format::FormatHex(comms[i]);
  return out.empty() ? "-" : out;
}

std::vector<uint64_t> ParseCommList(const std::string& text) {
  std::vector<uint64_t> comms;
  size_t start = 0;
  while (start < text.size() && comms.size() < kMaxTriggerComms) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (const std::optional<uint64_t> hash = format::ParseHex(text.substr(start, comma - start)); hash && *hash != 0) {
      comms.push_back(*hash);
    }
    start = comma + 1;
  }
  return comms;
}

// "<restart>,<requeue>"; a part that is not a number from -1 up reads as not given.
detect::Attempt ParseAttempt(const std::string& text) {
  const auto part = [](const std::string& s) {
    char* end = nullptr;
    const long v = std::strtol(s.c_str(), &end, 10);
    return (end != s.c_str() && *end == '\0' && v >= -1 && v <= INT32_MAX) ? static_cast<int>(v) : -1;
  };
  const size_t comma = text.find(',');
  if (comma == std::string::npos) return detect::Attempt{part(text), -1};
  return detect::Attempt{part(text.substr(0, comma)), part(text.substr(comma + 1))};
}

}  // namespace

bool TriggerIsOfOurRun(const Trigger& t, const std::string& our_host, uint64_t our_run_key,
                       const std::set<uint64_t>& our_comms) {
  for (const uint64_t hash : t.comms) {
    if (our_comms.count(hash) != 0) return true;
  }
  if (t.host == our_host && t.run_key != 0) return t.run_key == our_run_key;
  return t.comms.empty() || our_comms.empty();
}

bool TriggerIsOfOurAttempt(const Trigger& t, const detect::Attempt& our_attempt, uint64_t our_start_unix_ns) {
  if (t.attempt.known() && our_attempt.known() && !(t.attempt == our_attempt)) return false;
  return t.written_unix_ns == 0 || our_start_unix_ns == 0 || t.written_unix_ns >= our_start_unix_ns;
}

std::string FormatTrigger(const Trigger& t) {
  std::ostringstream out;
  out << kHeader << "\n"
      << "incident=" << OneLine(t.incident_id) << "\n"
      << "job=" << OneLine(t.job_id) << "\n"
      << "kind=" << detect::ToString(t.verdict.kind) << "\n"
      << "comm=" << format::FormatHex(t.verdict.comm_hash) << "\n"
      << "seq=" << t.verdict.seq << "\n"
      << "op=" << OneLine(t.verdict.op) << "\n"
      << "culprits=" << format::FormatRangeList(t.verdict.culprit_ranks) << "\n"
      << "others=" << format::FormatRangeList(t.verdict.other_ranks) << "\n"
      << "partial=" << (t.verdict.partial ? 1 : 0) << "\n"
      << "host=" << OneLine(t.host) << "\n"
      << "pid=" << t.pid << "\n"
      << "run=" << format::FormatHex(t.run_key) << "\n"
      << "comms=" << CommList(t.comms) << "\n";
  if (t.attempt.known()) out << "attempt=" << t.attempt.restart << "," << t.attempt.requeue << "\n";
  out << "summary=" << OneLine(t.verdict.summary) << "\n";
  return out.str();
}

std::optional<Trigger> ParseTrigger(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) return std::nullopt;
  Trigger t;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq);
    const std::string value = line.substr(eq + 1);
    if (key == "incident") t.incident_id = value;
    else if (key == "job") t.job_id = value;
    else if (key == "kind") t.verdict.kind = detect::ParseVerdictKind(value).value_or(detect::VerdictKind::kUnknown);
    else if (key == "comm") t.verdict.comm_hash = format::ParseHex(value).value_or(0);
    else if (key == "seq") t.verdict.seq = std::strtoull(value.c_str(), nullptr, 10);
    else if (key == "op") t.verdict.op = value;
    else if (key == "culprits") t.verdict.culprit_ranks = ParseRanks(value);
    else if (key == "others") t.verdict.other_ranks = ParseRanks(value);
    else if (key == "partial") t.verdict.partial = value == "1";
    else if (key == "host") t.host = value;
    else if (key == "pid") t.pid = static_cast<int32_t>(std::strtol(value.c_str(), nullptr, 10));
    else if (key == "run") t.run_key = format::ParseHex(value).value_or(0);
    else if (key == "comms") t.comms = ParseCommList(value);
    else if (key == "attempt") t.attempt = ParseAttempt(value);
    else if (key == "summary") t.verdict.summary = value;
  }
  if (t.incident_id.empty()) return std::nullopt;
  return t;
}

Status WriteTriggerFile(const std::string& dir, const Trigger& trigger) noexcept {
  try {
    return dump::WriteFileAtomically(dir + "/" + trigger.incident_id + kTriggerSuffix, FormatTrigger(trigger));
  } catch (const std::exception&) {  // bad_alloc building the text: noexcept, called from the watchdog thread
    return Status::Error("out of memory writing the trigger file", ENOMEM);
  }
}

std::optional<Trigger> TriggerWatcher::ReadValidTrigger(const std::string& name) const {
  const std::string id = name.substr(0, name.size() - (sizeof(kTriggerSuffix) - 1));
  if (!IsIncidentId(id)) return std::nullopt;
  uint64_t written_unix_ns = 0;
  std::optional<std::string> text = ReadOwnSmallFile(dir_ + "/" + name, &written_unix_ns);
  if (!text) return std::nullopt;
  std::optional<Trigger> t = ParseTrigger(*text);
  if (!t || t->incident_id != id || t->job_id != job_id_) return std::nullopt;
  t->written_unix_ns = written_unix_ns;
  return t;
}

std::vector<Trigger> TriggerWatcher::PollNew() noexcept {
  std::vector<Trigger> fresh;
  rejected_ = 0;
  try {
    struct stat st {};
    if (::stat(dir_.c_str(), &st) != 0) return fresh;
    if (st.st_mtim.tv_sec == last_mtime_sec_ && st.st_mtim.tv_nsec == last_mtime_nsec_) return fresh;
    last_mtime_sec_ = st.st_mtim.tv_sec;
    last_mtime_nsec_ = st.st_mtim.tv_nsec;
    DIR* d = ::opendir(dir_.c_str());
    if (d == nullptr) return fresh;
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name[0] != '.' && EndsWith(name, kTriggerSuffix)) names.push_back(name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      if (std::binary_search(seen_.begin(), seen_.end(), name)) continue;
      seen_.insert(std::upper_bound(seen_.begin(), seen_.end(), name), name);
      if (std::optional<Trigger> t = ReadValidTrigger(name)) {
        fresh.push_back(std::move(*t));
      } else {
        ++rejected_;
      }
    }
  } catch (const std::exception&) {  // bad_alloc listing the directory: the triggers read so far, the rest next poll
  }
  return fresh;
}

}  // namespace ncclwatch::watch
