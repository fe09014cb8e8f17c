#include "core/shm/segment_writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "core/clock/monotonic.h"
#include "core/shm/process_info.h"
#include "core/shm/segment_name.h"

namespace ncclwatch::shm {
namespace {

void CopyString(char* dest, size_t size, const std::string& text) {
  std::memset(dest, 0, size);
  std::memcpy(dest, text.data(), text.size() < size - 1 ? text.size() : size - 1);
}

void FillHeader(SegmentHeader* h, const SegmentOptions& options, const SegmentGeometry& g) {
  h->layout_version = kLayoutVersion;
  h->header_bytes = kHeaderBytes;
  h->segment_bytes = g.segment_bytes;
  h->ring_capacity = g.ring_capacity;
  h->max_comms = kMaxComms;
  h->max_sync_slots = kMaxSyncSlots;
  h->max_peers = kMaxPeers;
  h->comm_slot_bytes = g.comm_slot_bytes;
  h->sync_slots_offset = g.sync_slots_offset;
  h->comm_slots_offset = g.comm_slots_offset;
  h->pid = options.pid;
  h->local_rank = options.rank.local_rank;
  h->world_size = options.rank.world_size;
  h->process_start_ticks = options.process_start_ticks;
  h->stall_threshold_ns.store(options.stall_threshold_ns, std::memory_order_relaxed);
  h->created_ns = clock::MonotonicNowNs();
  CopyString(h->host, sizeof(h->host), options.host);
  CopyString(h->job_id, sizeof(h->job_id), options.job_id);
  CopyString(h->boot_id, sizeof(h->boot_id), options.boot_id.empty() ? BootId() : options.boot_id);
  h->run_key = options.run_key;
  h->restart_count = options.rank.restart_count;
  h->requeue_count = options.rank.requeue_count;
  h->global_rank.store(options.rank.global_rank, std::memory_order_relaxed);
  h->rank_source.store(static_cast<uint32_t>(options.rank.source), std::memory_order_relaxed);
  h->state.store(static_cast<uint32_t>(SegmentState::kLive), std::memory_order_relaxed);
  h->comms_claimed.store(0, std::memory_order_relaxed);
  h->comms_unwatched.store(0, std::memory_order_relaxed);
  h->comms_reserved.store(0, std::memory_order_relaxed);
}

// What a reservation leaves free of /dev/shm at least: 4 MiB, or an eighth of a smaller one.
// A failing fallocate on tmpfs takes pages until the file system is full before it gives them
// back, so a request that cannot fit would, for that instant, fill /dev/shm under every other
// writer (a DataLoader worker would fault). We do not try what cannot fit with room to spare.
uint64_t HeadroomBytes(const struct statvfs& vfs) {
  const uint64_t total = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  return std::min<uint64_t>(4ull << 20, total / 8);
}

// posix_fallocate, retried on EINTR, after the headroom check; 0 or an errno value. (It
// returns the error rather than setting errno; on a file system without fallocate glibc writes
// the range, which fails with ENOSPC rather than faulting, so the guarantee holds there too.)
int Reserve(int fd, uint64_t offset, uint64_t bytes) {
  struct statvfs vfs {};
  if (fstatvfs(fd, &vfs) == 0 && vfs.f_blocks != 0) {
    const uint64_t available = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    if (available < bytes + HeadroomBytes(vfs)) return ENOSPC;
  }
  int rc;
  do {
    rc = posix_fallocate(fd, static_cast<off_t>(offset), static_cast<off_t>(bytes));
  } while (rc == EINTR);
  return rc;
}

bool IsReusable(uint32_t state) {
  const auto s = static_cast<CommState>(state);
  return s == CommState::kDestroyed || s == CommState::kAborted || s == CommState::kInitFailed;
}

// Creates a fresh segment file of our own. O_EXCL|O_NOFOLLOW: a file or symlink someone left
// under our name is never reused or followed; we take the next name instead, so a name
// squatted by another user cannot leave this process unwatched.
Result<int> CreateSegmentFile(const SegmentOptions& options, std::string* name) {
  std::string last_error;
  for (int attempt = 0; attempt < kMaxSegmentNameAttempts; ++attempt) {
    *name = SegmentName(options.uid, options.job_id, options.pid, options.process_start_ticks, attempt);
    const std::string path = "/dev/shm" + *name;
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      // The umask can only narrow 0600, but the readers want exactly 0600.
      if (fchmod(fd, 0600) == 0) return fd;
      const int code = errno;
      close(fd);
      unlink(path.c_str());
      return Status::Error("fchmod(" + path + "): " + std::strerror(code), code);
    }
    const int code = errno;
    last_error = "open(" + path + "): " + std::strerror(code);
    if (code != EEXIST) return Status::Error(last_error, code);
  }
  return Status::Error(last_error + " (and " + std::to_string(kMaxSegmentNameAttempts - 1) + " other names)", EEXIST);
}

}  // namespace

