#include "core/shm/reader.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "core/clock/monotonic.h"
#include "core/shm/process_info.h"
#include "core/shm/record_flags.h"
#include "core/shm/segment_file.h"
#include "core/shm/segment_name.h"
#include "core/shm/shm_directory.h"

namespace ncclwatch::shm {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;
constexpr int kReadAttempts = 16;

std::string BoundedString(const char* text, size_t size) { return std::string(text, strnlen(text, size)); }

bool SameBytes(const void* a, const void* b, size_t size) { return std::memcmp(a, b, size) == 0; }

// Copies of shared memory are consistent when two reads in a row agree byte for byte and the
// seqlock version is even: a writer that started before the second read changed the version
// (or, if it had started before the first, left it odd).
template <typename T>
bool ReadStable(const SegmentFile& file, uint64_t offset, T* out) {
  T second;
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    if (!file.Read(offset, out, sizeof(T)) || !file.Read(offset, &second, sizeof(T))) return false;
    if (SameBytes(out, &second, sizeof(T)) && (out->version.load(kRelaxed) & 1) == 0) return true;
  }
  return false;
}

// Reads `count` seqlocked elements in two bulk reads; elements that changed in between are
// re-read alone. ok[i] tells which elements are consistent.
template <typename T>
bool ReadStableArray(const SegmentFile& file, uint64_t offset, size_t count, std::unique_ptr<T[]>* out,
                     std::vector<bool>* ok) {
  *out = std::make_unique<T[]>(count);  // atomics cannot live in a vector
  ok->assign(count, false);
  auto second = std::make_unique<T[]>(count);
  if (!file.Read(offset, out->get(), count * sizeof(T)) || !file.Read(offset, second.get(), count * sizeof(T))) {
    return false;
  }
  for (size_t i = 0; i < count; ++i) {
    T& element = (*out)[i];
    (*ok)[i] = (SameBytes(&element, &second[i], sizeof(T)) && (element.version.load(kRelaxed) & 1) == 0) ||
               ReadStable(file, offset + i * sizeof(T), &element);
  }
  return true;
}

// Only a header of this layout whose geometry is the one we would compute, and whose
// declared size is the file's size, tells us where things are: every offset used later comes
// from it, and each read is bounded by the file size besides.
std::string HeaderProblem(const SegmentHeader& h, uint64_t file_size) {
  if (h.layout_version != kLayoutVersion) {
    return "layout version " + std::to_string(h.layout_version) + ", this ncclwatch reads only version " +
           std::to_string(kLayoutVersion);
  }
  if (h.header_bytes != kHeaderBytes) return "unknown layout";
  const SegmentGeometry g = ComputeGeometry(h.ring_capacity);
  const bool geometry_ok = g.ring_capacity == h.ring_capacity && g.segment_bytes == h.segment_bytes &&
                           h.comm_slot_bytes == g.comm_slot_bytes && h.comm_slots_offset == g.comm_slots_offset &&
                           h.sync_slots_offset == g.sync_slots_offset && h.max_comms == kMaxComms &&
                           h.max_sync_slots == kMaxSyncSlots && h.max_peers == kMaxPeers;
  if (!geometry_ok) return "inconsistent header";
  if (h.segment_bytes != file_size) {
    return "header declares " + std::to_string(h.segment_bytes) + " bytes, the file has " + std::to_string(file_size);
  }
  return "";
}

void ToRecordView(const RingRecord& r, RecordView* out) {
  const OpAndTypes op = UnpackOpAndTypes(r.op_and_types.load(kRelaxed));
  const PeerAndFlags peer = UnpackPeerAndFlags(r.peer_and_flags.load(kRelaxed));
  out->ring_index = r.ring_index.load(kRelaxed);
  out->seq = r.seq.load(kRelaxed);
  const CountAndLaunch count = UnpackCountAndLaunch(r.count_and_launch.load(kRelaxed));
  out->count = count.count;
  out->framework_seq = count.launch_low;  // low bits until RestoreFrameworkSeqs
  out->stream = r.stream.load(kRelaxed);
  out->enqueue_ns = r.enqueue_ns.load(kRelaxed);
  // An aborted op did not complete, whatever its event said (layout.h, kRecordAborted): the
  // tracker may have stored the event's time in the instant the abort flagged it.
  out->complete_ns = (peer.flags & kRecordAborted) != 0 ? 0 : r.complete_ns.load(kRelaxed);
  out->op = op.op;
  out->datatype = op.datatype;
  out->redop = op.redop;
  out->root_or_peer = peer.root_or_peer;
  out->flags = peer.flags;
}

