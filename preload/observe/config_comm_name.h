// ncclConfig_t.commName (NCCL 2.27+) read out of a caller's config at communicator creation,
// whatever nccl.h the caller was built against. torch (2.15) passes its process group's name
// there (group_name: "0" for the default group, whose description is "default_pg"); ncclwatch publishes the name next to the hash (CommSlotHeader::name).
#ifndef NCCLWATCH_PRELOAD_OBSERVE_CONFIG_COMM_NAME_H_
#define NCCLWATCH_PRELOAD_OBSERVE_CONFIG_COMM_NAME_H_

#include "core/shm/layout.h"

namespace ncclwatch::preload {

// The name in `config` (an ncclConfig_t*, or nullptr), at most shm::kCommNameBytes bytes of it;
// all zero when there is none: no config, a config whose magic is not NCCL's, one older than
// 2.27 (`version`) or too short to hold the field (`size`), or a NULL name. Never writes to
// the config and never faults: the config and the string are copied with process_vm_readv,
// which reports an unmapped address as EFAULT (a shorter copy) instead of a SIGSEGV. Init-time
// only: two system calls.
shm::PackedCommName CommNameOfConfig(const void* config) noexcept;

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_OBSERVE_CONFIG_COMM_NAME_H_
