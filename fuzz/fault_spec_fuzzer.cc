// Fuzz target: NCCLSIM_FAULT, the sim's fault-injection grammar (sim/nccl/fault_spec.h).
// Input: the variable's value. Either a list of faults within the documented ranges, or
// nullopt with a one-line reason.
#include <cstdint>
#include <string>

#include "fault_spec.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ncclsim::FaultKind;
  std::string error;
  const auto faults = ncclsim::ParseFaultSpec(std::string(reinterpret_cast<const char*>(data), size), &error);
  if (!faults) {
    FUZZ_CHECK(error.rfind("NCCLSIM_FAULT: ", 0) == 0);
    return 0;
  }
  for (const ncclsim::Fault& f : *faults) {
    FUZZ_CHECK(f.rank >= -1 && f.comm_index >= -1 && f.ms >= 0);
    FUZZ_CHECK(f.at_init || f.seq >= 1);
    const uint64_t seq = f.at_init ? 0 : f.seq;
    FUZZ_CHECK(ncclsim::FindFault(*faults, f.kind, f.comm_index, f.rank, seq) != nullptr);
  }
  for (FaultKind kind : {FaultKind::kHang, FaultKind::kSlow, FaultKind::kError, FaultKind::kDie}) {
    ncclsim::FindFault(*faults, kind, 0, 0, 1);
  }
  return 0;
}
