// Binary layout of one ncclwatch shared-memory segment (layout version 8).
//
// One segment per process that created at least one NCCL communicator, named
//   /ncclwatch.<uid>.<job id>.<pid>.<process start ticks>       (see segment_name.h)
// mode 0600, fixed size, created at the first communicator. Its size is address space only:
// /dev/shm backs a range only once the writer reserved it (posix_fallocate), and nothing is
// written or mapped-read beyond SegmentHeader::comms_reserved (see "Reservation" below). It
// outlives its process: at exit
// the process records how it left (SegmentState::kExited and the exit_* fields) and keeps the
// segment, so that the peers it leaves waiting can blame it; a process killed without a word
// leaves it kLive with a dead pid (a crash). The last live process of the job on the host
// removes every segment of the job at its own exit; `ncclwatch gc` removes what dead jobs left.
//
//   offset 0                   SegmentHeader          (kHeaderBytes, identity of the process)
//   header.sync_slots_offset   SyncSlot[max_sync_slots]   (one per application thread that
//                                                          blocked in a CUDA sync)
//   header.comm_slots_offset   max_comms x { CommSlotHeader, RingRecord[ring_capacity],
//                                            ReplayRingHeader, ReplayRecord[kReplayRingCapacity] }
//                              (stride header.comm_slot_bytes)
// Offsets are computed only by SegmentGeometry (below), record fields packed and unpacked only
// by Pack*/Unpack*: the writer and every reader share them.
//
// Every field a reader looks at is a std::atomic of at most 8 bytes, lock-free, so a reader
// in another process may map the segment read-only. Consistency rules:
//  * SegmentHeader's plain fields are written before `magic` is stored (release); a reader
//    that sees kMagic (acquire) sees them all.
//  * Groups of fields that must be seen together (a RingRecord, a SyncSlot, a comm's
//    identity) are guarded by a seqlock `version`: odd while its single writer updates it.
//  * Counters (seqs, peer counts, completion times) are single atomics, monotonic.
// Writers: a comm's identity and its ring are written by the threads that call NCCL on it,
// RingRecord::complete_ns and CommSlotHeader::last_completed_* by the tracker thread only,
// a SyncSlot by the thread that owns it.
//
// Reservation: a tmpfs page first touched through a mapping when /dev/shm is full faults
// with SIGBUS, in the job. So the writer reserves before it writes: the header, the sync slots
// and the first kCommSlotsPerReservation comm slots at creation, then the next chunk when a
// communicator needs a slot past SegmentHeader::comms_reserved. A failed reservation costs
// the communicator its watching (comms_unwatched), never a fault. With the default ring a
// chunk is 4 x 68 KiB: a process with 1-4 communicators reserves 0.27 MiB, with 16 1.07 MiB,
// with all 256 17 MiB (a slot is a 1,792-byte CommSlotHeader, static_assert in layout.cc,
// 64 KiB of ring and 2 KiB of graph replays).
//
// Identity: a process is its pid, its start time (process_start_ticks) and the boot it ran
// in (boot_id): a recycled pid or a segment of another boot reads as gone. Its run is
// run_key (run_identity.h): processes of one launch on this host share it, whatever the job
// id says (torchrun's "none", a reused MASTER_PORT).
//
// Times are CLOCK_MONOTONIC nanoseconds, comparable between processes of one host. Those the
// hooks stamp (enqueue, init, blocked syncs) are read from the TSC through the writer's own
// calibration (core/clock/stamp_clock.h), already converted: a reader needs no calibration.
#ifndef NCCLWATCH_CORE_SHM_LAYOUT_H_
#define NCCLWATCH_CORE_SHM_LAYOUT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/shm/op_code.h"

