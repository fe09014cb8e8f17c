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
  uint64_t seq = 0;      // 1-based collective number when !at_init
  int rank = -1;         // -1: every rank
  int comm_index = -1;   // -1: any communicator
  int ms = 0;            // slow; partition: delay before ncclRemoteError (0 with !has_ms: never)
  bool has_ms = false;
  std::string host_a, host_b;  // partition only: the two sides (hostnames as gethostname gives)
};

// Parses text; on error returns nullopt and sets *error to a one-line reason.
std::optional<std::vector<Fault>> ParseFaultSpec(const std::string& text, std::string* error);

// The fault of `kind` matching this point, if any. seq 0 means init.
const Fault* FindFault(const std::vector<Fault>& faults, FaultKind kind, int comm_index,
                       int rank, uint64_t seq);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_FAULT_SPEC_H_
