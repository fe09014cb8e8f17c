// Layout of one communicator's shared-memory segment, mapped by every rank's process.
// Ranks coordinate only through monotonically increasing counters plus one doorbell
// word per rank: whoever changes something a rank may wait for rings that rank's bell.
#ifndef NCCLWATCH_SIM_NCCL_SHARED_STATE_H_
#define NCCLWATCH_SIM_NCCL_SHARED_STATE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ncclsim {

inline constexpr size_t kStageBytes = 128 * 1024;  // per rank, collectives
inline constexpr size_t kP2pBytes = 32 * 1024;     // per ordered rank pair
inline constexpr uint32_t kSegmentReady = 0x6e63636c;
inline constexpr size_t kHostNameBytes = 64;       // HOST_NAME_MAX (64) is truncated by one
// One-sided operations (ncclPutSignal/ncclSignal/ncclWaitSignal).
inline constexpr int kWindowSlots = 64;     // windows registered at once per communicator
inline constexpr int kSignalContexts = 4;   // ctx in [0, 4)
inline constexpr int kSignalIndices = 64;   // sigIdx in [0, 64)

// What a rank says it is calling at a collective position; all ranks must agree.
struct CollSignature {
  int32_t kind;
  int32_t datatype;
  int32_t op;
  int32_t root;
  uint64_t count;
  bool operator==(const CollSignature&) const = default;
};

struct alignas(64) RankSlot {
  std::atomic<uint32_t> doorbell;
  std::atomic<uint64_t> phase;       // stream-side collective progress
  CollSignature signature;           // valid once phase passed the op's first step
  std::atomic<uint64_t> boot_phase;  // host-side exchanges (split)
  int32_t boot_data[2];
  char host[kHostNameBytes];         // gethostname() of the rank, written at attach
};

struct P2pChannel {
  std::atomic<uint64_t> posted;    // chunks written by the sender
  std::atomic<uint64_t> consumed;  // chunks taken by the receiver
  uint64_t message_bytes;          // size of the message the current chunk belongs to
  uint64_t chunk_bytes;
};

// Where one rank's registered window lives: peers write into it with process_vm_writev.
struct WindowEntry {
  int32_t pid;
  uint32_t pad;
  uint64_t address;
  uint64_t bytes;
};

// Signals received by one rank, per sender, context and index; they only grow.
struct SignalBoard {
  std::atomic<uint64_t> count[kSignalContexts][kSignalIndices];
};

struct SegmentHeader {
  std::atomic<uint32_t> ready;
  std::atomic<uint32_t> attached;
  uint32_t nranks;
  uint32_t pad;
  uint64_t total_bytes;
};

// Offsets inside a segment for a given number of ranks.
class SegmentLayout {
 public:
  explicit SegmentLayout(int nranks) : n_(static_cast<size_t>(nranks)) {}
  size_t SlotsOffset() const { return 64; }
  size_t ChannelsOffset() const { return SlotsOffset() + n_ * sizeof(RankSlot); }
  size_t StageOffset() const { return Align(ChannelsOffset() + n_ * n_ * sizeof(P2pChannel)); }
  size_t P2pOffset() const { return StageOffset() + n_ * kStageBytes; }
  size_t WindowsOffset() const { return P2pOffset() + n_ * n_ * kP2pBytes; }
  size_t SignalsOffset() const { return Align(WindowsOffset() + kWindowSlots * n_ * sizeof(WindowEntry)); }
  size_t TotalBytes() const { return SignalsOffset() + n_ * n_ * sizeof(SignalBoard); }

 private:
  static size_t Align(size_t v) { return (v + 4095) & ~size_t{4095}; }
  size_t n_;
};

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_SHARED_STATE_H_
