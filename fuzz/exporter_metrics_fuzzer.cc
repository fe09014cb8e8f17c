// Fuzz target: `ncclwatch exporter`'s metrics (tools/exporter/metrics_families.h) over whatever the
// reader accepts from a forged segment, serialized as the exporter serves them. Seeds: those of
// shm_segment (a segment image, fuzz/shm_image.h).
//
// Built from the segment once, and from it and a copy claiming the same series. Checked: no
// series with completed > issued, none at all with the copy, no negative pending age, every
// label value printable (no byte below 0x20, no DEL), the text serializer never fails, and the
// OpenMetrics one ends with its only `# EOF` line (no label value can start a line of its own).
#include <cmath>
#include <cstdint>
#include <string>

#include <prometheus/text_serializer.h>

#include "core/clock/monotonic.h"
#include "core/shm/reader.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/shm_image.h"
#include "tools/exporter/openmetrics_serializer.h"
#include "tools/exporter/metrics_families.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ncclwatch;
  fuzz::WriteImage(data, size);
  auto view = shm::ReadSegment(fuzz::EntryName(), 64);
  if (!view) return 0;
  for (int copies : {1, 2}) {
    tools::MetricsInput input;
    shm::JobSnapshot job;
    job.job_id = view->job_id;
    for (int i = 0; i < copies; ++i) job.processes.push_back(*view);
    input.jobs.push_back(std::move(job));
    input.now_ns = clock::MonotonicNowNs();
    const tools::MetricsOutput out = tools::BuildMetricFamilies(input);
    const prometheus::MetricFamily* issued = nullptr;
    const prometheus::MetricFamily* completed = nullptr;
    for (const auto& f : out.families) {
      if (f.name == "ncclwatch_comm_last_issued_seq") issued = &f;
      if (f.name == "ncclwatch_comm_last_completed_seq") completed = &f;
      if (f.name == "ncclwatch_comm_oldest_pending_seconds") {
        for (const auto& m : f.metric) FUZZ_CHECK(std::isnan(m.gauge.value) || m.gauge.value >= 0);
      }
      for (const auto& m : f.metric) {
        for (const auto& l : m.label) {
          for (unsigned char c : l.value) FUZZ_CHECK(c >= 0x20 && c != 0x7f);
        }
      }
    }
    FUZZ_CHECK(issued && completed && issued->metric.size() == completed->metric.size());
    // A second copy makes every comm series ambiguous: none may be served.
    if (copies == 2) FUZZ_CHECK(issued->metric.empty());
    for (size_t i = 0; i < issued->metric.size(); ++i) {
      FUZZ_CHECK(completed->metric[i].gauge.value <= issued->metric[i].gauge.value);
    }
    const std::string text = prometheus::TextSerializer().Serialize(out.families);
    FUZZ_CHECK(!text.empty());
    const std::string open_metrics = tools::OpenMetricsSerializer().Serialize(out.families);
    FUZZ_CHECK(open_metrics.size() >= 6 && open_metrics.compare(open_metrics.size() - 6, 6, "# EOF\n") == 0);
    FUZZ_CHECK(open_metrics == "# EOF\n" || open_metrics.find("\n# EOF") == open_metrics.size() - 7);
  }
  return 0;
}