namespace ncclwatch::shm {

inline constexpr uint64_t kMagic = 0x3168637461776e63ULL;  // "ncwatch1" little-endian
// A reader accepts only its own version and names the version of a segment it refuses.
inline constexpr uint32_t kLayoutVersion = 8;
inline constexpr uint32_t kHeaderBytes = 4096;
// Communicators watched at once per process. A slot is ~68 KiB with the default ring (1024
// records of 64 bytes) and its replay ring, so 256 slots make a 17 MiB segment of address space, of which only
// the reserved chunks are backed (see "Reservation"). Past the limit, or when /dev/shm cannot
// back another chunk, a new communicator is not watched: one warning, and
// SegmentHeader::comms_unwatched counts them.
inline constexpr uint32_t kMaxComms = 256;
// Comm slots reserved at a time. 4: most processes have 1-4 communicators (torch: the
// default group, plus a few for TP/PP/DP), so one chunk serves them, and 16 communicators
// stay within 1.1 MiB: 8 ranks hold under 9 MiB of a 64 MiB Docker /dev/shm.
inline constexpr uint32_t kCommSlotsPerReservation = 4;
inline constexpr uint32_t kMaxSyncSlots = 64;
inline constexpr uint32_t kMaxPeers = 64;
inline constexpr uint32_t kDefaultRingCapacity = 1024;
inline constexpr uint32_t kMinRingCapacity = 16;
inline constexpr uint32_t kMaxRingCapacity = 1u << 16;
inline constexpr size_t kHostBytes = 64;
inline constexpr size_t kJobIdBytes = 96;
inline constexpr size_t kBootIdBytes = 40;  // /proc/sys/kernel/random/boot_id: 36 characters
// A communicator's name (ncclConfig_t.commName), truncated: 8 atomics of 8 bytes. torch 2.15
// passes its process group's name ("0" for the default group, measured on the sim), well under it.
inline constexpr size_t kCommNameWords = 8;
inline constexpr size_t kCommNameBytes = kCommNameWords * 8;

// kClosed: unlinked by its owner (a reader may still hold it open).
// kExited: the owner left the process (exit() or a fatal signal it could catch); the segment
// stays as evidence, with SegmentHeader::exit_* saying how and when.
enum class SegmentState : uint32_t { kLive = 1, kClosed = 2, kExited = 3 };

// How a process left, as it recorded it (SegmentHeader::exit_how).
enum class ExitHow : uint32_t {
  kNone = 0,    // not recorded: still running, or killed/crashed without a word
  kStatus = 1,  // exit(status), return from main, or _exit(status): exit_status is valid
  kSignal = 2,  // a fatal signal reached our handler (then re-raised): exit_signal is valid
};

// Where the header's global rank came from.
enum class RankSource : uint32_t { kUnknown = 0, kTorchrun = 1, kSlurm = 2, kOpenMpi = 3, kCommunicator = 4 };

struct SegmentHeader {
  std::atomic<uint64_t> magic;  // kMagic once the segment is fully initialised
  uint32_t layout_version;
  uint32_t header_bytes;
  uint64_t segment_bytes;
  uint32_t ring_capacity;  // power of two
  uint32_t max_comms;
  uint32_t max_sync_slots;
  uint32_t max_peers;
  uint64_t comm_slot_bytes;
  uint64_t sync_slots_offset;
  uint64_t comm_slots_offset;
  int32_t pid;
  int32_t local_rank;  // -1 when unknown
  int32_t world_size;  // -1 when unknown
  uint32_t reserved0;
  uint64_t process_start_ticks;  // /proc/<pid>/stat field 22
  uint64_t created_ns;
  char host[kHostBytes];
  char job_id[kJobIdBytes];
  char boot_id[kBootIdBytes];  // of the boot the process ran in
  uint64_t run_key;            // run_identity.h: shared by the processes of one launch
  std::atomic<int32_t> global_rank;  // -1 until known
  std::atomic<uint32_t> rank_source;  // RankSource
  std::atomic<uint32_t> state;        // SegmentState
  std::atomic<uint32_t> comms_claimed;  // comm slots [0, comms_claimed) have been used
  std::atomic<uint32_t> comms_unwatched;  // communicators created while all slots were in use
  // Exit evidence. Written once, by the exiting process (an async-signal-safe
  // handler on the fatal-signal path), before `state` becomes kExited (release): a reader
  // that sees kExited (acquire) sees them.
  std::atomic<uint32_t> exit_how;    // ExitHow
  std::atomic<int32_t> exit_status;  // when kStatus
  std::atomic<int32_t> exit_signal;  // when kSignal
  uint32_t reserved1;
  std::atomic<uint64_t> exit_ns;     // CLOCK_MONOTONIC when it recorded the exit
  // Reservation: comm slots [0, comms_reserved) are backed by /dev/shm; always
  // >= comms_claimed. Raised (release) only after posix_fallocate succeeded.
  std::atomic<uint32_t> comms_reserved;
  // The launcher's attempt, plain fields set at creation: TORCHELASTIC_RESTART_COUNT and
  // SLURM_RESTART_COUNT, -1 when not given. A torchrun restart keeps its agent, so the run
  // key, while its processes start over: a process of an earlier attempt is history (the
  // communicators it used up), never a peer.
  int32_t restart_count;
  int32_t requeue_count;
  uint32_t reserved2;
  // The job's NCCLWATCH_STALL_SEC, in ns like every time here; set at creation; 0: unknown.
  std::atomic<uint64_t> stall_threshold_ns;
};

enum class SyncKind : uint32_t { kNone = 0, kStream = 1, kEvent = 2, kDevice = 3 };
// Which API the blocked call belongs to: the runtime's cudaStreamSynchronize,
// cudaEventSynchronize, cudaDeviceSynchronize, or the driver's cuStreamSynchronize,
// cuEventSynchronize, cuCtxSynchronize (a static runtime's syncs: CuPy, XLA).
enum class SyncApi : uint32_t { kRuntime = 0, kDriver = 1 };

struct alignas(64) SyncSlot {
  std::atomic<uint32_t> version;
  std::atomic<uint32_t> kind;  // SyncKind
  std::atomic<int32_t> tid;    // owning thread, 0 when free
  std::atomic<int32_t> device;
  std::atomic<uint64_t> target;  // cudaStream_t / cudaEvent_t, 0 for a device sync
  std::atomic<uint64_t> blocked_since_ns;  // 0 when the thread is not blocked
  std::atomic<uint64_t> syncs_completed;
  // SyncApi, under `version` with `kind`. In the slot's padding: writers before it left 0,
  // which reads as the runtime, the only API they hooked.
  std::atomic<uint32_t> api;
};

enum class CommState : uint32_t {
  kFree = 0,
  kInitializing = 1,
  kReady = 2,
  kInitFailed = 3,
  kFinalized = 4,
  kDestroyed = 5,
  kAborted = 6,
  kRevoked = 7,
  kSuspended = 8,  // ncclCommSuspend (NCCL 2.29) until ncclCommResume: idle, not hung
};

// CommSlotHeader::flags bits.
inline constexpr uint32_t kCommNonblocking = 1u << 0;
inline constexpr uint32_t kCommHashKnown = 1u << 1;
inline constexpr uint32_t kCommFromSplit = 1u << 2;
inline constexpr uint32_t kCommFromShrink = 1u << 3;



struct alignas(64) RingRecord {
  std::atomic<uint32_t> version;
  std::atomic<uint32_t> op_and_types;  // PackOpAndTypes: op | datatype << 8 | redop << 16
  std::atomic<uint64_t> ring_index;    // absolute index, to detect reuse of the slot
  std::atomic<uint64_t> seq;           // collective seq, or per-peer P2P seq (1-based)
  std::atomic<uint64_t> count_and_launch;  // PackCountAndLaunch: count | (launch & 0xffffff) << 40
  std::atomic<uint64_t> peer_and_flags;  // PackPeerAndFlags: (uint32)root-or-peer | flags << 32
  std::atomic<uint64_t> stream;
  std::atomic<uint64_t> enqueue_ns;
  std::atomic<uint64_t> complete_ns;  // 0 until the tracker saw the op complete
};
static_assert(sizeof(RingRecord) == 64);

// The packed fields of a RingRecord, written and read only through these.
struct OpAndTypes {
  Op op = Op::kNone;
  uint8_t datatype = 0;  // ncclDataType_t
  uint8_t redop = 0;     // ncclRedOp_t
};
inline constexpr uint32_t PackOpAndTypes(Op op, uint8_t datatype, uint8_t redop) {
  return static_cast<uint32_t>(op) | (uint32_t{datatype} << 8) | (uint32_t{redop} << 16);
}
inline constexpr OpAndTypes UnpackOpAndTypes(uint32_t packed) {
  return {static_cast<Op>(packed & 0xff), static_cast<uint8_t>((packed >> 8) & 0xff),
          static_cast<uint8_t>((packed >> 16) & 0xff)};
}

// RingRecord::count_and_launch. `count` (elements of one NCCL call, size_t) keeps its low 40
// bits: 2^40 elements is 1 TiB of int8 in one call, more than any GPU holds (a larger count
// is stored as kMaxRecordCount, saturated). The high 24 bits carry the low 24 bits of the
// record's launch number (CommSlotHeader::collective_launches for a collective, p2p_launches
// for a P2P op); a reader restores the full number from the header's counter, which a record
// still in the ring (at most kMaxRingCapacity records back) is far less than 2^23 behind.
inline constexpr unsigned kCountBits = 40;
inline constexpr uint64_t kMaxRecordCount = (uint64_t{1} << kCountBits) - 1;
inline constexpr uint64_t kLaunchLowMask = (uint64_t{1} << (64 - kCountBits)) - 1;
struct CountAndLaunch {
  uint64_t count = 0;       // saturated at kMaxRecordCount
  uint32_t launch_low = 0;  // launch & kLaunchLowMask
};
inline constexpr uint64_t PackCountAndLaunch(uint64_t count, uint64_t launch) {
  return (count < kMaxRecordCount ? count : kMaxRecordCount) | (launch << kCountBits);
}
inline constexpr CountAndLaunch UnpackCountAndLaunch(uint64_t packed) {
  return {packed & kMaxRecordCount, static_cast<uint32_t>(packed >> kCountBits)};
}
// The full launch number whose low 24 bits are `launch_low`, nearest to `counter` (the
// header's counter read about when the record was: the record may be up to 2^23 behind it,
// or, read just before the counter moved, a few ahead). 0 when that would be below 1.
inline constexpr uint64_t RestoreLaunch(uint32_t launch_low, uint64_t counter) {
  const uint64_t delta = (uint64_t{launch_low} - counter) & kLaunchLowMask;  // record - counter, mod 2^24
  const int64_t signed_delta = delta > (kLaunchLowMask >> 1) ? static_cast<int64_t>(delta) - static_cast<int64_t>(kLaunchLowMask + 1)
                                                              : static_cast<int64_t>(delta);
  const int64_t full = static_cast<int64_t>(counter) + signed_delta;
  return full < 1 ? 0 : static_cast<uint64_t>(full);
}

struct PeerAndFlags {
  int32_t root_or_peer = -1;
  uint32_t flags = 0;  // kRecord* bits
};
inline constexpr uint64_t PackPeerAndFlags(int32_t root_or_peer, uint32_t flags) {
  return static_cast<uint32_t>(root_or_peer) | (uint64_t{flags} << 32);
}
inline constexpr PeerAndFlags UnpackPeerAndFlags(uint64_t packed) {
  return {static_cast<int32_t>(static_cast<uint32_t>(packed)), static_cast<uint32_t>(packed >> 32)};
}

// ---- CUDA graph replays.
// A collective captured into a CUDA graph is recorded once, at capture (kRecordCaptured: it
// owes no completion of its own), and runs at every launch of the graph. Each launch of an
// executable graph that holds ops of a communicator appends one ReplayRecord to that
// communicator's replay ring, which follows its RingRecord ring in the slot; one completion
// event recorded after the launch completes the records of every communicator it touches.
// Written like the ring: by the launching thread (records, replays_written) and the tracker
// (complete_ns).
//
// kReplayRingCapacity records per communicator: a rank that stalls before a replay has its
// last replays of the graph among its newest records, which is what the rules compare; 32 keep
// 16 steps of a training loop that replays a forward and a backward graph, in 2 KiB.
inline constexpr uint32_t kReplayRingCapacity = 32;
// The op codes of a graph's first kReplayOpCodes ops on the communicator, one byte each.
inline constexpr unsigned kReplayOpCodes = 8;

struct alignas(64) ReplayRingHeader {
  std::atomic<uint64_t> replays_written;  // ring head (absolute)
  std::atomic<uint64_t> reserved[7];
};

struct alignas(64) ReplayRecord {
  std::atomic<uint32_t> version;        // seqlock over the record
  std::atomic<uint32_t> ops_and_flags;  // PackReplayOpsAndFlags: ops (saturated at 0xffff) | flags << 16
  // The graph's key on this communicator: a hash of the communicator and of the seq and
  // fingerprint of each collective captured into the graph on it, in order (never a pointer:
  // every rank that captured the same ops computes the same key).
  std::atomic<uint64_t> graph;
  std::atomic<uint64_t> replay_and_index;  // PackReplayAndIndex: replay number | ring index low 24 bits << 40
  // PackCountAndLaunch(#N of the graph's first collective on the communicator, 0 when none, and
  // that record's launch number, the framework's seq): restored like a RingRecord's.
  std::atomic<uint64_t> captured;
  std::atomic<uint64_t> op_codes;  // byte i: the Op of the graph's i-th op here (kNone past the last)
  std::atomic<uint64_t> stream;    // the launch stream
  std::atomic<uint64_t> enqueue_ns;   // when cudaGraphLaunch was called
  std::atomic<uint64_t> complete_ns;  // 0 until the tracker saw the launch complete
};
static_assert(sizeof(ReplayRecord) == 64);

// ReplayRecord::ops_and_flags. Flags are kRecord* bits (record_flags.h) of their low 16.
inline constexpr uint32_t PackReplayOpsAndFlags(uint32_t ops, uint32_t flags) {
  return (ops < 0xffffu ? ops : 0xffffu) | ((flags & 0xffffu) << 16);
}
struct ReplayOpsAndFlags {
  uint32_t ops = 0;
  uint32_t flags = 0;
};
inline constexpr ReplayOpsAndFlags UnpackReplayOpsAndFlags(uint32_t packed) { return {packed & 0xffffu, packed >> 16}; }

// ReplayRecord::replay_and_index: the replay number keeps 40 bits (a graph launched every
// microsecond for 12 days), the record's absolute ring index its low 24, so that a reader
// tells a record from the one that reused its place.
inline constexpr unsigned kReplayBits = 40;
inline constexpr uint64_t kReplayMask = (uint64_t{1} << kReplayBits) - 1;
inline constexpr uint64_t kReplayIndexMask = (uint64_t{1} << (64 - kReplayBits)) - 1;
inline constexpr uint64_t PackReplayAndIndex(uint64_t replay, uint64_t ring_index) {
  return (replay & kReplayMask) | ((ring_index & kReplayIndexMask) << kReplayBits);
}
struct ReplayAndIndex {
  uint64_t replay = 0;
  uint64_t index_low = 0;
};
inline constexpr ReplayAndIndex UnpackReplayAndIndex(uint64_t packed) {
  return {packed & kReplayMask, packed >> kReplayBits};
}

// ReplayRecord::op_codes.
inline constexpr uint64_t AddReplayOpCode(uint64_t packed, unsigned position, Op op) {
  return position < kReplayOpCodes ? packed | (uint64_t{static_cast<uint8_t>(op)} << (8 * position)) : packed;
}
inline constexpr Op ReplayOpCodeAt(uint64_t packed, unsigned position) {
  return position < kReplayOpCodes ? static_cast<Op>((packed >> (8 * position)) & 0xff) : Op::kNone;
}

struct PeerCounters {
  std::atomic<int32_t> peer;  // -1 while unclaimed
  std::atomic<uint32_t> reserved;
  std::atomic<uint64_t> sends;
  std::atomic<uint64_t> recvs;
};

// A communicator name packed into / unpacked from CommSlotHeader::name: bytes in order, little-
// endian within a word, NUL-padded. The unpacked text stops at the first NUL; a name of
// kCommNameBytes or more keeps its first kCommNameBytes bytes.
struct PackedCommName {
  uint64_t words[kCommNameWords] = {};
};
inline constexpr PackedCommName PackCommName(const char* text, size_t length) {
  PackedCommName packed;
  for (size_t i = 0; i < length && i < kCommNameBytes; ++i) {
    packed.words[i / 8] |= uint64_t{static_cast<unsigned char>(text[i])} << (8 * (i % 8));
  }
  return packed;
}
// Writes up to kCommNameBytes bytes to `out` and returns how many precede the first NUL.
inline constexpr size_t UnpackCommName(const PackedCommName& packed, char (&out)[kCommNameBytes]) {
  size_t length = kCommNameBytes;
  for (size_t i = 0; i < kCommNameBytes; ++i) {
    out[i] = static_cast<char>((packed.words[i / 8] >> (8 * (i % 8))) & 0xff);
    if (out[i] == '\0' && length == kCommNameBytes) length = i;
  }
  return length;
}

struct alignas(64) CommSlotHeader {
  std::atomic<uint32_t> version;  // seqlock over the identity fields below
  std::atomic<uint32_t> state;    // CommState
  // Identity.
  std::atomic<uint64_t> comm_hash;
  std::atomic<uint64_t> parent_hash;
  std::atomic<uint64_t> handle;  // ncclComm_t in the owning process
  std::atomic<int32_t> rank;
  std::atomic<int32_t> nranks;
  std::atomic<int32_t> device;
  std::atomic<uint32_t> flags;
  // ncclConfig_t.commName as the caller gave it, truncated to kCommNameBytes, NUL-padded;
  // all zero when none. Under `version` with the rest of the identity. Written
  // and read only through Store/LoadCommName and Pack/UnpackCommName.
  std::atomic<uint64_t> name[kCommNameWords];
  // Lifecycle.
  std::atomic<uint64_t> init_start_ns;
  std::atomic<uint64_t> init_done_ns;
  std::atomic<int32_t> init_result;
  std::atomic<int32_t> async_error;  // last ncclResult_t seen from ncclCommGetAsyncError
  std::atomic<uint64_t> async_error_ns;
  // Progress.
  std::atomic<uint64_t> last_enqueued_seq;
  std::atomic<uint64_t> last_completed_seq;
  std::atomic<uint64_t> last_completed_ns;
  std::atomic<uint64_t> records_written;  // ring head (absolute)
  // Framework sequence numbers, written by the appending thread next to the two
  // above (one cache line): `collective_launches` counts collective launches, each ungrouped
  // collective one and each outermost group with collectives on this communicator one (torch's
  // SeqNum / Flight Recorder collective_seq_id, tools/README.md "Matching Flight Recorder");
  // `p2p_launches` counts P2P records in issue order (FR's p2p_seq_id).
  std::atomic<uint64_t> collective_launches;
  std::atomic<uint64_t> p2p_launches;
  std::atomic<uint32_t> peers_claimed;
  std::atomic<uint32_t> peers_overflowed;
  // Completion tracking. `generation` counts the communicators this slot has held; a slot is
  // not reused while `events_pending` (completion events of its communicator not yet seen
  // complete or failed) is nonzero, so no event of an old communicator marks a new one.
  std::atomic<uint32_t> generation;
  std::atomic<uint32_t> events_pending;
  // Ops whose completion could not be tracked (no event recorded, or the event failed):
  // their complete_ns stays 0 forever, and they are "unknown", never complete.
  std::atomic<uint64_t> untracked_ops;
  PeerCounters peers[kMaxPeers];
};

// CommSlotHeader::name as a whole (relaxed: the identity's seqlock orders it).
inline PackedCommName LoadCommName(const CommSlotHeader& h) {
  PackedCommName packed;
  for (size_t i = 0; i < kCommNameWords; ++i) packed.words[i] = h.name[i].load(std::memory_order_relaxed);
  return packed;
}
inline void StoreCommName(CommSlotHeader& h, const PackedCommName& packed) {
  for (size_t i = 0; i < kCommNameWords; ++i) h.name[i].store(packed.words[i], std::memory_order_relaxed);
}

// Sizes and offsets (bytes from the segment's start) derived from a ring capacity; the
// single source of truth for where things are. Writers take it from ComputeGeometry, readers
// from GeometryOf a header whose fields they checked against ComputeGeometry.
struct SegmentGeometry {
  uint32_t ring_capacity;
  uint64_t comm_slot_bytes;
  uint64_t sync_slots_offset;
  uint64_t comm_slots_offset;
  uint64_t segment_bytes;

