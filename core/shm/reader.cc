#include "core/shm/reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string_view>

#include "core/shm/process_info.h"
#include "core/shm/seqlock.h"
#include "core/shm/segment_name.h"

namespace ncclwatch::shm {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;
constexpr int kReadAttempts = 16;
constexpr const char* kShmDir = "/dev/shm";

// A read-only mapping of a whole segment, unmapped on scope exit.
class Mapping {
 public:
  explicit Mapping(const std::string& entry_name) {
    const std::string path = std::string(kShmDir) + "/" + entry_name;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size >= static_cast<off_t>(kHeaderBytes)) {
      void* base = mmap(nullptr, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
      if (base != MAP_FAILED) {
        base_ = base;
        size_ = static_cast<size_t>(st.st_size);
      }
    }
    close(fd);
  }
  ~Mapping() {
    if (base_ != nullptr) munmap(base_, size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  const char* bytes() const { return static_cast<const char*>(base_); }
  size_t size() const { return size_; }

 private:
  void* base_ = nullptr;
  size_t size_ = 0;
};

std::string BoundedString(const char* text, size_t size) { return std::string(text, strnlen(text, size)); }

bool HeaderIsUsable(const SegmentHeader& h, size_t mapped) {
  if (h.magic.load(std::memory_order_acquire) != kMagic) return false;
  if (h.layout_version != kLayoutVersion || h.header_bytes != kHeaderBytes) return false;
  const SegmentGeometry g = ComputeGeometry(h.ring_capacity);
  return g.ring_capacity == h.ring_capacity && g.segment_bytes == h.segment_bytes && h.segment_bytes <= mapped &&
         h.comm_slot_bytes == g.comm_slot_bytes && h.comm_slots_offset == g.comm_slots_offset &&
         h.sync_slots_offset == g.sync_slots_offset && h.max_comms == kMaxComms &&
         h.max_sync_slots == kMaxSyncSlots && h.max_peers == kMaxPeers;
}

bool ReadRecord(const RingRecord& r, RecordView* out) {
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    uint32_t seen;
    if (!SeqlockReadBegin(r.version, &seen)) continue;
    const uint32_t op_and_types = r.op_and_types.load(kRelaxed);
    const uint64_t peer_and_flags = r.peer_and_flags.load(kRelaxed);
    out->ring_index = r.ring_index.load(kRelaxed);
    out->seq = r.seq.load(kRelaxed);
    out->count = r.count.load(kRelaxed);
    out->stream = r.stream.load(kRelaxed);
    out->enqueue_ns = r.enqueue_ns.load(kRelaxed);
    out->complete_ns = r.complete_ns.load(kRelaxed);
    if (!SeqlockReadValid(r.version, seen)) continue;
    out->op = static_cast<Op>(op_and_types & 0xff);
    out->datatype = static_cast<uint8_t>((op_and_types >> 8) & 0xff);
    out->redop = static_cast<uint8_t>((op_and_types >> 16) & 0xff);
    out->root_or_peer = static_cast<int32_t>(static_cast<uint32_t>(peer_and_flags));
    out->flags = static_cast<uint32_t>(peer_and_flags >> 32);
    return true;
  }
  return false;
}

bool ReadIdentity(const CommSlotHeader& h, CommView* out) {
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    uint32_t seen;
    if (!SeqlockReadBegin(h.version, &seen)) continue;
    out->comm_hash = h.comm_hash.load(kRelaxed);
    out->parent_hash = h.parent_hash.load(kRelaxed);
    out->handle = h.handle.load(kRelaxed);
    out->rank = h.rank.load(kRelaxed);
    out->nranks = h.nranks.load(kRelaxed);
    out->device = h.device.load(kRelaxed);
    out->flags = h.flags.load(kRelaxed);
    if (SeqlockReadValid(h.version, seen)) return true;
  }
  return false;
}

void ReadRing(const RingRecord* ring, uint32_t capacity, uint64_t written, size_t max_records, CommView* out) {
  const uint64_t kept = std::min<uint64_t>(capacity, max_records);
  const uint64_t first = written > kept ? written - kept : 0;
  out->records.reserve(written - first);
  for (uint64_t index = first; index < written; ++index) {
    RecordView record;
    // Skip records torn by a concurrent rewrite or already reused for a newer index.
    if (ReadRecord(ring[index & (capacity - 1)], &record) && record.ring_index == index) {
      out->records.push_back(record);
    }
  }
}

void ReadComm(const char* slot_bytes, uint32_t capacity, uint32_t index, size_t max_records, CommView* out) {
  const auto& h = *reinterpret_cast<const CommSlotHeader*>(slot_bytes);
  const auto* ring = reinterpret_cast<const RingRecord*>(slot_bytes + (sizeof(CommSlotHeader) + 63) / 64 * 64);
  out->slot = index;
  out->state = static_cast<CommState>(h.state.load(std::memory_order_acquire));
  ReadIdentity(h, out);
  out->init_start_ns = h.init_start_ns.load(kRelaxed);
  out->init_done_ns = h.init_done_ns.load(kRelaxed);
  out->init_result = h.init_result.load(kRelaxed);
  out->async_error = h.async_error.load(std::memory_order_acquire);
  out->async_error_ns = h.async_error_ns.load(kRelaxed);
  out->last_completed_seq = h.last_completed_seq.load(std::memory_order_acquire);
  out->last_completed_ns = h.last_completed_ns.load(kRelaxed);
  out->last_enqueued_seq = h.last_enqueued_seq.load(kRelaxed);
  out->records_written = h.records_written.load(std::memory_order_acquire);
  out->peers_overflowed = h.peers_overflowed.load(kRelaxed);
  const uint32_t peers = std::min(h.peers_claimed.load(std::memory_order_acquire), kMaxPeers);
  for (uint32_t i = 0; i < peers; ++i) {
    out->peers.push_back({h.peers[i].peer.load(kRelaxed), h.peers[i].sends.load(kRelaxed),
                          h.peers[i].recvs.load(kRelaxed)});
  }
  ReadRing(ring, capacity, out->records_written, max_records, out);
}

void ReadSyncSlots(const SyncSlot* slots, ProcessView* out) {
  for (uint32_t i = 0; i < kMaxSyncSlots; ++i) {
    const SyncSlot& s = slots[i];
    for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
      uint32_t seen;
      if (!SeqlockReadBegin(s.version, &seen)) continue;
      SyncView view;
      view.tid = s.tid.load(kRelaxed);
      view.kind = static_cast<SyncKind>(s.kind.load(kRelaxed));
      view.target = s.target.load(kRelaxed);
      view.device = s.device.load(kRelaxed);
      view.blocked_since_ns = s.blocked_since_ns.load(kRelaxed);
      view.syncs_completed = s.syncs_completed.load(kRelaxed);
      if (!SeqlockReadValid(s.version, seen)) continue;
      if (view.tid != 0) out->sync_slots.push_back(view);
      break;
    }
  }
}

