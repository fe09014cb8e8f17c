#include "tools/exporter/metrics_endpoint.h"

#include <civetweb.h>

#include <optional>
#include <utility>

#include <prometheus/text_serializer.h>

#include "tools/exporter/gzip_compress.h"
#include "tools/exporter/openmetrics_serializer.h"

namespace ncclwatch::tools {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

std::string Serialize(ExpositionFormat format, const std::vector<MetricFamily>& families) {
  if (format == ExpositionFormat::kOpenMetrics100) return OpenMetricsSerializer().Serialize(families);
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace

std::vector<MetricFamily> MetricsEndpoint::CollectCounted(ExpositionFormat format) {
  (format == ExpositionFormat::kOpenMetrics100 ? openmetrics_scrapes_ : text_scrapes_)++;
  std::vector<MetricFamily> families = source_->Collect();
  MetricFamily scrapes;
  scrapes.name = "ncclwatch_exporter_scrapes_total";
  scrapes.help = "Scrapes answered, by the exposition format negotiated from the Accept header";
  scrapes.type = MetricType::Counter;
  for (auto f : {ExpositionFormat::kText004, ExpositionFormat::kOpenMetrics100}) {
    ClientMetric m;
    m.label = {{"format", FormatLabelOf(f)}};
    m.counter.value = static_cast<double>(f == ExpositionFormat::kOpenMetrics100 ? openmetrics_scrapes_.load()
                                                                                  : text_scrapes_.load());
    scrapes.metric.push_back(std::move(m));
  }
  families.push_back(std::move(scrapes));
  return families;
}

std::string MetricsEndpoint::Render(ExpositionFormat format) { return Serialize(format, CollectCounted(format)); }

bool MetricsEndpoint::handleGet(CivetServer* /*server*/, struct mg_connection* conn) {
  const char* accept = mg_get_header(conn, "Accept");
  const ExpositionFormat format = NegotiateExpositionFormat(accept != nullptr ? accept : "");
  const char* encoding = mg_get_header(conn, "Accept-Encoding");
  std::string body;
  bool gzipped = false;
  // Nothing may escape into civetweb's C code: out of memory answers 500. catch (...): this is
  // a callback from C (civetweb's worker thread), where any exception, of whatever type,
  // would terminate the exporter.
  try {
    body = Render(format);
    if (encoding != nullptr && AcceptsGzip(encoding)) {
      if (std::optional<std::string> compressed = GzipCompress(body)) {
        body = std::move(*compressed);
        gzipped = true;
      }
    }
  } catch (...) {
    mg_send_http_error(conn, 500, "%s", "collection failed");
    return true;
  }
  const std::string length = std::to_string(body.size());
  mg_response_header_start(conn, 200);
  mg_response_header_add(conn, "Content-Type", ContentTypeOf(format), -1);
  if (gzipped) mg_response_header_add(conn, "Content-Encoding", "gzip", -1);
  mg_response_header_add(conn, "Content-Length", length.c_str(), -1);
  mg_response_header_add(conn, "Vary", "Accept, Accept-Encoding", -1);
  mg_response_header_send(conn);
  mg_write(conn, body.data(), body.size());
  return true;
}

}  // namespace ncclwatch::tools
