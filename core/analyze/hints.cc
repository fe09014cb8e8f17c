#include "core/analyze/hints.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>

#include "core/analyze/user_frames.h"
#include "core/format/rank_list.h"

namespace ncclwatch::analyze {
namespace {

using format::FormatRanks;

constexpr size_t kInnermostUserFrames = 8;

std::string HostList(const std::set<std::string>& hosts) {
  std::string out;
  for (const auto& h : hosts) out += (out.empty() ? "" : ",") + h;
  return out;
}

// "NCCL_P2P_DISABLE=1 on h1" for the hosts that set it; "" when none did: a variable nobody set
// is no evidence of anything.
std::string EnvEvidence(const std::vector<const dump::RankDump*>& dumps, const std::string& name) {
  std::map<std::string, std::set<std::string>> hosts_by_value;
  for (const auto* d : dumps) {
    auto it = d->environment.nccl_env.find(name);
    if (it != d->environment.nccl_env.end()) hosts_by_value[it->second].insert(d->process.host);
  }
  std::string out;
  for (const auto& [value, hosts] : hosts_by_value) {
    if (!out.empty()) out += "; ";
    out += name + "=" + value + " on " + HostList(hosts);
  }
  return out;
}

// The drivers the dumps name (an unknown one says nothing), 545.x flagged; "" when none is known.
std::string DriverEvidence(const std::vector<const dump::RankDump*>& dumps) {
  std::map<std::string, std::set<std::string>> hosts_by_driver;
  for (const auto* d : dumps) {
    if (!d->environment.nvidia_driver.empty()) hosts_by_driver[d->environment.nvidia_driver].insert(d->process.host);
  }
  std::string out;
  for (const auto& [driver, hosts] : hosts_by_driver) {
    if (!out.empty()) out += "; ";
    out += "driver " + driver + " on " + HostList(hosts);
    if (driver.rfind("545.", 0) == 0) out += " (545.x has reports of exactly this hang)";
  }
  return out;
}

void AddIfAny(std::string evidence, Hint* h) {
  if (!evidence.empty()) h->evidence.push_back(std::move(evidence));
}

// Ranks the verdict blames that left no dump, when no process of the hosts that dumped held
// them: their host stopped or never started them. Said before any setting: no NCCL variable
// explains a rank that is not there.
void AbsentRanks(const HintInput& in, std::vector<Hint>* hints) {
  if (in.verdict->culprits_without_facts.empty()) return;
  std::map<std::string, std::vector<int>> ranks_by_host;
  if (in.table) {
    for (const auto& [rank, entry] : in.table->ranks) ranks_by_host[entry.dump->process.host].push_back(rank);
  }
  Hint h;
  h.id = "absent_ranks";
  const std::string absent = FormatRanks(in.verdict->culprits_without_facts);
  h.advice = "Start with the host of " + absent + ": no dump came from " +
             (format::CountRanks(in.verdict->culprits_without_facts) == 1 ? "it" : "them") +
             " or from any peer on that host, so the host stopped (killed, rebooted, unreachable) or its launcher never "
             "started them. Check that it is up, the launcher's log and dmesg there, before any NCCL setting.";
  std::string seen;
  for (const auto& [host, ranks] : ranks_by_host) seen += (seen.empty() ? "" : ", ") + host + " (" + FormatRanks(ranks) + ")";
  h.evidence.push_back(absent + " left no dump" + (seen.empty() ? "" : "; dumps came from " + seen));
  h.evidence.push_back(in.verdict->summary);
  hints->push_back(std::move(h));
}

void P2PTransport(const HintInput& in, std::vector<Hint>* hints) {
  Hint h;
  h.id = "p2p_transport";
  h.advice = std::string(in.verdict->kind == detect::VerdictKind::kP2PHang
                             ? "Both ranks of the pair posted matching Send/Recv ops and they never complete: "
                             : "Every rank is inside the same collective and it never completes: ") +
             "test the P2P path with "
      "NCCL_P2P_DISABLE=1, check the driver version (545.x has such reports), set NCCL_P2P_LEVEL=NVL on "
      "NVLink machines, and rerun with NCCL_DEBUG=INFO.";
  h.evidence.push_back(in.verdict->summary);
  AddIfAny(DriverEvidence(in.dumps), &h);
  AddIfAny(EnvEvidence(in.dumps, "NCCL_P2P_DISABLE"), &h);
  AddIfAny(EnvEvidence(in.dumps, "NCCL_P2P_LEVEL"), &h);
  hints->push_back(std::move(h));
}

void Check(const std::string& text, const std::string& where, std::vector<std::string>* matches, bool* resume) {
  if (!LooksLikeDataLoading(text)) return;
  matches->push_back(where + ": " + text);
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"resume", "restore", "skip"}) {
    if (lower.find(word) != std::string::npos) *resume = true;
  }
}

