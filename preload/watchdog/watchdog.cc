#include "preload/watchdog/watchdog.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/detect/detector.h"
#include "core/detect/incident_tracker.h"
#include "core/detect/pending.h"
#include "core/dump/dump_dir.h"
#include "core/dump/dump_writer.h"
#include "core/dump/process_facts.h"
#include "core/dump/resolution.h"
#include "core/format/comm_label.h"
#include "core/format/duration.h"
#include "core/format/hex.h"
#include "core/clock/monotonic.h"
#include "core/shm/reader.h"
#include "core/shm/record_flags.h"
#include "core/shm/run_identity.h"
#include "core/shm/segment_gc.h"
#include "core/shm/segment_name.h"
#include "core/stacks/native_sampler.h"
#include "core/stacks/process_stacks.h"
#include "core/status/status.h"
#include "core/watch/dump_builder.h"
#include "preload/call_sites/call_sites.h"
#include "core/watch/dump_policy.h"
#include "core/watch/dump_rate_limit.h"
#include "core/watch/facts_from_snapshot.h"
#include "core/watch/incident_grouping.h"
#include "core/watch/incident_id.h"
#include "core/watch/incident_line.h"
#include "core/watch/incident_resolution.h"
#include "core/watch/trigger_file.h"
#include "core/watch/watch_phase.h"
#include "preload/lifecycle/bounded_stop.h"
#include "preload/lifecycle/last_gasp.h"
#include "preload/lifecycle/log.h"
#include "preload/real/resolver.h"

namespace ncclwatch::preload {
namespace {

struct LibraryVersions {
  int cuda_driver = 0;
  int cuda_runtime = 0;
  int nccl = 0;
};

// Asked once at start: neither the driver nor NCCL is called once a hang is under way.
LibraryVersions QueryLibraryVersions() {
  LibraryVersions v;
  using IntQuery = int(int*);  // cudaError_t / ncclResult_t are int-sized enums
  if (auto* fn = reinterpret_cast<IntQuery*>(ResolveNext(Library::kCudart, "cudaRuntimeGetVersion", nullptr))) {
    if (fn(&v.cuda_runtime) != 0) v.cuda_runtime = 0;
  }
  if (auto* fn = reinterpret_cast<IntQuery*>(ResolveNext(Library::kCudart, "cudaDriverGetVersion", nullptr))) {
    if (fn(&v.cuda_driver) != 0) v.cuda_driver = 0;
  }
  if (auto* fn = reinterpret_cast<IntQuery*>(ResolveNext(Library::kNccl, "ncclGetVersion", nullptr))) {
    if (fn(&v.nccl) != 0) v.nccl = 0;
  }
  return v;
}

constexpr uint32_t kTriggerDumpsBurst = 1;
constexpr uint32_t kAllDumpsBurst = 4;
constexpr uint64_t kRefillNs = 60ull * 1000 * 1000 * 1000;
// Incidents dumped and awaiting completion. Dumps are rate-limited to 4 a minute, and an
// incident that never resolves is a real hang; past this many the oldest is forgotten.
constexpr size_t kMaxOpenIncidents = 64;
// At exit the tracker may not have published the last completions yet: it polls events
// every 50 ms, so 4 looks 25 ms apart (75 ms) catch a collective that finished just before exit.
constexpr int kFinalResolutionLooks = 4;
constexpr auto kFinalResolutionInterval = std::chrono::milliseconds(25);
// Segments of a job that ended this recently stay: it may be between two attempts of a restart,
// whose next one needs them (core/shm/segment_gc.h). From a failure to attempt 1's first
// communicator took 2-8 s on the sim's loaded 2 cores; 60 s leaves room for a slow agent.
constexpr uint64_t kRestartQuietNs = 60ull * 1000 * 1000 * 1000;
// A last gasp adds no dump to one written this recently (see Poller::LastGasp).
constexpr uint64_t kFreshDumpNs = 2ull * 1000 * 1000 * 1000;

// An incident this process dumped for, until its key completes (core/watch/incident_resolution.h).
struct OpenIncident {
  watch::IncidentKey key;
  dump::Resolution note;             // identity and detection time; stamped when it resolves
  watch::ResolvedIncident resolved;  // what its resolved line names (note path: next to the dump)
};

// One poll's worth of state, owned by the watchdog thread only.
class Poller {
 public:
  explicit Poller(const WatchdogSettings& settings)
      : settings_(settings), triggers_(settings.dump_dir, settings.trigger_job_id) {}

