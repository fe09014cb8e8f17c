// NCCLWATCH_CALL_SITES=1: the Python call site of each op, "train.py:88 in step",
// the innermost user frame (core/stacks/python_call_site.h) of the thread that issued it.
//
// How: the calling thread's own frame chain, read without the GIL (python_frames_311.h, which
// says why that and not CPython's traceback dumper, measured at 250-310 us per op). Per thread,
// the last frames and their interned sites are cached, so a loop issuing its collectives from
// a few lines pays the walk only. Cost per op, median of two runs on a loaded 2-core machine:
// +52 to +115 ns with the user's frame 4 library frames down, +92 to +207 ns 32 down
// (BENCHMARKS.md, "call sites"). The collective hook alone spends 62-71 ns of its 100 ns
// budget, so this would take it over: hence a setting that is off by default.
//
// CPython 3.11 only (the torch venv's); any other version, or a process without Python:
// nothing is recorded, and activation logs one info line. A thread without a Python thread
// state (a native thread of the framework) records no site.
//
// Where it lives: process memory only. Each communicator has a side array indexed like its
// ring (CallSiteTable), whose entries carry the ring index, seq and peer of their record, so a
// reused slot is never taken for a newer record; sites are interned in one bounded process
// table of strings (4096 distinct sites, then "...").
// Off, the hot path pays one branch on CommEntry::call_sites, a pointer in the cache line the
// append already reads.
#ifndef NCCLWATCH_PRELOAD_CALL_SITES_CALL_SITES_H_
#define NCCLWATCH_PRELOAD_CALL_SITES_CALL_SITES_H_

#include <cstdint>

#include "core/dump/dump.h"
#include "core/shm/comm_slot.h"

namespace ncclwatch::preload {

struct CommEntry;
class CallSiteTable;

namespace call_sites {

// A site not captured yet (Note captures once per call, then reuses it).
inline constexpr uint32_t kNotCaptured = UINT32_MAX;

// At activation: on when `requested` and this process runs a verified CPython; logs one info
// line when requested but unusable. `ring_capacity`: the communicators' ring size.
void Configure(bool requested, uint32_t ring_capacity);

// A communicator's side array, nullptr when call sites are off. Never freed (as CommEntry).
CallSiteTable* NewTable(const CommEntry* entry);

// Records the call site of the op `ref` just appended (P2P: towards `peer`). `site` caches
// the capture across the ops of one call (a group); start it at kNotCaptured.
void Note(CallSiteTable* table, const shm::RecordRef& ref, int32_t peer, uint32_t* site) noexcept;
inline void Note(CallSiteTable* table, const shm::RecordRef& ref, int32_t peer) noexcept {
  uint32_t site = kNotCaptured;
  Note(table, ref, peer, &site);
}

// Sets RecordFacts::call_site on the records of this process's communicators in `dump`.
void AnnotateDump(dump::RankDump* dump);

}  // namespace call_sites
}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_CALL_SITES_CALL_SITES_H_