std::vector<std::string> ListShmEntries(std::string_view prefix) {
  std::vector<std::string> entries;
  DIR* dir = opendir(kShmDir);
  if (dir == nullptr) return entries;
  while (const dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name.substr(0, prefix.size()) == prefix) entries.emplace_back(name);
  }
  closedir(dir);
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace

std::optional<ProcessView> ReadSegment(const std::string& entry_name, size_t max_records_per_comm) {
  const Mapping mapping(entry_name);
  if (mapping.bytes() == nullptr) return std::nullopt;
  const auto& h = *reinterpret_cast<const SegmentHeader*>(mapping.bytes());
  if (!HeaderIsUsable(h, mapping.size())) return std::nullopt;
  ProcessView view;
  view.segment_name = entry_name;
  view.pid = h.pid;
  view.process_start_ticks = h.process_start_ticks;
  view.alive = ProcessIsAlive(h.pid, h.process_start_ticks);
  view.closed = h.state.load(std::memory_order_acquire) == static_cast<uint32_t>(SegmentState::kClosed);
  view.stale = !view.alive;
  view.host = BoundedString(h.host, sizeof(h.host));
  view.job_id = BoundedString(h.job_id, sizeof(h.job_id));
  view.global_rank = h.global_rank.load(std::memory_order_acquire);
  view.rank_source = static_cast<RankSource>(h.rank_source.load(kRelaxed));
  view.local_rank = h.local_rank;
  view.world_size = h.world_size;
  view.created_ns = h.created_ns;
  view.ring_capacity = h.ring_capacity;
  view.segment_bytes = h.segment_bytes;
  ReadSyncSlots(reinterpret_cast<const SyncSlot*>(mapping.bytes() + h.sync_slots_offset), &view);
  const uint32_t used = std::min(h.comms_claimed.load(std::memory_order_acquire), kMaxComms);
  for (uint32_t i = 0; i < used; ++i) {
    CommView comm;
    ReadComm(mapping.bytes() + h.comm_slots_offset + i * h.comm_slot_bytes, h.ring_capacity, i,
             max_records_per_comm, &comm);
    if (comm.state != CommState::kFree) view.comms.push_back(std::move(comm));
  }
  return view;
}