  // The start-up work, deferred past the first init (core/watch/watch_phase.h): the stack
  // capture armed, the library versions asked, dead runs' segments removed. Once.
  void Prepare() {
    if (prepared_) return;
    prepared_ = true;
    const Status armed = ArmStackCapture(settings_.capture);
    if (!armed.ok()) Log(LogLevel::kInfo, "stacks of other threads unavailable: " + armed.message());
    const std::string signal_warning = stacks_internal::NativeSamplerWarning();
    if (!signal_warning.empty()) Log(LogLevel::kWarn, signal_warning);
    versions_ = QueryLibraryVersions();
    // Killed jobs cannot remove their segments; the next job of this user does, once none of
    // their processes is alive and the last left a minute ago (so /dev/shm does not fill up
    // across jobs, and a restart finds what its last attempt left).
    const int removed = shm::RemoveDeadJobs(settings_.job_id, getuid(), kRestartQuietNs) +
                        shm::RemoveDeadRuns(settings_.job_id, settings_.run_key, getuid(), kRestartQuietNs);
    if (removed > 0) Log(LogLevel::kInfo, "removed " + std::to_string(removed) + " segments of finished jobs");
  }

  void PollOnce(watch::WatchPhase phase) {
    if (phase == watch::WatchPhase::kQuiet) return;
    Prepare();
    ReadOwnRun();
    std::vector<detect::Verdict> verdicts = detect::Classify(facts_, settings_.detect, clock::MonotonicNowNs());
    const bool watching = phase == watch::WatchPhase::kWatching;
    if (!watching) {  // still in its first init: only what concerns that init (watch_phase.h)
      const std::set<uint64_t> own_inits = OwnCommHashes(/*initialising_only=*/true);
      std::erase_if(verdicts, [&](const detect::Verdict& v) { return !watch::ConcernsOwnInit(v, own_inits); });
    }
    watch::GroupedVerdicts grouped = grouper_.Group(incidents_.Observe(verdicts), clock::MonotonicNowNs());
    for (const watch::IncidentVerdicts& incident : grouped.incidents) OnLocalIncident(incident);
    for (const detect::Verdict& v : grouped.late_related) {
      policy_.Claim(watch::IncidentIdOf(v));
      Log(LogLevel::kInfo, "related to the last incident: " + v.summary);
    }
    if (watching) PollTriggers();
    ResolveOpenIncidents();
  }

  // Teardown asked for a last look (last_gasp.h): the usual poll, then a dump of our own when
  // nothing else dumped and this process has waited longer than the floor or has an
  // incident open, with a trigger file so that its peers dump too.
  void LastGasp(int cause, uint64_t teardown_ns, watch::WatchPhase phase) {
    // No verdicts of our own now: peers going down in this same teardown would read as ranks
    // that left. Triggers are answered once a communicator of ours is ready (a peer's last
    // gasp asks for our stacks), and what this process waited on is dumped below; analyze
    // judges it all afterwards.
    teardown_ns_ = teardown_ns;
    ReadOwnRun();
    if (phase == watch::WatchPhase::kWatching) PollTriggers();
    const uint64_t now = clock::MonotonicNowNs();
    // A dump of this process from the last 2 s (this poll's, or the one that was under way
    // when the teardown began) already holds what a last gasp would.
    if (last_dump_ns_ != 0 && now - last_dump_ns_ < kFreshDumpNs) return;
    std::string waiting = OwnLongestWait(now);
    if (waiting.empty() && open_.empty()) return;
    if (waiting.empty()) waiting = "an incident open";
    const std::string id = "last_gasp-" + std::to_string(getpid()) + "-" + std::to_string(now);
    policy_.Claim(id);
    detect::Verdict verdict;
    verdict.summary = std::string("last gasp: torn down by ") + LastGaspCauseName(cause) + " with " + waiting;
    const bool written = WriteRankDump(id, "last-gasp", verdict, dump::Teardown{LastGaspCauseName(cause), teardown_ns});
    watch::Trigger trigger = TriggerOf(id, detect::Verdict{});
    trigger.verdict = verdict;
    if (written) ReportIfFailed(watch::WriteTriggerFile(settings_.dump_dir, trigger));
    if (LogEnabled(LogLevel::kWarn)) {
      LogRawLine(LogLevel::kWarn, watch::LinePrefix(Origin(), "WARN") + verdict.summary +
                                      watch::DumpsAndNextStep(settings_.dump_dir, written));
    }
  }

