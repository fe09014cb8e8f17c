#include "core/shm/segment_gc.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/shm/layout.h"
#include "core/shm/process_info.h"
#include "core/shm/segment_file.h"
#include "core/shm/segment_name.h"
#include "core/shm/shm_directory.h"

namespace ncclwatch::shm {
namespace {

// Never removes a file we did not create: owner and mode are checked, and only the header's
// completeness is waived (a segment whose owner died during creation has no header yet).
bool IsOursToRemove(const std::string& entry) {
  const Result<SegmentFile, SegmentRejection> file = SegmentFile::Open(entry);
  if (file.ok()) return true;
  const SegmentRejection& rejection = file.error();
  if (rejection.problem == SegmentProblem::kIncomplete) return true;
  if (rejection.Reportable()) WarnAboutSegmentOnce(entry, rejection.inode, rejection.why);
  return false;
}

// What one open of a candidate entry tells garbage collection.
struct EntryFacts {
  bool removable = false;           // IsOursToRemove
  bool running = false;             // its pid + start ticks run
  bool live = false;                // running, in the header's boot, and no exit recorded
  std::optional<uint64_t> run_key;  // of a complete header of this layout
  uint64_t exit_ns = 0;             // when it recorded its exit (CLOCK_MONOTONIC); 0: none
  bool failed = false;              // exited nonzero, by a fatal signal, or gone without a word
};

// A job (or run) is quiet once its latest recorded exit is `min_quiet_ns` old.
bool Quiet(uint64_t latest_exit_ns, uint64_t min_quiet_ns) {
  return min_quiet_ns == 0 || latest_exit_ns == 0 || MonotonicNowNs() - latest_exit_ns >= min_quiet_ns;
}

EntryFacts InspectEntry(const std::string& entry, const ParsedSegmentName& parsed) {
  EntryFacts facts;
  facts.running = ProcessIsAlive(parsed.pid, parsed.start_ticks);
  const Result<SegmentFile, SegmentRejection> file = SegmentFile::Open(entry);
  if (!file.ok()) {
    const SegmentRejection& rejection = file.error();
    // Incomplete: its owner may be creating it, so it is live while that runs. Anything else
    // is not ours, so not our job's process.
    facts.removable = rejection.problem == SegmentProblem::kIncomplete;
    facts.live = facts.running && facts.removable;
    if (!facts.removable && rejection.Reportable()) WarnAboutSegmentOnce(entry, rejection.inode, rejection.why);
    return facts;
  }
  facts.removable = true;
  auto header = std::make_unique<SegmentHeader>();
  if (!ReadSegmentHeader(*file, header.get()) || header->magic.load(std::memory_order_relaxed) != kMagic) {
    facts.live = facts.running;  // the header is not complete yet: its owner is writing it
    return facts;
  }
  const bool this_layout = header->layout_version == kLayoutVersion;
  if (this_layout) facts.run_key = header->run_key;
  // A copy from another boot names a process of that boot, whatever runs under its pid here.
  const bool this_boot = !this_layout || ProcessOfBootIsAlive(header->boot_id, sizeof header->boot_id, parsed.pid,
                                                              parsed.start_ticks);
  const bool exited = header->state.load(std::memory_order_acquire) == static_cast<uint32_t>(SegmentState::kExited);
  facts.live = facts.running && this_boot && !exited;
  if (this_layout && exited) {
    facts.exit_ns = header->exit_ns.load(std::memory_order_relaxed);
    const auto how = static_cast<ExitHow>(header->exit_how.load(std::memory_order_relaxed));
    facts.failed = how != ExitHow::kStatus || header->exit_status.load(std::memory_order_relaxed) != 0;
  } else {
    facts.failed = !facts.live;  // gone without a word
  }
  return facts;
}

int Unlink(const std::vector<std::string>& entries) {
  int removed = 0;
  for (const std::string& entry : entries) {
    if (shm_unlink(("/" + entry).c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace

int RemoveStaleSegments(const std::string& job_id, uid_t uid) {
  const std::string job = SanitizeJobId(job_id);
  std::vector<std::string> stale;
  for (const std::string& entry : ListShmEntries(JobEntryPrefix(uid, job))) {
    ParsedSegmentName parsed;
    if (!ParseSegmentEntry(entry, uid, job, &parsed)) continue;
    // The name carries pid and start time: a running owner is judged without opening its file.
    if (!ProcessIsAlive(parsed.pid, parsed.start_ticks) && IsOursToRemove(entry)) stale.push_back(entry);
  }
  return Unlink(stale);
}

int RemoveDeadJobs(const std::string& keep_job_id, uid_t uid, uint64_t min_quiet_ns) {
  const std::string keep = SanitizeJobId(keep_job_id);
  int removed = 0;
  for (const std::string& job : JobIdsWhere(uid, IsOursToRemove)) {
    if (job == keep) continue;
    bool any_live = false;
    uint64_t latest_exit_ns = 0;
    for (const std::string& entry : ListShmEntries(JobEntryPrefix(uid, job))) {
      ParsedSegmentName parsed;
      if (!ParseSegmentEntry(entry, uid, job, &parsed)) continue;
      const EntryFacts facts = InspectEntry(entry, parsed);
      latest_exit_ns = std::max(latest_exit_ns, facts.exit_ns);
      if (facts.live && facts.removable) {
        any_live = true;
        break;
      }
    }
    if (!any_live && Quiet(latest_exit_ns, min_quiet_ns)) removed += RemoveJobIfEnded(job, uid);
  }
  return removed;
}

int RemoveDeadRuns(const std::string& job_id, uint64_t keep_run_key, uid_t uid, uint64_t min_quiet_ns) {
  const std::string job = SanitizeJobId(job_id);
  struct RunEntries {
    bool running = false;
    uint64_t latest_exit_ns = 0;
    std::vector<std::string> entries;
  };
  std::map<uint64_t, RunEntries> runs;
  for (const std::string& entry : ListShmEntries(JobEntryPrefix(uid, job))) {
    ParsedSegmentName parsed;
    if (!ParseSegmentEntry(entry, uid, job, &parsed)) continue;
    const EntryFacts facts = InspectEntry(entry, parsed);
    if (!facts.run_key || *facts.run_key == keep_run_key) continue;
    RunEntries& run = runs[*facts.run_key];
    // Merely running counts: a run whose ranks all recorded their exit but one still unwinds
    // is left alone too.
    run.running = run.running || facts.running;
    run.latest_exit_ns = std::max(run.latest_exit_ns, facts.exit_ns);
    if (facts.removable) run.entries.push_back(entry);
  }
  int removed = 0;
  for (const auto& [key, run] : runs) {
    if (!run.running && Quiet(run.latest_exit_ns, min_quiet_ns)) removed += Unlink(run.entries);
  }
  return removed;
}

int RemoveJobIfEnded(const std::string& job_id, uid_t uid) { return RemoveRunIfEnded(job_id, 0, uid); }

int RemoveRunIfEnded(const std::string& job_id, uint64_t run_key, uid_t uid, bool keep_failed) {
  const std::string job = SanitizeJobId(job_id);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // our exit mark before the scan
  std::vector<std::string> ours;
  for (const std::string& entry : ListShmEntries(JobEntryPrefix(uid, job))) {
    ParsedSegmentName parsed;
    if (!ParseSegmentEntry(entry, uid, job, &parsed)) continue;
    const EntryFacts facts = InspectEntry(entry, parsed);
    // Another run under the same job id neither holds ours back nor is ours to remove.
    if (run_key != 0 && facts.run_key && *facts.run_key != run_key) continue;
    if (facts.live) return 0;
    if (keep_failed && facts.failed) return 0;
    if (facts.removable) ours.push_back(entry);
  }
  return Unlink(ours);
}

}  // namespace ncclwatch::shm
