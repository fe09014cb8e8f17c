// The exporter's /metrics handler on civetweb (Debian libcivetweb-dev, the HTTP server
// prometheus-cpp's Exposer embeds; civetweb parses the requests and writes the responses):
// collects from a prometheus::Collectable, serializes in the format the scraper negotiated
// (text 0.0.4 or OpenMetrics 1.0, tools/exporter/exposition_negotiation.h), gzips when asked.
//
// It replaces prometheus::Exposer, whose handler serves only the text format whatever the
// scraper accepts. Adds ncclwatch_exporter_scrapes_total{format}: how many scrapes were
// answered in each format, this one included.
#ifndef NCCLWATCH_TOOLS_EXPORTER_METRICS_ENDPOINT_H_
#define NCCLWATCH_TOOLS_EXPORTER_METRICS_ENDPOINT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CivetServer.h>
#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "tools/exporter/exposition_negotiation.h"

namespace ncclwatch::tools {

class MetricsEndpoint : public CivetHandler {
 public:
  explicit MetricsEndpoint(std::shared_ptr<prometheus::Collectable> source) : source_(std::move(source)) {}

  // Runs on civetweb's worker threads, several at once; nothing it calls may throw past it.
  bool handleGet(CivetServer* server, struct mg_connection* conn) override;

  // The response body of a scrape in `format` (before any gzip), counted as a scrape.
  std::string Render(ExpositionFormat format);

 private:
  std::vector<prometheus::MetricFamily> CollectCounted(ExpositionFormat format);

  const std::shared_ptr<prometheus::Collectable> source_;
  std::atomic<uint64_t> text_scrapes_{0};
  std::atomic<uint64_t> openmetrics_scrapes_{0};
};

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_EXPORTER_METRICS_ENDPOINT_H_