  // At exit (the watchdog stops before the tracker and the segment): a collective that
  // completed just before the job ended is still recorded as resolved.
  void FinalResolutionCheck() {
    for (int look = 0; look < kFinalResolutionLooks && !open_.empty(); ++look) {
      if (look > 0) std::this_thread::sleep_for(kFinalResolutionInterval);
      ReadOwnRun();
      ResolveOpenIncidents();
    }
  }

 private:
  // The segments of this process's run only (the job id may be shared by other runs,
  // core/shm/run_identity.h), turned into the facts every stage of this poll reads.
  void ReadOwnRun() {
    shm::JobSnapshot snapshot = shm::ReadJobSnapshot(settings_.job_id, getuid(), watch::kRecordsPerCommInView);
    shm::KeepRunOf(getpid(), &snapshot);
    facts_ = watch::FactsFromSnapshot(snapshot);
  }

  const detect::ProcessFacts* OwnFacts() const {
    for (const detect::ProcessFacts& p : facts_.processes) {
      if (p.pid == getpid()) return &p;
    }
    return nullptr;
  }

  // What this process has waited on longest, when longer than the last-gasp floor: "#12
  // AllReduce on comm 0x... pending 8.0 s"; "" when nothing.
  std::string OwnLongestWait(uint64_t now) const {
    const detect::ProcessFacts* own = OwnFacts();
    if (own == nullptr) return "";
    // Teardown often begins with the job's own abort of the communicator it is stuck in.
    const detect::ProcessFacts as_at_abort = detect::AsAtAbort(*own);
    const std::optional<detect::Wait> wait = detect::OldestWait(as_at_abort);
    if (!wait || wait->since_ns == 0 || wait->since_ns > now || now - wait->since_ns < settings_.last_gasp_floor_ns) {
      return "";
    }
    return WaitText(*wait) + " pending " + format::FormatDuration(now - wait->since_ns);
  }

  static std::string WaitText(const detect::Wait& wait) {
    using On = detect::Wait::On;
    if (wait.on == On::kHostSync) return "a host sync";
    const std::string comm = "comm " + format::CommLabelUnescaped(wait.comm->comm_hash, wait.comm->name);
    if (wait.on == On::kInit) return "the init of " + comm;
    if (wait.on == On::kP2P) return wait.op->op + " #" + std::to_string(wait.op->seq) + " on " + comm;
    if (wait.on == On::kReplay) return "replay " + std::to_string(wait.replay->replay) + " of a CUDA graph on " + comm;
    return "#" + std::to_string(wait.seq) + " " + (wait.op != nullptr ? wait.op->op : std::string("op")) + " on " + comm;
  }

  bool DumpedOp(uint64_t comm_hash, uint64_t seq) const {
    return comm_hash != 0 && dumped_ops_.count({comm_hash, seq}) != 0;
  }

  std::set<uint64_t> OwnCommHashes(bool initialising_only = false) const {
    std::set<uint64_t> hashes;
    if (const detect::ProcessFacts* own = OwnFacts()) {
      for (const detect::CommFacts& c : own->comms) {
        if (initialising_only && c.lifecycle != detect::CommLifecycle::kInitializing) continue;
        if (c.comm_hash != 0) hashes.insert(c.comm_hash);
      }
    }
    return hashes;
  }

