// OpenMetrics 1.0 text exposition of prometheus-cpp's collected MetricFamily values, which
// prometheus-cpp 1.0 (Debian 12) serializes only in the Prometheus text format 0.0.4.
//
// What differs from 0.0.4 (OpenMetrics 1.0, "Text format"):
//   - a counter's family is named without `_total`, its sample with it: `# TYPE foo counter`,
//     `foo_total 3`. A counter family must therefore be named `..._total` in prometheus-cpp
//     for both formats to name the same series; one that is not gets `_total` appended to its
//     sample, which the 0.0.4 text would not have.
//   - `# UNIT` after `# TYPE` when the family name ends in a base unit (`_seconds`, `_bytes`,
//     `_ratio`); `# HELP` last, omitted when empty. Only these three lines, and `# EOF` last.
//   - untyped is `unknown`; numbers are the shortest text that reads back as the same double
//     (`+Inf`, `-Inf`, `NaN`); `le` and `quantile` values are rendered canonically (Go's %g,
//     `.0` appended to integers: `0.5`, `1.0`, `1e+06`, `+Inf`); a histogram always has its
//     `+Inf` bucket, and its `_count` and `_sum`.
//   - timestamps are seconds (prometheus-cpp keeps milliseconds).
// Label values and help text are escaped as the ABNF says (backslash, double quote, newline);
// the caller supplies valid UTF-8 (the exporter's label values are, core/format/escape.h).
#ifndef NCCLWATCH_TOOLS_EXPORTER_OPENMETRICS_SERIALIZER_H_
#define NCCLWATCH_TOOLS_EXPORTER_OPENMETRICS_SERIALIZER_H_

#include <ostream>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>
#include <prometheus/serializer.h>

namespace ncclwatch::tools {

// The value of the Content-Type header of an OpenMetrics 1.0 text exposition.
inline constexpr const char* kOpenMetricsContentType = "application/openmetrics-text; version=1.0.0; charset=utf-8";

class OpenMetricsSerializer : public prometheus::Serializer {
 public:
  using Serializer::Serialize;
  void Serialize(std::ostream& out, const std::vector<prometheus::MetricFamily>& families) const override;
};

// `value` as OpenMetrics' canonical numbers for `le` and `quantile` label values: Go's
// shortest %g (exponent below -4 or from 6 on), ".0" appended when that has no '.' or 'e';
// "+Inf", "-Inf", "NaN". Exposed for the tests.
std::string CanonicalOpenMetricsNumber(double value);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_EXPORTER_OPENMETRICS_SERIALIZER_H_