  uint64_t CommSlotOffset(uint32_t index) const { return comm_slots_offset + uint64_t{index} * comm_slot_bytes; }
  // A slot's ring follows its CommSlotHeader, 64-byte aligned (RingRecord is one cache line).
  uint64_t RingOffset(uint32_t index) const { return CommSlotOffset(index) + kRingOffsetInCommSlot; }
  // Its replay ring follows the ring: a ReplayRingHeader, then the records.
  uint64_t ReplayRingOffset(uint32_t index) const { return RingOffset(index) + uint64_t{ring_capacity} * sizeof(RingRecord); }
  static constexpr uint64_t kRingOffsetInCommSlot = (sizeof(CommSlotHeader) + 63) / 64 * 64;
  static constexpr uint64_t kReplayRingBytes = sizeof(ReplayRingHeader) + uint64_t{kReplayRingCapacity} * sizeof(ReplayRecord);
};
SegmentGeometry ComputeGeometry(uint32_t ring_capacity);
// The geometry a header declares (a reader checks it against ComputeGeometry first).
SegmentGeometry GeometryOf(const SegmentHeader& header);

// Clamps to [kMinRingCapacity, kMaxRingCapacity] and rounds up to a power of two.
uint32_t NormalizeRingCapacity(uint64_t requested);

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_LAYOUT_H_