Result<std::unique_ptr<SegmentWriter>> SegmentWriter::Create(const SegmentOptions& options) {
  const SegmentGeometry geometry = ComputeGeometry(options.ring_capacity);
  std::string name;
  const Result<int> created = CreateSegmentFile(options, &name);
  if (!created.ok()) return created.error();
  const int fd = *created;
  const auto fail = [&](const char* what, int code) {
    close(fd);
    shm_unlink(name.c_str());
    return Status::Error(std::string(what) + "(/dev/shm" + name + "): " + std::strerror(code), code);
  };
  // The full size is address space only (tmpfs allocates nothing for it); what we write is
  // reserved first. The header and sync slots end where the comm slots begin.
  if (ftruncate(fd, static_cast<off_t>(geometry.segment_bytes)) != 0) return fail("ftruncate", errno);
  if (const int rc = Reserve(fd, 0, geometry.comm_slots_offset); rc != 0) return fail("posix_fallocate", rc);
  void* base = mmap(nullptr, geometry.segment_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return fail("mmap", errno);
  std::unique_ptr<SegmentWriter> writer(new SegmentWriter(name, fd, base, geometry));
  // Fresh shm pages are zero: every slot starts free, every version even.
  FillHeader(writer->header_, options, geometry);
  Status reserved;
  {
    std::lock_guard<std::mutex> lock(writer->claim_mu_);
    reserved = writer->ReserveCommSlots(kCommSlotsPerReservation);
  }  // released before the writer (which owns the mutex) may go
  if (!reserved.ok()) {
    writer.reset();  // unmaps and closes
    shm_unlink(name.c_str());
    return reserved;
  }
  writer->header_->magic.store(kMagic, std::memory_order_release);
  return writer;
}

SegmentWriter::SegmentWriter(std::string name, int fd, void* base, const SegmentGeometry& geometry)
    : name_(std::move(name)), fd_(fd), base_(base), geometry_(geometry), header_(static_cast<SegmentHeader*>(base)) {}

SegmentWriter::~SegmentWriter() {
  munmap(base_, geometry_.segment_bytes);
  close(fd_);
}

Status SegmentWriter::ReserveCommSlots(uint32_t slots) {
  const uint32_t reserved = header_->comms_reserved.load(std::memory_order_relaxed);
  if (slots <= reserved) return OkStatus();
  // A whole chunk when it fits, else just what is needed: near a full /dev/shm one more
  // communicator may still be watched.
  const uint32_t chunk_end = std::min(kMaxComms, (slots + kCommSlotsPerReservation - 1) /
                                                     kCommSlotsPerReservation * kCommSlotsPerReservation);
  Status failed;
  for (const uint32_t end : {chunk_end, slots}) {
    const uint64_t from = geometry_.CommSlotOffset(reserved);
    const int rc = Reserve(fd_, from, geometry_.CommSlotOffset(end) - from);
    if (rc == 0) {
      header_->comms_reserved.store(end, std::memory_order_release);
      return OkStatus();
    }
    failed = Status::Error("cannot reserve " + std::to_string((geometry_.CommSlotOffset(end) - from) >> 10) +
                               " KiB of /dev/shm" + name_ + " for communicator slot " + std::to_string(slots) + ": " +
                               std::strerror(rc),
                           rc);
  }
  return failed;
}

CommSlot SegmentWriter::CommSlotAt(uint32_t index) const {
  auto* base = static_cast<char*>(base_);
  auto* slot_header = reinterpret_cast<CommSlotHeader*>(base + geometry_.CommSlotOffset(index));
  auto* ring = reinterpret_cast<RingRecord*>(base + geometry_.RingOffset(index));
  auto* replays = reinterpret_cast<ReplayRingHeader*>(base + geometry_.ReplayRingOffset(index));
  return CommSlot(slot_header, ring, geometry_.ring_capacity, replays);
}

Result<CommSlot> SegmentWriter::ClaimCommSlot() {
  std::lock_guard<std::mutex> lock(claim_mu_);
  const uint32_t fresh = header_->comms_claimed.load(std::memory_order_relaxed);
  const Status reserved = fresh < kMaxComms ? ReserveCommSlots(fresh + 1)
                                            : Status::Error("all " + std::to_string(kMaxComms) +
                                                            " communicator slots are in use");
  if (reserved.ok()) {
    header_->comms_claimed.store(fresh + 1, std::memory_order_release);
    return CommSlotAt(fresh);
  }
  // Only claimed slots are backed: a slot past them would fault on a full /dev/shm even to be
  // looked at through the mapping.
  for (uint32_t i = 0; i < fresh; ++i) {
    CommSlot slot = CommSlotAt(i);
    uint32_t state = slot.header()->state.load(std::memory_order_acquire);
    // A slot whose old communicator still has completion events pending stays pinned.
    if (IsReusable(state) && slot.header()->events_pending.load(std::memory_order_acquire) == 0 &&
        slot.header()->state.compare_exchange_strong(state, static_cast<uint32_t>(CommState::kInitializing))) {
      return slot;
    }
  }
  header_->comms_unwatched.fetch_add(1, std::memory_order_relaxed);
  return reserved;
}

SyncSlot* SegmentWriter::ClaimSyncSlot(int tid) {
  auto* slots = reinterpret_cast<SyncSlot*>(static_cast<char*>(base_) + geometry_.sync_slots_offset);
  for (uint32_t i = 0; i < kMaxSyncSlots; ++i) {
    int32_t expected = 0;
    if (slots[i].tid.load(std::memory_order_relaxed) == 0 &&
        slots[i].tid.compare_exchange_strong(expected, tid, std::memory_order_acq_rel)) {
      return &slots[i];
    }
  }
  return nullptr;
}

void SegmentWriter::ReleaseSyncSlot(SyncSlot* slot) {
  slot->blocked_since_ns.store(0, std::memory_order_relaxed);
  slot->tid.store(0, std::memory_order_release);
}

void SegmentWriter::AdoptRankFromCommunicator(int rank) {
  int32_t unknown = -1;
  if (header_->global_rank.compare_exchange_strong(unknown, rank)) {
    header_->rank_source.store(static_cast<uint32_t>(RankSource::kCommunicator), std::memory_order_release);
  }
}

void SegmentWriter::RecordExit(ExitHow how, int value) { RecordExitIn(header_, how, value); }

void SegmentWriter::RecordExitIn(SegmentHeader* header, ExitHow how, int value) {
  uint32_t none = static_cast<uint32_t>(ExitHow::kNone);
  if (!header->exit_how.compare_exchange_strong(none, static_cast<uint32_t>(how), std::memory_order_relaxed)) return;
  if (how == ExitHow::kSignal) {
    header->exit_signal.store(value, std::memory_order_relaxed);
  } else {
    header->exit_status.store(value, std::memory_order_relaxed);
  }
  header->exit_ns.store(clock::MonotonicNowNs(), std::memory_order_relaxed);
  // seq_cst: the exit protocol (segment_gc.h, RemoveJobIfEnded) is a store-then-scan by every
  // exiting process; at least one of two processes exiting together sees the other's mark.
  header->state.store(static_cast<uint32_t>(SegmentState::kExited), std::memory_order_seq_cst);
}

void SegmentWriter::CloseAndUnlink() {
  header_->state.store(static_cast<uint32_t>(SegmentState::kClosed), std::memory_order_release);
  if (!unlinked_) shm_unlink(name_.c_str());
  unlinked_ = true;
}

}  // namespace ncclwatch::shm
