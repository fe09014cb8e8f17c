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
    FUZZ_CHECK(f.replay == 0 || (!f.at_init && f.kind != FaultKind::kPartition));
    // The point the fault names: its seq, or its place in its replay.
    const ncclsim::FaultPoint at = f.replay != 0 ? ncclsim::FaultPoint{1000, f.replay, f.seq}
                                                 : ncclsim::FaultPoint{f.at_init ? 0 : f.seq, 0, 0};
    FUZZ_CHECK(ncclsim::FindFault(*faults, f.kind, f.comm_index, f.rank, at) != nullptr);
  }
  for (FaultKind kind : {FaultKind::kHang, FaultKind::kSlow, FaultKind::kError, FaultKind::kDie}) {
    ncclsim::FindFault(*faults, kind, 0, 0, ncclsim::FaultPoint{1, 1, 1});
  }
  return 0;
}