// Ring positions [first, first + count) of one comm, which may wrap: at most two runs.
void ReadRing(const SegmentFile& file, uint64_t ring_offset, uint32_t capacity, uint64_t written, size_t max_records,
              CommView* out) {
  const uint64_t kept = std::min<uint64_t>({capacity, max_records, written});
  uint64_t index = written - kept;
  out->records.reserve(kept);
  while (index < written) {
    const uint64_t position = index & (capacity - 1);
    const uint64_t run = std::min<uint64_t>(written - index, capacity - position);
    std::unique_ptr<RingRecord[]> records;
    std::vector<bool> ok;
    if (!ReadStableArray(file, ring_offset + position * sizeof(RingRecord), run, &records, &ok)) return;
    for (uint64_t i = 0; i < run; ++i, ++index) {
      RecordView record;
      ToRecordView(records[i], &record);
      // Skip records torn by a concurrent rewrite or already reused for a newer index.
      if (ok[i] && record.ring_index == index) out->records.push_back(record);
    }
  }
}

void ToReplayView(const ReplayRecord& r, ReplayView* out) {
  const ReplayOpsAndFlags ops = UnpackReplayOpsAndFlags(r.ops_and_flags.load(kRelaxed));
  const ReplayAndIndex replay = UnpackReplayAndIndex(r.replay_and_index.load(kRelaxed));
  const CountAndLaunch captured = UnpackCountAndLaunch(r.captured.load(kRelaxed));
  out->graph = r.graph.load(kRelaxed);
  out->replay = replay.replay;
  out->ring_index = replay.index_low;  // the low bits until ReadReplays checks them
  out->first_seq = captured.count;
  out->first_framework_seq = captured.launch_low;  // low bits until RestoreFrameworkSeqs
  out->ops = ops.ops;
  out->flags = ops.flags;
  const uint64_t codes = r.op_codes.load(kRelaxed);
  for (unsigned i = 0; i < kReplayOpCodes && i < ops.ops; ++i) out->op_codes.push_back(ReplayOpCodeAt(codes, i));
  out->stream = r.stream.load(kRelaxed);
  out->enqueue_ns = r.enqueue_ns.load(kRelaxed);
  out->complete_ns = (ops.flags & kRecordAborted) != 0 ? 0 : r.complete_ns.load(kRelaxed);
}

// The replay ring of one comm: its header, then its newest records, oldest first.
void ReadReplays(const SegmentFile& file, uint64_t offset, CommView* out) {
  ReplayRingHeader header;
  if (!file.Read(offset, &header, sizeof header)) return;
  const uint64_t written = header.replays_written.load(kRelaxed);
  out->replays_written = written;
  std::unique_ptr<ReplayRecord[]> records;
  std::vector<bool> ok;
  if (!ReadStableArray(file, offset + sizeof(ReplayRingHeader), kReplayRingCapacity, &records, &ok)) return;
  const uint64_t kept = std::min<uint64_t>(written, kReplayRingCapacity);
  for (uint64_t index = written - kept; index < written; ++index) {
    const uint64_t position = index & (kReplayRingCapacity - 1);
    ReplayView replay;
    ToReplayView(records[position], &replay);
    // Skip records torn by a concurrent rewrite or already reused for a newer index.
    if (!ok[position] || replay.ring_index != (index & kReplayIndexMask)) continue;
    replay.ring_index = index;
    out->replays.push_back(std::move(replay));
  }
}