void DataLoading(const HintInput& in, std::vector<Hint>* hints) {
  std::vector<std::string> matches;
  bool resume = false;
  // A process holding many culprit ranks is read once, under its first rank.
  std::unordered_set<const dump::RankDump*> seen;
  for (const auto& [rank, d] : in.culprits) {
    if (!seen.insert(d).second) continue;
    std::string where = "rank " + std::to_string(rank) + " (" + d->process.host + ":" +
                        std::to_string(d->process.pid) + ")";
    for (const auto& t : d->python.threads) {
      size_t n = 0;
      for (const auto& f : t.frames) {
        if (n++ == kInnermostUserFrames) break;
        Check(f.function + " (" + f.file + ":" + std::to_string(f.line) + ")", where, &matches, &resume);
      }
    }
    for (const auto& t : d->threads) {
      for (const auto& frame : NativeUserFrames(t, kInnermostUserFrames).frames) {
        Check(frame, where, &matches, &resume);
      }
    }
  }
  if (matches.empty()) return;
  Hint h;
  h.id = "data_loading";
  h.advice = std::string("The stragglers are in data loading") + (resume ? ", restoring or skipping data" : "") +
             ": suspect uneven data loading or data-state restore (typical after resuming from a checkpoint). "
             "Save the data-loader state in the checkpoint instead of skipping batches, or raise the "
             "collective timeout while it catches up.";
  const size_t kMaxEvidence = 6;
  for (size_t i = 0; i < matches.size() && i < kMaxEvidence; ++i) h.evidence.push_back(matches[i]);
  if (matches.size() > kMaxEvidence) {
    h.evidence.push_back("... and " + std::to_string(matches.size() - kMaxEvidence) + " more frames");
  }
  hints->push_back(std::move(h));
}

void Divergence(const HintInput& in, std::vector<Hint>* hints) {
  std::map<std::string, std::vector<int>> ranks_by_op;
  for (const auto& row : *in.fingerprints) {
    if (row.seq != in.verdict->seq) continue;
    for (const auto& cell : row.cells) ranks_by_op[cell.known ? cell.op : "(no record)"].push_back(cell.rank);
  }
  Hint h;
  std::string evidence = "at #" + std::to_string(in.verdict->seq) + ":";
  for (const auto& [op, ranks] : ranks_by_op) evidence += " " + FormatRanks(ranks) + " issued " + op + ";";
  evidence.pop_back();
  h.evidence.push_back(evidence);
  if (ranks_by_op.count("Broadcast") && ranks_by_op.size() > 1) {
    h.id = "broadcast_divergence";
    h.advice =
        "A Broadcast that only some ranks issue: DDP buffer broadcast divergence (try "
        "DistributedDataParallel(..., broadcast_buffers=False)) or rank-dependent control flow, such as "
        "validation or an extra forward on some ranks only.";
  } else {
    h.id = "collective_divergence";
    h.advice =
        "The ranks issued different collectives at the same point: look for rank-dependent control flow "
        "(a branch, an early exit or a different number of iterations on some ranks).";
  }
  hints->push_back(std::move(h));
}

void InitTransport(const HintInput& in, std::vector<Hint>* hints) {
  Hint h;
  h.id = "init_transport";
  h.advice =
      "Communicator init never finishes: check the interface and transport settings: NCCL_SOCKET_IFNAME "
      "(the interface the ranks can reach each other on), NCCL_IB_DISABLE=1 on machines without "
      "InfiniBand, and the P2P level (NCCL_P2P_LEVEL); rerun with NCCL_DEBUG=INFO.";
  h.evidence.push_back(in.verdict->summary);
  for (const char* name : {"NCCL_SOCKET_IFNAME", "NCCL_IB_DISABLE", "NCCL_P2P_LEVEL"}) AddIfAny(EnvEvidence(in.dumps, name), &h);
  hints->push_back(std::move(h));
}

