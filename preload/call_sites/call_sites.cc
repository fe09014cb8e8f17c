#include "preload/call_sites/call_sites.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "preload/observe/comm_registry.h"
#include "preload/lifecycle/log.h"
#include "preload/call_sites/python_frames_311.h"
#include "preload/observe/thread_heap.h"

namespace ncclwatch::preload {

// One entry per ring slot. `ring_index_plus_one` is written last (0 while being written), so a
// reader that sees the same value before and after reading the rest has a whole entry.
class CallSiteTable {
 public:
  struct Entry {
    std::atomic<uint64_t> ring_index_plus_one{0};
    std::atomic<uint64_t> seq{0};
    std::atomic<int32_t> peer{-1};  // -1 for a collective
    std::atomic<uint32_t> site{0};
  };
  struct Read {
    uint64_t seq;
    int32_t peer;
    uint32_t site;
  };

  CallSiteTable(const CommEntry* entry, uint32_t capacity)
      : entry_(entry), entries_(std::make_unique<Entry[]>(capacity)), mask_(capacity - 1) {}

  void Set(const shm::RecordRef& ref, int32_t peer, uint32_t site) {
    Entry& e = entries_[ref.ring_index & mask_];
    e.ring_index_plus_one.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    e.seq.store(ref.seq, std::memory_order_relaxed);
    e.peer.store(ref.collective ? -1 : peer, std::memory_order_relaxed);
    e.site.store(site, std::memory_order_relaxed);
    e.ring_index_plus_one.store(ref.ring_index + 1, std::memory_order_release);
  }

  // Every whole entry with a site.
  std::vector<Read> Entries() const {
    std::vector<Read> out;
    for (uint64_t i = 0; i <= mask_; ++i) {
      const Entry& e = entries_[i];
      const uint64_t before = e.ring_index_plus_one.load(std::memory_order_acquire);
      if (before == 0 || ((before - 1) & mask_) != i) continue;
      const Read read{e.seq.load(std::memory_order_relaxed), e.peer.load(std::memory_order_relaxed),
                      e.site.load(std::memory_order_relaxed)};
      std::atomic_thread_fence(std::memory_order_acquire);
      if (e.ring_index_plus_one.load(std::memory_order_relaxed) == before && read.site != 0) out.push_back(read);
    }
    return out;
  }

  const CommEntry* entry() const { return entry_; }

 private:
  const CommEntry* entry_;
  std::unique_ptr<Entry[]> entries_;
  uint64_t mask_;
};

namespace call_sites {
namespace {

// Distinct sites kept per process: a job issues collectives from a handful of lines; a
// process that generates code could make them unbounded.
constexpr size_t kMaxSites = 4096;
// Sites longer than this are cut (a path is at most 4096 bytes; a dump shows 64 records).
constexpr size_t kMaxSiteBytes = 512;
constexpr char kOverflowSite[] = "...";

PythonFrames311 g_python;
uint32_t g_ring_capacity = 0;
bool g_on = false;

std::mutex g_mu;  // the interned sites and the tables
std::vector<std::string>* g_sites = new std::vector<std::string>;  // id - 1
std::unordered_map<std::string, uint32_t>* g_site_ids = new std::unordered_map<std::string, uint32_t>;
std::vector<const CallSiteTable*>* g_tables = new std::vector<const CallSiteTable*>;

uint32_t Intern(std::string site) {
  if (site.size() > kMaxSiteBytes) site.resize(kMaxSiteBytes);
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_site_ids->find(site);
  if (it != g_site_ids->end()) return it->second;
  if (g_sites->size() >= kMaxSites) {
    if (g_sites->size() == kMaxSites) g_sites->push_back(kOverflowSite);
    return static_cast<uint32_t>(g_sites->size());
  }
  g_sites->push_back(site);
  const auto id = static_cast<uint32_t>(g_sites->size());
  g_site_ids->emplace(std::move(site), id);
  return id;
}

// Per thread: the last frames seen and their interned sites, so that a loop issuing its
// collectives from a few lines pays the walk and no text or lock (16 entries, by address).
struct SiteCache {
  static constexpr size_t kSize = 16;
  PythonFrameRef frame[kSize];
  uint32_t site[kSize] = {};
};

// The calling thread's call site, interned; 0 when unknown.
uint32_t Capture() {
  SiteCache& cache = ThisThreadHeap<SiteCache>();
  const PythonFrameRef frame = g_python.InnermostUserFrame();
  if (frame.code == nullptr) return 0;
  const size_t slot = (reinterpret_cast<uintptr_t>(frame.instr) >> 1) % SiteCache::kSize;
  if (cache.frame[slot] == frame) return cache.site[slot];
  const uint32_t site = Intern(g_python.SiteText(frame));
  cache.frame[slot] = frame;
  cache.site[slot] = site;
  return site;
}

}  // namespace

void Configure(bool requested, uint32_t ring_capacity) {
  g_on = false;
  if (!requested) return;
  if (const Status resolved = g_python.Resolve(); !resolved.ok()) {
    Log(LogLevel::kInfo, "NCCLWATCH_CALL_SITES=1 has no effect: " + resolved.message());
    return;
  }
  g_ring_capacity = ring_capacity;
  g_on = true;
}

CallSiteTable* NewTable(const CommEntry* entry) {
  if (!g_on) return nullptr;
  auto* table = new CallSiteTable(entry, g_ring_capacity);
  std::lock_guard<std::mutex> lock(g_mu);
  g_tables->push_back(table);
  return table;
}

void Note(CallSiteTable* table, const shm::RecordRef& ref, int32_t peer, uint32_t* site) noexcept {
  try {
    if (*site == kNotCaptured) *site = Capture();
    if (*site != 0) table->Set(ref, peer, *site);
  } catch (...) {  // out of memory interning: this op has no call site (inside an NCCL hook: C ABI)
  }
}

void AnnotateDump(dump::RankDump* dump) {
  if (!g_on) return;
  std::vector<const CallSiteTable*> tables;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    tables = *g_tables;
  }
  for (const CallSiteTable* table : tables) {
    const CommEntry* entry = table->entry();
    const int rank = entry->slot.valid() ? entry->slot.header()->rank.load(std::memory_order_acquire) : -1;
    std::map<std::tuple<int32_t, uint64_t>, uint32_t> site_of;  // (peer, seq): -1 for collectives
    for (const CallSiteTable::Read& read : table->Entries()) site_of[{read.peer, read.seq}] = read.site;
    if (site_of.empty()) continue;
    std::lock_guard<std::mutex> lock(g_mu);
    auto text = [&](int32_t peer, uint64_t seq) {
      auto it = site_of.find({peer, seq});
      return it == site_of.end() || it->second > g_sites->size() ? std::string() : (*g_sites)[it->second - 1];
    };
    for (detect::CommFacts& c : dump->comms) {
      if (c.comm_hash != entry->comm_hash || c.rank != rank) continue;
      for (detect::RecordFacts& r : c.records) r.call_site = text(-1, r.seq);
      for (detect::RecordFacts& r : c.p2p_records) r.call_site = text(r.peer, r.seq);
    }
  }
}

}  // namespace call_sites
}  // namespace ncclwatch::preload
