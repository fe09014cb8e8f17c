// RingRecord::flags (layout.h): how an op was issued and what became of its completion event.
// What the flags mean for progress is decided once, where the facts are built
// (core/watch/facts_from_snapshot.cc: RecordFacts::never_completes and untracked); the
// writer reads them only to release its completion events.
#ifndef NCCLWATCH_CORE_SHM_RECORD_FLAGS_H_
#define NCCLWATCH_CORE_SHM_RECORD_FLAGS_H_

#include <cstdint>

namespace ncclwatch::shm {

// RingRecord::flags bits.
inline constexpr uint32_t kRecordInGroup = 1u << 0;     // issued inside ncclGroupStart/End
inline constexpr uint32_t kRecordCaptured = 1u << 1;    // stream was capturing: no completion
inline constexpr uint32_t kRecordFailed = 1u << 2;      // NCCL returned an error
inline constexpr uint32_t kRecordUntracked = 1u << 3;   // no completion event could be recorded
inline constexpr uint32_t kRecordInProgress = 1u << 4;  // nonblocking: enqueue still pending
// Ended because its communicator was aborted, revoked or destroyed while it was pending: its
// completion event may have fired (an abort completes the kernels), but the op did not
// complete. Never resolves an incident.
inline constexpr uint32_t kRecordAborted = 1u << 5;
// Issued in a group that ncclGroupSimulateEnd ended: NCCL launched nothing. Owes no completion.
inline constexpr uint32_t kRecordNotLaunched = 1u << 6;
// Bits 16..31 of a grouped record's flags: the serial (1..65535, process-wide, wrapping) of the
// outermost ncclGroupEnd that launched it, so that a reader tells one group's ops (they progress
// together) from consecutive groups on one stream (they run in order: torch wraps each send and
// each receive in a group of its own). 0: not grouped, or written before the serial existed.
inline constexpr uint32_t kRecordGroupShift = 16;
inline constexpr uint32_t RecordGroupBits(uint32_t serial) { return (serial & 0xffffu) << kRecordGroupShift; }
inline constexpr uint32_t GroupSerialOf(uint32_t flags) { return flags >> kRecordGroupShift; }
// What readers keep of a record's group: 0 when not grouped; its serial; a grouped record of a
// writer without serials counts as one group with every other such record (0x10000).
inline constexpr uint32_t RecordGroupOf(uint32_t flags) {
  if ((flags & kRecordInGroup) == 0) return 0;
  return GroupSerialOf(flags) != 0 ? GroupSerialOf(flags) : 0x10000u;
}

// What the flags say about a record's completion, for every reader (facts, dumps, status):
// captured, failed or not launched owes no completion; untracked's completion is unknown, and
// so is an aborted op's (it never completes).
inline constexpr bool OwesNoCompletion(uint32_t flags) {
  return (flags & (kRecordCaptured | kRecordFailed | kRecordNotLaunched)) != 0;
}
inline constexpr bool CompletionUnknown(uint32_t flags) { return (flags & (kRecordUntracked | kRecordAborted)) != 0; }

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_RECORD_FLAGS_H_
