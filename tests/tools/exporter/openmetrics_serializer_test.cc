// tools/exporter/openmetrics_serializer.h: OpenMetrics 1.0 text from prometheus-cpp's metric families.
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <prometheus/text_serializer.h>

#include "tools/exporter/openmetrics_serializer.h"

namespace ncclwatch::tools {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily Family(const char* name, const char* help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

ClientMetric Value(MetricType type, double value, std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric m;
  m.label = std::move(labels);
  m.counter.value = m.gauge.value = m.untyped.value = type == MetricType::Counter || type == MetricType::Gauge ||
                                                              type == MetricType::Untyped
                                                          ? value
                                                          : 0;
  return m;
}

std::string OpenMetrics(const std::vector<MetricFamily>& families) { return OpenMetricsSerializer().Serialize(families); }

// The samples of an exposition without timestamps: (name{labels}, value), comments left out.
std::multiset<std::pair<std::string, double>> Samples(const std::string& text) {
  std::multiset<std::pair<std::string, double>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    out.emplace(line.substr(0, space), std::stod(line.substr(space + 1)));
  }
  return out;
}

}  // namespace

TEST_CASE("OpenMetrics: gauge, counter and unknown families, TYPE/UNIT/HELP in order, # EOF last") {
  MetricFamily pending = Family("ncclwatch_comm_oldest_pending_seconds", "Age of the oldest op", MetricType::Gauge);
  pending.metric.push_back(Value(MetricType::Gauge, 2.5, {{"comm", "0x1f"}, {"rank", "0"}}));
  pending.metric.push_back(Value(MetricType::Gauge, 0, {{"comm", "0x1f"}, {"rank", "1"}}));
  MetricFamily incidents = Family("ncclwatch_incidents_total", "Incidents dumped", MetricType::Counter);
  incidents.metric.push_back(Value(MetricType::Counter, 3, {{"kind", "straggler"}}));
  MetricFamily odd = Family("legacy_thing", "", MetricType::Untyped);
  odd.metric.push_back(Value(MetricType::Untyped, -7.25));
  CHECK(OpenMetrics({pending, incidents, odd}) ==
        "# TYPE ncclwatch_comm_oldest_pending_seconds gauge\n"
        "# UNIT ncclwatch_comm_oldest_pending_seconds seconds\n"
        "# HELP ncclwatch_comm_oldest_pending_seconds Age of the oldest op\n"
        "ncclwatch_comm_oldest_pending_seconds{comm=\"0x1f\",rank=\"0\"} 2.5\n"
        "ncclwatch_comm_oldest_pending_seconds{comm=\"0x1f\",rank=\"1\"} 0\n"
        "# TYPE ncclwatch_incidents counter\n"
        "# HELP ncclwatch_incidents Incidents dumped\n"
        "ncclwatch_incidents_total{kind=\"straggler\"} 3\n"
        "# TYPE legacy_thing unknown\n"
        "legacy_thing -7.25\n"
        "# EOF\n");
}

TEST_CASE("OpenMetrics: nothing to serve is still a complete exposition") {
  CHECK(OpenMetrics({}) == "# EOF\n");
  MetricFamily empty = Family("ncclwatch_dumps_total", "Dump files", MetricType::Counter);
  CHECK(OpenMetrics({empty}) == "# TYPE ncclwatch_dumps counter\n# HELP ncclwatch_dumps Dump files\n# EOF\n");
}

TEST_CASE("OpenMetrics: a counter's family drops _total and its unit shows; one without _total gains it") {
  MetricFamily cpu = Family("process_cpu_seconds_total", "CPU", MetricType::Counter);
  cpu.metric.push_back(Value(MetricType::Counter, 1.5));
  MetricFamily bare = Family("requests", "Requests", MetricType::Counter);
  bare.metric.push_back(Value(MetricType::Counter, 4));
  CHECK(OpenMetrics({cpu, bare}) ==
        "# TYPE process_cpu_seconds counter\n"
        "# UNIT process_cpu_seconds seconds\n"
        "# HELP process_cpu_seconds CPU\n"
        "process_cpu_seconds_total 1.5\n"
        "# TYPE requests counter\n"
        "# HELP requests Requests\n"
        "requests_total 4\n"
        "# EOF\n");
}

TEST_CASE("OpenMetrics: a unit only when it is the name's last word") {
  for (const char* name : {"seconds", "x_milliseconds", "bytes_read", "xbytes", "x_ratio_total"}) {
    MetricFamily f = Family(name, "", MetricType::Gauge);
    INFO(name);
    CHECK(OpenMetrics({f}).find("# UNIT") == std::string::npos);
  }
  MetricFamily bytes = Family("rss_bytes", "", MetricType::Gauge);
  CHECK(OpenMetrics({bytes}) == "# TYPE rss_bytes gauge\n# UNIT rss_bytes bytes\n# EOF\n");
}