JobSnapshot ReadJobSnapshot(const std::string& job_id, uid_t uid, size_t max_records_per_comm) {
  JobSnapshot snapshot;
  snapshot.job_id = SanitizeJobId(job_id);
  snapshot.taken_ns = MonotonicNowNs();
  for (const std::string& entry : ListShmEntries(JobEntryPrefix(uid, snapshot.job_id))) {
    ParsedSegmentName parsed;
    if (!ParseSegmentEntry(entry, uid, snapshot.job_id, &parsed)) continue;
    std::optional<ProcessView> view = ReadSegment(entry, max_records_per_comm);
    if (!view || view->job_id != snapshot.job_id || view->pid != parsed.pid) continue;
    snapshot.processes.push_back(std::move(*view));
  }
  std::sort(snapshot.processes.begin(), snapshot.processes.end(), [](const ProcessView& a, const ProcessView& b) {
    const unsigned ra = static_cast<unsigned>(a.global_rank), rb = static_cast<unsigned>(b.global_rank);
    return ra != rb ? ra < rb : a.pid < b.pid;  // unknown ranks (-1) last
  });
  return snapshot;
}

std::vector<std::string> ListJobIds(uid_t uid) {
  const std::string prefix = std::string(kSegmentPrefix) + std::to_string(uid) + ".";
  std::set<std::string> jobs;
  for (const std::string& entry : ListShmEntries(prefix)) {
    // <job>.<pid>.<ticks>: the job id is what precedes the last two fields.
    const std::string rest = entry.substr(prefix.size());
    const size_t last = rest.rfind('.');
    if (last == std::string::npos || last == 0) continue;
    const size_t middle = rest.rfind('.', last - 1);
    if (middle == std::string::npos || middle == 0) continue;
    const std::string job = rest.substr(0, middle);
    ParsedSegmentName parsed;
    if (ParseSegmentEntry(entry, uid, job, &parsed)) jobs.insert(job);
  }
  return {jobs.begin(), jobs.end()};
}

int RemoveStaleSegments(const std::string& job_id, uid_t uid) {
  const std::string job = SanitizeJobId(job_id);
  int removed = 0;
  for (const std::string& entry : ListShmEntries(JobEntryPrefix(uid, job))) {
    ParsedSegmentName parsed;
    if (!ParseSegmentEntry(entry, uid, job, &parsed)) continue;
    // The name carries pid and start time, so even a segment whose header was never
    // completed (owner died during creation) can be judged.
    if (ProcessIsAlive(parsed.pid, parsed.start_ticks)) continue;
    if (shm_unlink(("/" + entry).c_str()) == 0) ++removed;
  }
  return removed;
}

int RemoveDeadJobs(const std::string& keep_job_id, uid_t uid) {
  const std::string keep = SanitizeJobId(keep_job_id);
  int removed = 0;
  for (const std::string& job : ListJobIds(uid)) {
    if (job == keep) continue;
    bool any_alive = false;
    for (const std::string& entry : ListShmEntries(JobEntryPrefix(uid, job))) {
      ParsedSegmentName parsed;
      if (ParseSegmentEntry(entry, uid, job, &parsed) && ProcessIsAlive(parsed.pid, parsed.start_ticks)) {
        any_alive = true;
        break;
      }
    }
    if (!any_alive) removed += RemoveStaleSegments(job, uid);
  }
  return removed;
}

}  // namespace ncclwatch::shm