  // Trigger files ask for dumps on behalf of other ranks; the directory may be shared, so
  // they are validated (TriggerWatcher) and rate-limited, and what is dropped is said in
  // one line per poll at most.
  void PollTriggers() {
    size_t limited = 0;
    const std::set<uint64_t> own_comms = OwnCommHashes();
    for (const watch::Trigger& t : triggers_.PollNew()) {
      if (policy_.Dumped(t.incident_id)) continue;
      // Another run under our job id (or a run that ended): not ours to answer, nor to mention.
      if (!watch::TriggerIsOfOurRun(t, settings_.host, settings_.run_key, own_comms)) continue;
      // Of an earlier attempt (a torchrun restart keeps the run), or written before we started.
      if (!watch::TriggerIsOfOurAttempt(t, settings_.attempt, settings_.process_start_unix_ns)) continue;
      // The same collective, dumped already under this host's own view of it: that dump serves.
      if (DumpedOp(t.verdict.comm_hash, t.verdict.seq)) {
        policy_.Claim(t.incident_id);
        continue;
      }
      const uint64_t now = clock::MonotonicNowNs();
      if (!trigger_dumps_.Available(now) || !all_dumps_.Available(now)) {
        ++limited;
        continue;
      }
      trigger_dumps_.TryTake(now);
      all_dumps_.TryTake(now);
      policy_.Claim(t.incident_id);
      WriteRankDump(t.incident_id, "trigger-file", watch::VerdictOfTrigger(t));
    }
    const size_t rejected = triggers_.rejected_in_last_poll();
    if (rejected + limited == 0) return;
    Log(LogLevel::kWarn, "dropped " + std::to_string(rejected + limited) + " trigger files in " + settings_.dump_dir +
                             " (" + std::to_string(rejected) + " not valid triggers of this job and user, " +
                             std::to_string(limited) + " over the rate limit of 1 dump per minute)");
  }

  void OnLocalIncident(const watch::IncidentVerdicts& incident) {
    const detect::Verdict& v = incident.primary;
    for (const detect::Verdict& r : incident.related) policy_.Claim(watch::IncidentIdOf(r));
    const std::string id = watch::IncidentIdOf(v);
    if (policy_.Dumped(id)) return;
    if (!all_dumps_.TryTake(clock::MonotonicNowNs())) {
      Log(LogLevel::kWarn, "not dumping " + id + ": over the limit of " + std::to_string(kAllDumpsBurst) +
                               " dumps per minute");
      policy_.Claim(id);
      return;
    }
    policy_.Claim(id);
    // One dump per collective: hosts judge one hang each by what they see (the straggler's host
    // a straggler, the others a wait on remote ranks), and their trigger files cross. The first
    // dump of this process for the collective serves; analyze classifies the dumps anew anyway.
    if (DumpedOp(v.comm_hash, v.seq)) {
      LogIncident(v, watch::RelatedText(incident.related), true);
      return;
    }
    const bool lone = v.partial && v.rank_evidence.size() == 1;
    detect::Verdict local = v;
    const std::string related = watch::RelatedText(incident.related);
    if (!related.empty()) local.summary += "; " + related;
    const bool written = WriteRankDump(id, lone ? "lone-rank" : "local", std::move(local));
    if (written) ReportIfFailed(watch::WriteTriggerFile(settings_.dump_dir, TriggerOf(id, v)));
    LogIncident(v, related, written);
  }

  watch::Trigger TriggerOf(const std::string& id, const detect::Verdict& v) const {
    watch::Trigger t;
    t.incident_id = id;
    t.job_id = settings_.trigger_job_id;
    t.verdict = v;
    t.host = settings_.host;
    t.pid = static_cast<int32_t>(getpid());
    t.run_key = settings_.run_key;
    t.attempt = settings_.attempt;
    for (const uint64_t hash : OwnCommHashes()) {
      if (t.comms.size() < watch::kMaxTriggerComms) t.comms.push_back(hash);
    }
    return t;
  }

  // Remembers a dumped incident until its key completes; kinds that never resolve are not kept.
  void TrackIncident(const dump::RankDump& d) {
    const std::optional<watch::IncidentKey> key = watch::IncidentKeyOf(d.verdict, d.incident.id);
    if (!key) return;
    if (open_.size() >= kMaxOpenIncidents) open_.erase(open_.begin());
    open_.push_back(OpenIncident{*key, dump::ResolutionOf(d),
                                 {detect::ToString(d.verdict.kind), d.verdict.comm_hash, d.verdict.seq, d.verdict.op,
                                  dump::ResolutionPathFor(d, settings_.dump_dir), CommNameIn(d, d.verdict.comm_hash),
                                  detect::AboutReplay(d.verdict) ? d.verdict.graph_label : ""}});
  }