// A stale unique id: where such ids come from, and the attempt each culprit ran in.
void StaleUniqueId(const HintInput& in, std::vector<Hint>* hints) {
  Hint h;
  h.id = "stale_unique_id";
  h.advice =
      "A rank initialised a communicator from a unique id that an earlier group or attempt had used: it read the "
      "id before the new root published its own under the same key of a store that outlived the group. torch "
      "publishes each new group's id under the key of the group before it, and torchrun's store lives as long "
      "as its agent, across destroy_process_group and restarts. Give every attempt (and every re-created group) "
      "a store of its own: a PrefixStore named after TORCHELASTIC_RESTART_COUNT (and a round number) passed to "
      "init_process_group, or --rdzv-backend c10d with TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 (a fresh store per "
      "restart); or have the ranks meet (a barrier on another store) after the new root's id is published.";
  h.evidence.push_back(in.verdict->summary);
  for (const auto& [rank, d] : in.culprits) {
    if (d->process.attempt.restart >= 0) {
      h.evidence.push_back("rank " + std::to_string(rank) + " (" + d->process.host + ":" + std::to_string(d->process.pid) +
                           ") is of attempt " + std::to_string(d->process.attempt.restart));
    }
  }
  hints->push_back(std::move(h));
}

bool SameCall(const detect::RecordFacts& a, const detect::RecordFacts& b) {
  return a.op == b.op && a.count == b.count && a.datatype == b.datatype && a.redop == b.redop && a.root == b.root;
}

// How the process behind a culprit left; empty when it left cleanly (exit status 0, or it
// only left the communicator).
std::string CrashEvidence(int rank, const dump::RankDump& d) {
  const std::string who = "rank " + std::to_string(rank) + " (" + d.process.host + ":" + std::to_string(d.process.pid) + ")";
  if (d.process.alive) return "";
  if (!d.process.exit.recorded) return who + " died without recording an exit: killed (e.g. SIGKILL, OOM) or crashed";
  if (d.process.exit.signal != 0) return who + " was terminated by signal " + std::to_string(d.process.exit.signal);
  if (d.process.exit.status != 0) return who + " exited with status " + std::to_string(d.process.exit.status);
  return "";
}

// The exited rank's calls by #N, from #1; empty when its kept history does not start at #1.
// The facts hold its collectives in ascending #N, one record per number (FactsFromDumps).
std::vector<const detect::RecordFacts*> CallsFromFirst(const detect::CommFacts& c) {
  std::vector<const detect::RecordFacts*> calls;
  for (const detect::RecordFacts& r : c.records) {
    if (r.seq != calls.size() + 1) return {};  // a gap, or the start fell out of the ring
    calls.push_back(&r);
  }
  return calls;
}

// Whether `calls` (#1..#L) end on a whole training step: after a prologue (e.g. DDP's initial
// parameter broadcast) they repeat with some period P >= 2 and stop after a whole number of
// periods. A rank whose data ran out stops there (uneven inputs); a rank that ran an extra
// forward and left stops inside a period (the extra calls look like the start of a step).
// nullopt when no period with at least two whole repetitions is found.
std::optional<bool> EndsOnWholeStep(const std::vector<const detect::RecordFacts*>& calls) {
  const size_t n = calls.size();
  size_t best_period = 0, best_length = 0;  // the period whose repetition covers the most calls
  for (size_t period = 2; 2 * period <= n && period <= 64; ++period) {
    // The longest suffix [start, n) in which call i equals call i + period.
    size_t start = n - period;
    while (start > 0 && SameCall(*calls[start - 1], *calls[start - 1 + period])) --start;
    if (n - start >= 2 * period && n - start > best_length) best_period = period, best_length = n - start;
  }
  if (best_period == 0) return std::nullopt;
  return best_length % best_period == 0;
}