TEST_CASE("OpenMetrics: label values and help escape backslash, double quote and newline, nothing else") {
  MetricFamily f = Family("x", "a \\ b \"c\"\nd\te é", MetricType::Gauge);
  f.metric.push_back(Value(MetricType::Gauge, 1, {{"host", "a\\b\"c\"\nd\te é"}}));
  CHECK(OpenMetrics({f}) ==
        "# TYPE x gauge\n"
        "# HELP x a \\\\ b \\\"c\\\"\\nd\te é\n"
        "x{host=\"a\\\\b\\\"c\\\"\\nd\te é\"} 1\n"
        "# EOF\n");
}

TEST_CASE("OpenMetrics: numbers read back exactly; NaN and infinities as the spec spells them") {
  MetricFamily f = Family("v", "", MetricType::Gauge);
  for (double v : {0.1, 1e21, 123456789.0, 1.0 / 3, -0.0, 5e-324, std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    f.metric.push_back(Value(MetricType::Gauge, v));
  }
  CHECK(OpenMetrics({f}) ==
        "# TYPE v gauge\n"
        "v 0.1\nv 1e+21\nv 123456789\nv 0.3333333333333333\nv -0\nv 5e-324\nv NaN\nv +Inf\nv -Inf\n"
        "# EOF\n");
}

TEST_CASE("OpenMetrics: le and quantile values are canonical numbers (the spec's examples)") {
  const std::vector<std::pair<double, const char*>> cases = {
      {0.0, "0.0"},       {0.001, "0.001"}, {0.002, "0.002"}, {0.01, "0.01"},       {0.1, "0.1"},
      {0.9, "0.9"},       {0.95, "0.95"},   {0.99, "0.99"},   {0.999, "0.999"},     {1.0, "1.0"},
      {1.7, "1.7"},       {10.0, "10.0"},   {1e-10, "1e-10"}, {1e-09, "1e-09"},     {1e-05, "1e-05"},
      {0.0001, "0.0001"}, {100000.0, "100000.0"},             {1e+06, "1e+06"},     {1e+10, "1e+10"},
      {1e+23, "1e+23"},   {1.1e+23, "1.1e+23"},               {std::numeric_limits<double>::infinity(), "+Inf"}};
  for (const auto& [value, text] : cases) {
    INFO(text);
    CHECK(CanonicalOpenMetricsNumber(value) == text);
  }
}

TEST_CASE("OpenMetrics: histograms and summaries in their sample names, +Inf bucket always present") {
  MetricFamily h = Family("scrape_seconds", "Scrape time", MetricType::Histogram);
  ClientMetric m;
  m.label = {{"job", "a"}};
  m.histogram.sample_count = 5;
  m.histogram.sample_sum = 1.25;
  m.histogram.bucket = {{2, 0.1}, {4, 1.0}};  // no +Inf bucket: one is added with the count
  h.metric.push_back(m);
  MetricFamily s = Family("rpc_seconds", "", MetricType::Summary);
  ClientMetric q;
  q.summary.sample_count = 3;
  q.summary.sample_sum = 0.75;
  q.summary.quantile = {{0.5, 0.2}, {0.99, 0.4}};
  q.timestamp_ms = 1520879607789;
  s.metric.push_back(q);
  CHECK(OpenMetrics({h, s}) ==
        "# TYPE scrape_seconds histogram\n"
        "# UNIT scrape_seconds seconds\n"
        "# HELP scrape_seconds Scrape time\n"
        "scrape_seconds_bucket{job=\"a\",le=\"0.1\"} 2\n"
        "scrape_seconds_bucket{job=\"a\",le=\"1.0\"} 4\n"
        "scrape_seconds_bucket{job=\"a\",le=\"+Inf\"} 5\n"
        "scrape_seconds_count{job=\"a\"} 5\n"
        "scrape_seconds_sum{job=\"a\"} 1.25\n"
        "# TYPE rpc_seconds summary\n"
        "# UNIT rpc_seconds seconds\n"
        "rpc_seconds{quantile=\"0.5\"} 0.2 1520879607.789\n"
        "rpc_seconds{quantile=\"0.99\"} 0.4 1520879607.789\n"
        "rpc_seconds_count 3 1520879607.789\n"
        "rpc_seconds_sum 0.75 1520879607.789\n"
        "# EOF\n");
}

TEST_CASE("OpenMetrics and the text format name the same series with the same values") {
  // Counters named _total, as every counter of the exporter is (metrics_families_test.cc).
  MetricFamily issued = Family("ncclwatch_comm_last_issued_seq", "Issued", MetricType::Gauge);
  issued.metric.push_back(Value(MetricType::Gauge, 41, {{"job", "j"}, {"rank", "0"}}));
  issued.metric.push_back(Value(MetricType::Gauge, 40, {{"job", "j"}, {"rank", "1"}}));
  MetricFamily dumps = Family("ncclwatch_dumps_total", "Dumps", MetricType::Counter);
  dumps.metric.push_back(Value(MetricType::Counter, 2, {{"job", "j"}, {"host", "h\"1"}}));
  const std::vector<MetricFamily> families = {issued, dumps};
  CHECK(Samples(OpenMetrics(families)) == Samples(prometheus::TextSerializer().Serialize(families)));
}

}  // namespace ncclwatch::tools