  // The name of the dump's communicator `hash`, as the incident line showed it.
  static std::string CommNameIn(const dump::RankDump& d, uint64_t hash) {
    for (const detect::CommFacts& comm : d.comms) {
      if (comm.comm_hash == hash) return comm.name;
    }
    return "";
  }

  // Every rank that dumped records, next to its dump, that the incident completed after all.
  void ResolveOpenIncidents() {
    const pid_t self = getpid();
    for (auto it = open_.begin(); it != open_.end();) {
      if (!watch::IncidentKeyResolved(it->key, facts_, self)) {
        ++it;
        continue;
      }
      dump::Resolution stamped = it->note;
      dump::StampResolutionTime(&stamped);
      ReportIfFailed(dump::WriteResolution(stamped, it->resolved.note_path));
      LogResolved(*it, stamped);
      it = open_.erase(it);
    }
  }

  bool WriteRankDump(const std::string& id, const char* trigger, detect::Verdict verdict,
                     dump::Teardown teardown = {}) {
    Prepare();  // a last gasp may dump before the first communicator was ready
    dump::RankDump d;
    dump::StampDetectionTime(&d.incident);
    d.incident.id = id;
    d.incident.trigger = trigger;
    d.incident.job_id = settings_.job_id;
    d.incident.run_key = settings_.run_key;  // analyze tells runs apart by it
    d.incident.teardown = std::move(teardown);
    d.verdict = std::move(verdict);
    dump::FillProcessFacts(settings_.nccl_env, &d);
    d.environment.cuda_driver_version = versions_.cuda_driver;
    d.environment.cuda_runtime_version = versions_.cuda_runtime;
    d.environment.nccl_version = versions_.nccl;
    if (const detect::ProcessFacts* own = OwnFacts()) watch::AddPublishedState(*own, &d);
    call_sites::AnnotateDump(&d);
    watch::AddStacks(CaptureProcessStacks(settings_.capture), &d);
    std::vector<std::string> dir_warnings;
    const Result<dump::DumpDirectory> dir =
        dump::PrepareDumpDirectory(settings_.dump_dir, settings_.dump_dir_named_by_user, &dir_warnings);
    if (!dir.ok()) {
      ReportIoFailure(dir.error().message());
      return false;
    }
    if (!dir_warnings.empty() && !dir_warning_logged_) {
      dir_warning_logged_ = true;
      Log(LogLevel::kWarn, dir_warnings.front());
    }
    // Through the directory fd that was checked, never the path again (a swapped directory
    // cannot redirect the write).
    const Result<dump::DumpFiles> result = dump::WriteDump(d, *dir);
    if (!result.ok()) ReportIoFailure(result.error().message());
    if (result.ok()) last_dump_ns_ = clock::MonotonicNowNs();
    if (result.ok() && d.verdict.comm_hash != 0) dumped_ops_.emplace(d.verdict.comm_hash, d.verdict.seq);
    if (result.ok()) TrackIncident(d);
    // The gone ranks' facts next to ours, so that analyze reaches rank_exited from the dumps.
    if (result.ok()) WriteDumpsOnBehalf(d, *dir);
    return result.ok();
  }

