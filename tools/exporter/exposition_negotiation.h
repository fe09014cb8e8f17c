// HTTP content negotiation for the exporter's /metrics (RFC 9110 §12.5): which exposition
// format, and whether gzip, from a scraper's Accept and Accept-Encoding headers. Pure, so that
// what Prometheus and other scrapers send is unit-tested.
//
// Prometheus 2.42 (Debian 12) sends (captured)
//   Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,
//           text/plain;version=0.0.4;q=0.5,*/*;q=0.1
//   Accept-Encoding: gzip
// and gets OpenMetrics 1.0 with gzip; curl (Accept: */*) and a request without Accept get the
// text format 0.0.4, as does anything that names neither format acceptably (no 406: a scraper
// that cannot read it says so better than a refusal would).
#ifndef NCCLWATCH_TOOLS_EXPORTER_EXPOSITION_NEGOTIATION_H_
#define NCCLWATCH_TOOLS_EXPORTER_EXPOSITION_NEGOTIATION_H_

#include <string_view>

namespace ncclwatch::tools {

enum class ExpositionFormat {
  kText004,         // text/plain; version=0.0.4 (prometheus::TextSerializer)
  kOpenMetrics100,  // application/openmetrics-text; version=1.0.0 (tools/exporter/openmetrics_serializer.h)
};

// The format of highest q among those the exporter serves; among equal q, the first listed.
// OpenMetrics only for application/openmetrics-text without a version or with version=1.0.0
// (0.0.1 was a draft); text for text/plain (no version, or 0.0.4), text/*, */*, and by default.
ExpositionFormat NegotiateExpositionFormat(std::string_view accept);

// True when Accept-Encoding lists gzip with a q above 0, or, not listing gzip, "*" with one.
bool AcceptsGzip(std::string_view accept_encoding);

// The Content-Type header value of `format`.
const char* ContentTypeOf(ExpositionFormat format);

// The value of the `format` label of ncclwatch_exporter_scrapes_total: "text" or "openmetrics".
const char* FormatLabelOf(ExpositionFormat format);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_EXPORTER_EXPOSITION_NEGOTIATION_H_