// rank_exited: a crash, uneven inputs, or a collective only some ranks issue.
void RankExited(const HintInput& in, std::vector<Hint>* hints) {
  const detect::Verdict& v = *in.verdict;
  std::vector<std::string> crashes;
  std::optional<bool> whole_step;  // of the first exited rank whose history can tell
  for (const auto& [rank, d] : in.culprits) {
    if (std::string crash = CrashEvidence(rank, *d); !crash.empty()) crashes.push_back(crash);
    if (whole_step || !in.table) continue;
    if (auto entry = in.table->ranks.find(rank); entry != in.table->ranks.end()) {
      whole_step = EndsOnWholeStep(CallsFromFirst(*entry->second.comm));
    }
  }
  const detect::RecordFacts* waited = nullptr;
  for (size_t i = 0; in.table && !waited && i < v.other_ranks.size(); ++i) waited = in.table->Record(v.other_ranks[i], v.seq);
  Hint h;
  const std::string waited_text = "the others wait in #" + std::to_string(v.seq) + " " + (waited ? waited->op : v.op);
  if (!crashes.empty()) {
    h.id = "crash";
    h.advice = "A rank died while the others were still in the job: look at its log and exit status (the "
               "stack at its exit, OOM killer in dmesg, a Python exception); the waiting ranks are victims.";
    h.evidence = crashes;
  } else if (whole_step.value_or(false)) {
    h.id = "uneven_inputs";
    h.advice = "The ranks that exited finished cleanly after a whole number of steps while the others started one "
               "more: the ranks ran different numbers of steps (uneven inputs). Give every rank the same number of "
               "batches (DistributedSampler with drop_last=True), or wrap the loop in DDP's Join context manager "
               "(torch.distributed.algorithms.Join).";
    h.evidence.push_back(waited_text + "; the exited ranks' calls stop at the end of their repeating step");
  } else {
    h.id = "partial_collective";
    h.advice = "The exited ranks stopped in the middle of their repeating step, after calls the others matched with "
               "calls of their own: a collective on some ranks only, such as a forward pass on one rank only "
               "(validation) with DDP broadcast_buffers=True (use broadcast_buffers=False, or run it on every "
               "rank), or a rank-dependent branch before exit.";
    h.evidence.push_back(waited_text + (whole_step ? "; the exited ranks' calls stop inside their repeating step"
                                                   : "; no repeating step in the exited ranks' kept history"));
  }
  h.evidence.insert(h.evidence.begin(), v.summary);
  hints->push_back(std::move(h));
}

void OldKernel(const HintInput& in, std::vector<Hint>* hints) {
  std::map<std::string, std::set<std::string>> hosts_by_kernel;
  for (const auto* d : in.dumps) {
    if (KernelOlderThan5_5(d->environment.kernel_release)) {
      hosts_by_kernel[d->environment.kernel_release].insert(d->process.host);
    }
  }
  if (hosts_by_kernel.empty()) return;
  Hint h;
  h.id = "old_kernel";
  h.advice = "Kernel older than 5.5, where NCCL hangs have been reported; 5.5 or newer is recommended.";
  for (const auto& [kernel, hosts] : hosts_by_kernel) h.evidence.push_back("kernel " + kernel + " on " + HostList(hosts));
  hints->push_back(std::move(h));
}

}  // namespace

// from_chars, not sscanf("%d"): a release such as "99999999999.1" from a dump would
// overflow an int, which sscanf leaves undefined.
bool KernelOlderThan5_5(const std::string& release) {
  const char* const end = release.data() + release.size();
  unsigned major = 0, minor = 0;
  auto [after_major, major_error] = std::from_chars(release.data(), end, major);
  if (major_error != std::errc() || after_major == end || *after_major != '.') return false;
  auto [after_minor, minor_error] = std::from_chars(after_major + 1, end, minor);
  if (minor_error != std::errc()) return false;
  return major < 5 || (major == 5 && minor < 5);
}

std::vector<Hint> BuildHints(const HintInput& in) {
  std::vector<Hint> hints;
  using detect::VerdictKind;
  const VerdictKind kind = in.verdict->kind;
  AbsentRanks(in, &hints);  // first: a rank that is not there comes before any setting
  if (kind == VerdictKind::kCollectiveHang || kind == VerdictKind::kP2PHang) P2PTransport(in, &hints);
  if (kind == VerdictKind::kStraggler || kind == VerdictKind::kP2PStraggler) DataLoading(in, &hints);
  if (kind == VerdictKind::kMismatch && in.fingerprints && !in.fingerprints->empty()) Divergence(in, &hints);
  if (kind == VerdictKind::kInitHang) InitTransport(in, &hints);
  if (kind == VerdictKind::kStaleUniqueId) StaleUniqueId(in, &hints);
  if (kind == VerdictKind::kRankExited) RankExited(in, &hints);
  if (kind != VerdictKind::kNone) OldKernel(in, &hints);
  return hints;
}

}  // namespace ncclwatch::analyze
