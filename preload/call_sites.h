// NCCLWATCH_CALL_SITES=1: the Python call site of each op (issue 20), "train.py:88 in step",
// the innermost user frame (core/stacks/python_call_site.h) of the thread that issued it.
//
// How: CPython's own dumper of one thread, _Py_DumpTraceback(fd, tstate), writes the calling
// thread's stack into a memfd of that thread; the text is read back (the first 8 KiB: the
// innermost frames come first) and parsed. The thread state is
// PyGILState_GetThisThreadState(), a thread-local read that needs no GIL. The GIL is never
// taken: torch and ctypes release it around the NCCL call, and PyGILState_Ensure there could
// deadlock on a thread that holds it, or wait out the 5 ms switch interval. The dumper reads
// only the calling thread's frame chain, which cannot change while that thread is inside our
// hook; it is the code faulthandler runs from a signal handler, so it takes no lock and
// allocates nothing. Weighed against walking the frame structures ourselves: that needs each
// version's private layouts (_Py_DebugOffsets exists only from 3.13) and line-table decoding,
// and a wrong offset crashes the job; the dumper is the interpreter's own code, with one
// signature from 3.6 to 3.13. Its cost, CALL_SITE_COST per op in a Python loop
// (BENCHMARKS.md, "callsites"), is mostly its small write()s; far above the 100 ns hook
// budget, hence a setting that is off by default.
//
// Verified on CPython 3.11 (the torch venv's). Any other version, a process without Python,
// or a thread without a Python thread state: no call site (the feature turns itself off at
// activation with one info line).
//
// Where it lives: process memory only. Each communicator has a side array indexed like its
// ring (CallSiteTable), whose entries carry the ring index, seq and peer of their record, so a
// reused slot is never taken for a newer record; sites are interned in one bounded process
// table of strings (4096 distinct sites, then "...").
// Off, the hot path pays one branch on CommEntry::call_sites, a pointer in the cache line the
// append already reads.
#ifndef NCCLWATCH_PRELOAD_CALL_SITES_H_
#define NCCLWATCH_PRELOAD_CALL_SITES_H_

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

#endif  // NCCLWATCH_PRELOAD_CALL_SITES_H_
