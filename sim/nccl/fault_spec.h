// NCCLSIM_FAULT: injected hangs, slowdowns, async errors and deaths (grammar in README.md).
#ifndef NCCLWATCH_SIM_NCCL_FAULT_SPEC_H_
#define NCCLWATCH_SIM_NCCL_FAULT_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ncclsim {

// kMismatchCompletes: collective #N completes even when the ranks' calls differ (op, count,
// datatype, redop, root), moving no data, as real NCCL can finish mismatched calls on
// corrupt data and only hang later.
// kPartition: the network between two hosts fails from op #N on: ops that need it never
// complete (and, with ms=M, the comm reports ncclRemoteError after M ms), as NCCL's net
// transports behave when a link or switch dies.
enum class FaultKind { kHang, kSlow, kError, kDie, kMismatchCompletes, kPartition };

struct Fault {
  FaultKind kind = FaultKind::kHang;
  bool at_init = false;  // seq=init
  uint64_t seq = 0;      // 1-based op number when !at_init; with replay, the op's place in that replay
  uint64_t replay = 0;   // replay=K: the K-th CUDA graph replay on the comm (1-based); 0: any op
  int rank = -1;         // -1: every rank
  int comm_index = -1;   // -1: any communicator
  int ms = 0;            // slow; partition: delay before ncclRemoteError (0 with !has_ms: never)
  bool has_ms = false;
  std::string host_a, host_b;  // partition only: the two sides (hostnames as gethostname gives)
};

// Parses text; on error returns nullopt and sets *error to a one-line reason.
std::optional<std::vector<Fault>> ParseFaultSpec(const std::string& text, std::string* error);

// Where an op stands in NCCLSIM_FAULT's numbering: its seq (0 means init) and, for an op a
// CUDA graph replays, the replay's number and the op's place in it (0 when eager).
struct FaultPoint {
  uint64_t seq = 0;
  uint64_t replay = 0;
  uint64_t replay_seq = 0;
};

// The fault of `kind` matching this point, if any.
const Fault* FindFault(const std::vector<Fault>& faults, FaultKind kind, int comm_index,
                       int rank, const FaultPoint& at);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_FAULT_SPEC_H_
