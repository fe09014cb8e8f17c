// The trigger-file protocol: how a rank that declared an incident asks every rank watching
// the same dump directory (other hosts, through a shared file system) to dump too.
//
// File: <dump dir>/<incident id>.trigger, written atomically (temporary + rename, mode
// 0600), never modified afterwards. Text, one "key=value" per line after a first line
// "ncclwatch.trigger 1":
//   incident=<id>  job=<job id>  kind=<verdict kind>  comm=<0x hash>  seq=<N>  op=<op>
//   culprits=<communicator ranks as core/format/rank_list.h writes them: "0-2,5", "-" for
//   none; a plain "2,5" of older writers reads too>  others=<same>  partial=<0|1>
//   host=<declaring host>  pid=<declaring pid>  run=<0x run key, run_identity.h>
//   comms=<the declaring process's communicator hashes, 0x hex, comma-separated, at most 64>
//   attempt=<restart>,<requeue>  (the declaring process's launcher attempt, -1 for a part
//   not given; absent when neither is)
//   summary=<one line>
// Unknown keys are ignored; a file without the header or without incident= is ignored.
//
// The dump directory may be shared with other users, so a watcher acts only on a file
// that is a regular file (opened O_NOFOLLOW|O_NONBLOCK, checked with fstat) owned by our
// effective uid, at most 64 KiB, named "<id>.trigger" with an id of [A-Za-z0-9_-] (at most
// 160 bytes) equal to its incident=, and whose job= is the watcher's job. Everything else
// is counted as rejected. Readers dump once per incident id they have not dumped yet,
// within the rate limits of dump_rate_limit.h, and only for triggers of their own run
// (TriggerIsOfOurRun): a job id repeats across runs (torchrun's "none"), and the default dump
// directory with it. Nobody deletes trigger files while the job runs (the directory belongs
// to the user), so a torchrun restart, which keeps the run, finds the triggers of the attempt
// before it: a reader answers only triggers of its own attempt written after it started
// (TriggerIsOfOurAttempt).
#ifndef NCCLWATCH_CORE_WATCH_TRIGGER_FILE_H_
#define NCCLWATCH_CORE_WATCH_TRIGGER_FILE_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/detect/verdict.h"
#include "core/status/status.h"

namespace ncclwatch::watch {

inline constexpr char kTriggerSuffix[] = ".trigger";

// The declaring rank's verdict (its onset time is not carried: monotonic clocks of other
// hosts mean nothing here), and who declared it.
struct Trigger {
  std::string incident_id;
  std::string job_id;  // sanitized, as in segment names
  // The file keeps kind (kUnknown when this version does not know the name), comm_hash,
  // seq, op, culprit_ranks, other_ranks, partial and summary; the other fields read back empty.
  detect::Verdict verdict;
  std::string host;
  int32_t pid = 0;
  uint64_t run_key = 0;          // 0: not given
  std::vector<uint64_t> comms;   // empty: not given
  detect::Attempt attempt;       // of the declaring process; unknown when not given
  // When the file was written (its mtime, wall clock, ns since the epoch): set by the
  // watcher, never read from the file's text. 0: unknown.
  uint64_t written_unix_ns = 0;
};

inline constexpr size_t kMaxTriggerComms = 64;

// Whether a trigger was declared by a process of our run: it shares one of our communicators
// (hashes are drawn per run), or it was declared on our host by our run's key. When neither
// side knows a communicator yet and the trigger comes from another host, nothing tells the
// runs apart: it is taken, as before run keys existed.
bool TriggerIsOfOurRun(const Trigger& trigger, const std::string& our_host, uint64_t our_run_key,
                       const std::set<uint64_t>& our_comms);

// Whether a trigger of our run is also of our attempt: declared by a process of the same
// launcher attempt (when both are known) and written after this process started (when both
// times are known; wall clock, so the triggers of an attempt that ended before this process
// began are never answered, even from writers that name no attempt).
bool TriggerIsOfOurAttempt(const Trigger& trigger, const detect::Attempt& our_attempt, uint64_t our_start_unix_ns);

std::string FormatTrigger(const Trigger& trigger);
std::optional<Trigger> ParseTrigger(const std::string& text);

// Writes <dir>/<id>.trigger atomically. Never throws.
Status WriteTriggerFile(const std::string& dir, const Trigger& trigger) noexcept;

// Watches one directory for trigger files. Re-reads the directory only when its
// modification time changed since the last scan, so an idle poll costs one stat().
class TriggerWatcher {
 public:
  TriggerWatcher(std::string dir, std::string job_id) : dir_(std::move(dir)), job_id_(std::move(job_id)) {}

  // Valid triggers of our job whose file appeared since the previous call (each file
  // reported once).
  std::vector<Trigger> PollNew() noexcept;
  // Files ending in .trigger that the last PollNew saw for the first time and rejected.
  size_t rejected_in_last_poll() const { return rejected_; }

 private:
  std::optional<Trigger> ReadValidTrigger(const std::string& name) const;

  std::string dir_;
  std::string job_id_;
  size_t rejected_ = 0;
  int64_t last_mtime_sec_ = -1;
  int64_t last_mtime_nsec_ = -1;
  std::vector<std::string> seen_;  // file names already reported, sorted
};

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_TRIGGER_FILE_H_
