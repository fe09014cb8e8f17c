// Lock-free reader of ncclwatch segments (their removal: segment_gc.h). Never blocks or disturbs the writers; a record
// being rewritten during the read is retried a few times and then left out.
#ifndef NCCLWATCH_CORE_SHM_READER_H_
#define NCCLWATCH_CORE_SHM_READER_H_

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/shm/snapshot.h"

namespace ncclwatch::shm {

// Reads one segment by its /dev/shm entry name, keeping at most the newest
// `max_records_per_comm` ring records of each communicator. nullopt when it is not (yet) a
// valid ncclwatch segment of this layout version.
std::optional<ProcessView> ReadSegment(const std::string& entry_name, size_t max_records_per_comm = SIZE_MAX);

// Every segment of `job_id` (sanitized) owned by `uid` on this host. A poller that needs only
// recent history passes a small `max_records_per_comm`: copying whole rings is most of a
// read's cost.
JobSnapshot ReadJobSnapshot(const std::string& job_id, uid_t uid = getuid(),
                            size_t max_records_per_comm = SIZE_MAX);

// Job ids that have at least one segment of `uid` on this host, sorted.
std::vector<std::string> ListJobIds(uid_t uid = getuid());

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_READER_H_
