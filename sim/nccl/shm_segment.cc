#include "shm_segment.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <new>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "futex.h"

namespace ncclsim {
namespace {

void SleepMs(int ms) {
  timespec ts{0, ms * 1000000L};
  nanosleep(&ts, nullptr);
}

}  // namespace

ShmSegment::ShmSegment(uint64_t comm_hash, int nranks)
    : store_(comm_hash), nranks_(nranks), layout_(nranks) {}

ShmSegment::~ShmSegment() {
  if (void* base = base_.load()) munmap(base, layout_.TotalBytes());
}

bool ShmSegment::Attach(int rank, const std::function<bool()>& stop, std::string* error) {
  const size_t size = layout_.TotalBytes();
  bool creator = false;
  int fd = -1;
  int backoff_ms = 1;
  // Peers may start in any order; those that find no segment yet poll for it with
  // short sleeps, as ranks connecting to a bootstrap root would.
  for (;;) {
    fd = store_.Open(/*create=*/true, error);
    if (fd >= 0) {
      creator = true;
      if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
        *error = "ftruncate " + name() + ": " + std::strerror(errno);
        close(fd);
        store_.Unlink();
        return false;
      }
      break;
    }
    if (errno != EEXIST) return false;
    fd = store_.Open(/*create=*/false, error);
    if (fd >= 0) {
      struct stat st {};
      if (fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == size) break;
      close(fd);
    } else if (errno != ENOENT) {
      // Refused or unreadable: not ours to remove, and a peer must not recreate it behind us.
      unlinked_.store(true);
      return false;
    }
    error->clear();
    if (stop()) return false;
    SleepMs(backoff_ms);
    backoff_ms = std::min(backoff_ms * 2, 20);
  }
  error->clear();
  void* mapped = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapped == MAP_FAILED) {
    *error = "mmap " + name() + ": " + std::strerror(errno);
    if (creator) store_.Unlink();
    return false;
  }
  base_.store(mapped);
  SegmentHeader* h = header();
  if (creator) {
    // ftruncate zero-fills, so atomics start at 0; only the constants need writing.
    h->nranks = static_cast<uint32_t>(nranks_);
    h->total_bytes = size;
    h->ready.store(kSegmentReady, std::memory_order_release);
    FutexWakeAll(&h->ready);
  } else {
    while (h->ready.load(std::memory_order_acquire) != kSegmentReady) {
      if (stop()) return false;
      FutexWait(&h->ready, 0, 100);
    }
  }
  // Published before counting in: peers read it only after everyone attached.
  char* host = slot(rank)->host;
  if (gethostname(host, kHostNameBytes - 1) != 0) std::snprintf(host, kHostNameBytes, "localhost");
  host[kHostNameBytes - 1] = '\0';
  const uint32_t now = h->attached.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (now == static_cast<uint32_t>(nranks_)) Unlink();
  FutexWakeAll(&h->attached);
  return true;
}

bool ShmSegment::WaitAllAttached(const std::function<bool()>& stop) {
  SegmentHeader* h = header();
  for (;;) {
    const uint32_t v = h->attached.load(std::memory_order_acquire);
    if (v >= static_cast<uint32_t>(nranks_)) return true;
    if (stop()) return false;
    FutexWait(&h->attached, v, 100);
  }
}

void ShmSegment::Unlink() {
  if (unlinked_.exchange(true)) return;
  store_.Unlink();
}

std::string ShmSegment::host(int r) const {
  const char* h = slot(r)->host;
  return std::string(h, strnlen(h, kHostNameBytes));
}

RankSlot* ShmSegment::slot(int r) const {
  return reinterpret_cast<RankSlot*>(static_cast<char*>(base_.load()) + layout_.SlotsOffset()) + r;
}
P2pChannel* ShmSegment::channel(int from, int to) const {
  return reinterpret_cast<P2pChannel*>(static_cast<char*>(base_.load()) + layout_.ChannelsOffset()) +
         from * nranks_ + to;
}
unsigned char* ShmSegment::stage(int r) const {
  return static_cast<unsigned char*>(base_.load()) + layout_.StageOffset() + r * kStageBytes;
}
unsigned char* ShmSegment::p2p_buffer(int from, int to) const {
  return static_cast<unsigned char*>(base_.load()) + layout_.P2pOffset() +
         static_cast<size_t>(from * nranks_ + to) * kP2pBytes;
}

WindowEntry* ShmSegment::window(int slot, int rank) const {
  auto* base = static_cast<unsigned char*>(base_.load()) + layout_.WindowsOffset();
  return reinterpret_cast<WindowEntry*>(base) + static_cast<size_t>(slot * nranks_ + rank);
}

SignalBoard* ShmSegment::signals(int from, int to) const {
  auto* base = static_cast<unsigned char*>(base_.load()) + layout_.SignalsOffset();
  return reinterpret_cast<SignalBoard*>(base) + static_cast<size_t>(from * nranks_ + to);
}

}  // namespace ncclsim