  void WriteDumpsOnBehalf(const dump::RankDump& own, const dump::DumpDirectory& dir) {
    for (const dump::RankDump& other : watch::DumpsOnBehalf(facts_, own)) {
      // A peer that left after our teardown began left with it, not before: its own last gasp
      // is its evidence, and a dump of it as gone would make it the culprit.
      if (teardown_ns_ != 0 && !other.process.alive && other.process.exit.exit_ns >= teardown_ns_) continue;
      // A rank that dumped for this incident itself (its last gasp before it went, or its own
      // dump before it stopped) left the better evidence, with its stacks: never replaced.
      struct stat st {};
      if (fstatat(dir.fd(), (dump::DumpFileStem(other) + ".json").c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) continue;
      const Result<dump::DumpFiles> written = dump::WriteDump(other, dir);
      if (!written.ok()) ReportIoFailure(written.error().message());
    }
  }

  // NCCL's "<host>:<pid>:<tid> [rank R]" of this thread.
  watch::LineOrigin Origin() const {
    watch::LineOrigin origin{settings_.host, getpid(), static_cast<pid_t>(syscall(SYS_gettid)), -1};
    if (const detect::ProcessFacts* own = OwnFacts()) origin.rank = own->global_rank;
    return origin;
  }

  // Shown wherever the incident line was (warn level): whoever saw the alarm sees it end.
  void LogResolved(const OpenIncident& incident, const dump::Resolution& stamped) {
    if (!LogEnabled(LogLevel::kWarn)) return;
    LogRawLine(LogLevel::kWarn, watch::ResolvedLine(Origin(), incident.resolved, dump::ResolvedAfterNs(stamped)));
  }

  void LogIncident(const detect::Verdict& v, const std::string& related, bool written) {
    if (!LogEnabled(LogLevel::kWarn)) return;
    LogRawLine(LogLevel::kWarn, watch::IncidentLine(Origin(), v, related, settings_.dump_dir, written));
  }

  void ReportIfFailed(const Status& status) {
    if (!status.ok()) ReportIoFailure(status.message());
  }

  void ReportIoFailure(const std::string& message) {
    if (io_failure_reported_) return;
    io_failure_reported_ = true;
    Log(LogLevel::kWarn, "hang dump not written: " + message + " (reported once; the job carries on)");
  }

  const WatchdogSettings& settings_;
  detect::JobFacts facts_;  // this poll's, built once by ReadOwnRun
  detect::IncidentTracker incidents_;
  watch::IncidentGrouper grouper_;
  watch::DumpPolicy policy_;
  watch::TriggerWatcher triggers_;
  // See core/watch/dump_rate_limit.h for why these numbers.
  watch::DumpRateLimiter trigger_dumps_{kTriggerDumpsBurst, kRefillNs};
  watch::DumpRateLimiter all_dumps_{kAllDumpsBurst, kRefillNs};
  LibraryVersions versions_;
  bool prepared_ = false;
  bool io_failure_reported_ = false;
  bool dir_warning_logged_ = false;
  uint64_t last_dump_ns_ = 0;  // CLOCK_MONOTONIC of this process's last dump written
  uint64_t teardown_ns_ = 0;   // when this process's teardown began (last_gasp.h); 0: not torn down
  std::set<std::pair<uint64_t, uint64_t>> dumped_ops_;  // (comm, seq) of every dump written
  std::vector<OpenIncident> open_;
};

std::string DefaultDumpDir(const std::string& job_id) {
  char cwd[4096];
  const std::string base = ::getcwd(cwd, sizeof cwd) != nullptr ? std::string(cwd) : std::string(".");
  return base + "/ncclwatch-dumps/" + job_id;
}

// The process (pid) one of whose communicators finished its init: a forked child, which
// inherits this, has none of its own until it makes one.
std::atomic<pid_t> g_communicator_ready_pid{0};

}  // namespace

void NoteCommunicatorReady() noexcept {
  const pid_t self = getpid();
  if (g_communicator_ready_pid.exchange(self, std::memory_order_acq_rel) != self) WakeWatchdog();
}

bool CommunicatorReady() noexcept { return g_communicator_ready_pid.load(std::memory_order_acquire) == getpid(); }

WatchdogSettings WatchdogSettingsOf(const settings::Settings& config, const std::string& host) {
  WatchdogSettings s;
  s.job_id = config.job_id;
  s.host = host;
  s.trigger_job_id = config.trigger_job_id;
  s.dump_dir_named_by_user = !config.dump_dir.empty();
  s.dump_dir = s.dump_dir_named_by_user ? config.dump_dir : DefaultDumpDir(config.job_id);
  s.detect = settings::DetectConfigOf(config);
  s.last_gasp_floor_ns = config.last_gasp_floor_ns;
  s.last_gasp_budget_ns = config.last_gasp_budget_ns;
  s.capture = settings::CaptureOptionsOf(config);
  s.nccl_env = config.nccl_env;
  s.attempt = detect::Attempt{config.launcher_rank.restart_count, config.launcher_rank.requeue_count};
  return s;
}

Watchdog::~Watchdog() { Stop(); }

void Watchdog::Start() {
  if (started_) return;
  started_ = true;
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    thread_ = std::thread([this] { Run(); });
  } catch (...) {  // started from the first communicator's hook (C ABI): nothing may reach the job
    Log(LogLevel::kWarn, "cannot start the watchdog thread; hangs will not be detected in this process");
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void Watchdog::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  WakeWatchdog();  // it sleeps on its eventfd, not on wake_
  StopWithin(thread_, mu_, wake_, stop_, stopped_, std::chrono::seconds(1));
}

namespace {

// Sleeps until `until`, a wake-up (a last-gasp request or Stop) or `fallback` passes: on the
// eventfd when there is one, else on the condition variable in slices (no eventfd: requests
// are then seen within the 50 ms slice).
void SleepUntil(std::chrono::steady_clock::time_point until, int wake_fd, std::unique_lock<std::mutex>& lock,
                std::condition_variable& wake, bool& stop) {
  const auto now = std::chrono::steady_clock::now();
  if (until <= now) return;
  if (wake_fd < 0) {
    wake.wait_for(lock, std::min<std::chrono::nanoseconds>(until - now, std::chrono::milliseconds(50)),
                  [&] { return stop; });
    return;
  }
  lock.unlock();
  pollfd p{wake_fd, POLLIN, 0};
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
  if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 60'000))) > 0) DrainWatchdogWake();
  lock.lock();
}

}  // namespace

void Watchdog::Run() {
  pthread_setname_np(pthread_self(), "ncclwatch-wd");
  try {
    // Started by the first init hook: until a communicator is ready it only sleeps
    // (core/watch/watch_phase.h), and the start-up work waits in Poller::Prepare.
    const auto started = std::chrono::steady_clock::now();
    const auto quiet_limit = started + std::chrono::nanoseconds(watch::QuietLimitNs(settings_.detect.stall_threshold_ns));
    const auto phase = [&] {
      return watch::PhaseOf(CommunicatorReady(),
                            static_cast<uint64_t>(std::chrono::nanoseconds(std::chrono::steady_clock::now() - started).count()),
                            settings_.detect.stall_threshold_ns);
    };
    Poller poller(settings_);
    const auto interval = std::chrono::nanoseconds(settings_.detect.poll_interval_ns);
    // It sleeps a whole poll interval on its eventfd; a last-gasp request, Stop or the first
    // communicator becoming ready wakes it at once (two wakeups a second at the default 500 ms
    // poll, not the 20 of 50 ms slices).
    const int wake_fd = LastGaspWakeFd();
    auto next_poll = std::chrono::steady_clock::now() + interval;
    ArmLastGasp(settings_.last_gasp_budget_ns, settings_.last_gasp_floor_ns);
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      lock.unlock();
      const watch::WatchPhase now_phase = phase();
      if (const int cause = PendingLastGasp(); cause != 0) {
        poller.LastGasp(cause, LastGaspRequestNs(), now_phase);
        AnswerLastGasp();
      } else if (now_phase != watch::WatchPhase::kQuiet && std::chrono::steady_clock::now() >= next_poll) {
        poller.PollOnce(now_phase);
        next_poll = std::chrono::steady_clock::now() + interval;
      }
      lock.lock();
      if (stop_ || PendingLastGasp() != 0) continue;
      // Quiet: until the quiet limit, or sooner when the first communicator is ready (its wake).
      SleepUntil(phase() == watch::WatchPhase::kQuiet ? std::max(next_poll, quiet_limit) : next_poll, wake_fd, lock,
                 wake_, stop_);
    }
    lock.unlock();
    DisarmLastGasp();
    poller.FinalResolutionCheck();
  } catch (...) {  // the thread's entry point: an escaping exception would terminate the job
    DisarmLastGasp();
    Log(LogLevel::kWarn, "watchdog stopped after an internal error; the job carries on unwatched");
  }
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
  wake_.notify_all();
}

}  // namespace ncclwatch::preload
