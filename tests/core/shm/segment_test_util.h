// Helpers shared by the segment tests: a writer for this process in a job of its own,
// unlinked when the test ends even if it fails.
#ifndef NCCLWATCH_TESTS_CORE_SHM_SEGMENT_TEST_UTIL_H_
#define NCCLWATCH_TESTS_CORE_SHM_SEGMENT_TEST_UTIL_H_

#include <unistd.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "core/shm/process_info.h"
#include "core/shm/segment_writer.h"

namespace ncclwatch::shm::testing {

inline std::string UniqueJobId(const std::string& tag) {
  return "test-" + tag + "-" + std::to_string(getpid());
}

inline SegmentOptions OptionsForThisProcess(const std::string& job, uint32_t ring_capacity) {
  SegmentOptions options;
  options.uid = getuid();
  options.job_id = job;
  options.pid = getpid();
  options.process_start_ticks = ProcessStartTicks(getpid());
  options.host = HostName();
  options.rank.global_rank = 3;
  options.rank.world_size = 4;
  options.rank.source = RankSource::kTorchrun;
  options.ring_capacity = ring_capacity;
  return options;
}

class ScopedSegment {
 public:
  ScopedSegment(const std::string& job, uint32_t ring_capacity) {
    Result<std::unique_ptr<SegmentWriter>> created = SegmentWriter::Create(OptionsForThisProcess(job, ring_capacity));
    if (!created.ok()) throw std::runtime_error(created.error().message());
    writer_ = std::move(created).value();
  }
  ~ScopedSegment() { writer_->CloseAndUnlink(); }
  SegmentWriter& operator*() { return *writer_; }
  SegmentWriter* operator->() { return writer_.get(); }

 private:
  std::unique_ptr<SegmentWriter> writer_;
};

}  // namespace ncclwatch::shm::testing

#endif  // NCCLWATCH_TESTS_CORE_SHM_SEGMENT_TEST_UTIL_H_