// A record keeps its launch's low 24 bits; the full number is the one nearest the header's
// counter of its kind (layout.h, RestoreLaunch).
void RestoreFrameworkSeqs(CommView* comm) {
  for (RecordView& r : comm->records) {
    const uint64_t counter = IsPointToPoint(r.op) ? comm->p2p_launches : comm->collective_launches;
    r.framework_seq = RestoreLaunch(static_cast<uint32_t>(r.framework_seq), counter);
  }
  for (ReplayView& r : comm->replays) {
    if (r.first_framework_seq == 0) continue;  // no captured op kept its launch number
    const uint64_t counter = r.first_seq != 0 ? comm->collective_launches : comm->p2p_launches;
    r.first_framework_seq = RestoreLaunch(static_cast<uint32_t>(r.first_framework_seq), counter);
  }
}

void ToCommView(const CommSlotHeader& h, bool identity_ok, CommView* out) {
  out->state = static_cast<CommState>(h.state.load(kRelaxed));
  if (identity_ok) {
    out->comm_hash = h.comm_hash.load(kRelaxed);
    out->parent_hash = h.parent_hash.load(kRelaxed);
    out->handle = h.handle.load(kRelaxed);
    out->rank = h.rank.load(kRelaxed);
    out->nranks = h.nranks.load(kRelaxed);
    out->device = h.device.load(kRelaxed);
    out->flags = h.flags.load(kRelaxed);
    char text[kCommNameBytes];
    out->name.assign(text, UnpackCommName(LoadCommName(h), text));
  }
  out->init_start_ns = h.init_start_ns.load(kRelaxed);
  out->init_done_ns = h.init_done_ns.load(kRelaxed);
  out->init_result = h.init_result.load(kRelaxed);
  out->async_error = h.async_error.load(kRelaxed);
  out->async_error_ns = h.async_error_ns.load(kRelaxed);
  out->last_completed_seq = h.last_completed_seq.load(kRelaxed);
  out->last_completed_ns = h.last_completed_ns.load(kRelaxed);
  out->last_enqueued_seq = h.last_enqueued_seq.load(kRelaxed);
  out->records_written = h.records_written.load(kRelaxed);
  out->collective_launches = h.collective_launches.load(kRelaxed);
  out->p2p_launches = h.p2p_launches.load(kRelaxed);
  out->peers_overflowed = h.peers_overflowed.load(kRelaxed);
  out->untracked_ops = h.untracked_ops.load(kRelaxed);
  const uint32_t peers = std::min(h.peers_claimed.load(kRelaxed), kMaxPeers);
  for (uint32_t i = 0; i < peers; ++i) {
    out->peers.push_back({h.peers[i].peer.load(kRelaxed), h.peers[i].sends.load(kRelaxed),
                          h.peers[i].recvs.load(kRelaxed)});
  }
}

bool ReadComm(const SegmentFile& file, const SegmentHeader& seg, uint32_t index, size_t max_records, CommView* out) {
  const SegmentGeometry geometry = GeometryOf(seg);
  const uint64_t slot_offset = geometry.CommSlotOffset(index);
  // Counters are single monotonic atomics: when the slot never reads stable twice (a busy
  // writer), the last copy still serves for them; the identity then stays unknown.
  auto h = std::make_unique<CommSlotHeader>();
  const bool identity_ok = ReadStable(file, slot_offset, h.get());
  if (!identity_ok && !file.Read(slot_offset, h.get(), sizeof *h)) return false;
  out->slot = index;
  ToCommView(*h, identity_ok, out);
  ReadRing(file, geometry.RingOffset(index), seg.ring_capacity, out->records_written, max_records, out);
  ReadReplays(file, geometry.ReplayRingOffset(index), out);
  RestoreFrameworkSeqs(out);
  return true;
}

