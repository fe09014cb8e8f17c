// The trigger-file protocol: how a rank that declared an incident asks every rank watching
// the same dump directory (other hosts, through a shared file system) to dump too.
//
// File: <dump dir>/<incident id>.trigger, written atomically (temporary + rename), never
// modified afterwards. Text, one "key=value" per line after a first line
// "ncclwatch.trigger 1":
//   incident=<id>  kind=<verdict kind>  comm=<0x hash>  seq=<N>  op=<op>
//   culprits=<comma-separated communicator ranks>  others=<same>  partial=<0|1>
//   host=<declaring host>  pid=<declaring pid>  summary=<one line>
// Unknown keys are ignored; a file without the header or without incident= is ignored.
// Readers dump once per incident id they have not dumped yet. Nobody deletes trigger
// files while the job runs (the directory belongs to the user).
#ifndef NCCLWATCH_CORE_WATCH_TRIGGER_FILE_H_
#define NCCLWATCH_CORE_WATCH_TRIGGER_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dump/dump.h"

namespace ncclwatch::watch {

inline constexpr char kTriggerSuffix[] = ".trigger";

// The declaring rank's verdict (its onset time is not carried: monotonic clocks of other
// hosts mean nothing here), and who declared it.
struct Trigger {
  std::string incident_id;
  dump::LocalVerdict verdict;
  std::string host;
  int32_t pid = 0;
};

std::string FormatTrigger(const Trigger& trigger);
std::optional<Trigger> ParseTrigger(const std::string& text);

// Writes <dir>/<id>.trigger atomically. Never throws; false with *error on failure.
bool WriteTriggerFile(const std::string& dir, const Trigger& trigger, std::string* error) noexcept;

// Watches one directory for trigger files. Re-reads the directory only when its
// modification time changed since the last scan, so an idle poll costs one stat().
class TriggerWatcher {
 public:
  explicit TriggerWatcher(std::string dir) : dir_(std::move(dir)) {}

  // Triggers whose file appeared since the previous call (each file reported once).
  std::vector<Trigger> PollNew() noexcept;

 private:
  std::string dir_;
  int64_t last_mtime_sec_ = -1;
  int64_t last_mtime_nsec_ = -1;
  std::vector<std::string> seen_;  // file names already reported, sorted
};

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_TRIGGER_FILE_H_