void ReadSyncSlots(const SegmentFile& file, uint64_t offset, ProcessView* out) {
  std::unique_ptr<SyncSlot[]> slots;
  std::vector<bool> ok;
  if (!ReadStableArray(file, offset, kMaxSyncSlots, &slots, &ok)) return;
  for (uint32_t i = 0; i < kMaxSyncSlots; ++i) {
    const SyncSlot& s = slots[i];
    if (!ok[i] || s.tid.load(kRelaxed) == 0) continue;
    SyncView view;
    view.tid = s.tid.load(kRelaxed);
    view.kind = static_cast<SyncKind>(s.kind.load(kRelaxed));
    view.api = s.api.load(kRelaxed) == static_cast<uint32_t>(SyncApi::kDriver) ? SyncApi::kDriver : SyncApi::kRuntime;
    view.target = s.target.load(kRelaxed);
    view.device = s.device.load(kRelaxed);
    view.blocked_since_ns = s.blocked_since_ns.load(kRelaxed);
    view.syncs_completed = s.syncs_completed.load(kRelaxed);
    out->sync_slots.push_back(view);
  }
}

void FillProcessFields(const SegmentHeader& h, ProcessView* view) {
  view->pid = h.pid;
  view->process_start_ticks = h.process_start_ticks;
  view->run_key = h.run_key;
  const ProcessLook look = LookAtProcessOfBoot(h.boot_id, sizeof h.boot_id, h.pid, h.process_start_ticks);
  view->alive = look.alive;
  const uint32_t state = h.state.load(kRelaxed);
  view->closed = state == static_cast<uint32_t>(SegmentState::kClosed);
  view->exited = state == static_cast<uint32_t>(SegmentState::kExited);
  // A process that runs and has not exited: its state (0 for a dead one), the rest of its OS
  // state where ReadJobSnapshot asks.
  if (!view->exited) view->os.state = look.state;
  if (view->exited) {
    view->exit_how = static_cast<ExitHow>(h.exit_how.load(kRelaxed));
    view->exit_status = h.exit_status.load(kRelaxed);
    view->exit_signal = h.exit_signal.load(kRelaxed);
    view->exit_ns = h.exit_ns.load(kRelaxed);
  }
  view->stale = !view->alive;
  view->host = BoundedString(h.host, sizeof(h.host));
  view->job_id = BoundedString(h.job_id, sizeof(h.job_id));
  view->global_rank = h.global_rank.load(kRelaxed);
  view->rank_source = static_cast<RankSource>(h.rank_source.load(kRelaxed));
  view->local_rank = h.local_rank;
  view->world_size = h.world_size;
  view->restart_count = h.restart_count;
  view->requeue_count = h.requeue_count;
  view->comms_unwatched = h.comms_unwatched.load(kRelaxed);
  view->comms_reserved = h.comms_reserved.load(kRelaxed);
  view->created_ns = h.created_ns;
  view->stall_threshold_ns = h.stall_threshold_ns.load(kRelaxed);
  view->ring_capacity = h.ring_capacity;
  view->segment_bytes = h.segment_bytes;
}

// The checked open every lister goes through: nullopt (with one warning per bad file) for
// anything that is not a complete segment of ours.
std::optional<SegmentFile> OpenOurSegment(const std::string& entry, SegmentHeader* header) {
  Result<SegmentFile, SegmentRejection> opened = SegmentFile::Open(entry);
  SegmentRejection rejection = opened.error();
  if (opened.ok()) {
    const SegmentFile& file = *opened;
    if (!ReadSegmentHeader(file, header)) {
      rejection = {SegmentProblem::kIncomplete, "ignoring /dev/shm/" + entry + ": header unreadable", file.inode(),
                   file.age_sec()};
    } else if (header->magic.load(kRelaxed) != kMagic) {
      rejection = {SegmentProblem::kIncomplete, "ignoring /dev/shm/" + entry + ": no segment header", file.inode(),
                   file.age_sec()};
    } else if (const std::string problem = HeaderProblem(*header, file.size()); !problem.empty()) {
      rejection = {SegmentProblem::kRejected, "ignoring /dev/shm/" + entry + ": " + problem, file.inode(), 0};
    } else {
      return std::move(opened).value();
    }
  }
  if (rejection.Reportable()) WarnAboutSegmentOnce(entry, rejection.inode, rejection.why);
  return std::nullopt;
}

// A complete, checked segment of ours (what status lists).
bool IsOurs(const std::string& entry) {
  auto header = std::make_unique<SegmentHeader>();
  return OpenOurSegment(entry, header.get()).has_value();
}

// Whether the live process a segment names maps it: a copy of a segment (a frozen rank's,
// renamed next to a live process of the same user) is no process's segment. /proc/<pid>/maps
// is read once per process and segment (about 0.3 ms for a torch process), then cached by
// pid, start time and name; when it cannot be read the segment is trusted as before.
bool MappedByItsProcess(const ProcessView& view) {
  if (view.pid == getpid()) return true;
  struct Key {
    pid_t pid;
    uint64_t start_ticks;
    std::string entry;
    bool operator<(const Key& o) const {
      return std::tie(pid, start_ticks, entry) < std::tie(o.pid, o.start_ticks, o.entry);
    }
  };
  static std::mutex mu;
  static std::map<Key, bool>* cache = new std::map<Key, bool>();  // never destroyed: read at exit too
  const Key key{view.pid, view.process_start_ticks, view.segment_name};
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache->find(key); it != cache->end()) return it->second;
  }
  const Mapping mapping = SegmentMappedBy(view.pid, view.segment_name);
  const bool trusted = mapping != Mapping::kNotMapped;
  if (mapping != Mapping::kUnknown) {
    std::lock_guard<std::mutex> lock(mu);
    if (cache->size() >= 4096) cache->clear();
    cache->emplace(key, trusted);
  }
  return trusted;
}

}  // namespace

std::optional<ProcessView> ReadSegment(const std::string& entry_name, size_t max_records_per_comm) {
  auto header = std::make_unique<SegmentHeader>();
  const std::optional<SegmentFile> file = OpenOurSegment(entry_name, header.get());
  if (!file) return std::nullopt;
  const SegmentHeader& h = *header;
  ProcessView view;
  view.segment_name = entry_name;
  FillProcessFields(h, &view);
  ReadSyncSlots(*file, h.sync_slots_offset, &view);
  const uint32_t used = std::min(h.comms_claimed.load(kRelaxed), kMaxComms);
  for (uint32_t i = 0; i < used; ++i) {
    CommView comm;
    if (ReadComm(*file, h, i, max_records_per_comm, &comm) && comm.state != CommState::kFree) {
      view.comms.push_back(std::move(comm));
    }
  }
  return view;
}

JobSnapshot ReadJobSnapshot(const std::string& job_id, uid_t uid, size_t max_records_per_comm) {
  JobSnapshot snapshot;
  snapshot.job_id = SanitizeJobId(job_id);
  snapshot.taken_ns = clock::MonotonicNowNs();
  for (const std::string& entry : ListShmEntries(JobEntryPrefix(uid, snapshot.job_id))) {
    ParsedSegmentName parsed;
    if (!ParseSegmentEntry(entry, uid, snapshot.job_id, &parsed)) continue;
    std::optional<ProcessView> view = ReadSegment(entry, max_records_per_comm);
    if (!view || view->job_id != snapshot.job_id || view->pid != parsed.pid) continue;
    if (view->alive && !view->exited) {
      if (!MappedByItsProcess(*view)) {
        WarnAboutSegmentOnce(entry, 0, "ignoring /dev/shm/" + entry + ": process " + std::to_string(view->pid) +
                                           " runs but does not map it (a copy, not its segment)");
        continue;
      }
      view->os = ReadOsState(view->pid, view->os.state);
    }
    snapshot.processes.push_back(std::move(*view));
  }
  std::sort(snapshot.processes.begin(), snapshot.processes.end(), [](const ProcessView& a, const ProcessView& b) {
    const unsigned ra = static_cast<unsigned>(a.global_rank), rb = static_cast<unsigned>(b.global_rank);
    return ra != rb ? ra < rb : a.pid < b.pid;  // unknown ranks (-1) last
  });
  return snapshot;
}

std::vector<std::string> ListJobIds(uid_t uid) { return JobIdsWhere(uid, IsOurs); }

}  // namespace ncclwatch::shm
