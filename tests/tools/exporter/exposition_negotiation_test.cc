// tools/exporter/exposition_negotiation.h: the format and encoding a scraper's headers ask for.
#include <catch2/catch.hpp>

#include "tools/exporter/exposition_negotiation.h"

namespace ncclwatch::tools {

constexpr auto kText = ExpositionFormat::kText004;
constexpr auto kOpenMetrics = ExpositionFormat::kOpenMetrics100;

TEST_CASE("Prometheus' Accept header gets OpenMetrics 1.0") {
  // Prometheus 2.42's scrape Accept header (captured from Debian's prometheus), and one in the
  // form later versions build from scrape_protocols (every format with a decreasing q).
  CHECK(NegotiateExpositionFormat("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                                  "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1") == kOpenMetrics);
  CHECK(NegotiateExpositionFormat("application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;"
                                  "version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2") == kOpenMetrics);
  // Prometheus asked for the text format first (scrape_protocols: [PrometheusText0.0.4, ...]).
  CHECK(NegotiateExpositionFormat("text/plain;version=0.0.4;q=0.5,application/openmetrics-text;version=1.0.0;"
                                  "q=0.4,*/*;q=0.1") == kText);
}

TEST_CASE("OpenMetrics only when asked for acceptably; text otherwise and by default") {
  CHECK(NegotiateExpositionFormat("") == kText);
  CHECK(NegotiateExpositionFormat("*/*") == kText);
  CHECK(NegotiateExpositionFormat("text/plain") == kText);
  CHECK(NegotiateExpositionFormat("application/json") == kText);
  CHECK(NegotiateExpositionFormat("application/openmetrics-text") == kOpenMetrics);
  CHECK(NegotiateExpositionFormat("Application/OpenMetrics-Text; Version=\"1.0.0\"; charset=utf-8") == kOpenMetrics);
  CHECK(NegotiateExpositionFormat("application/openmetrics-text; version=0.0.1") == kText);   // the draft
  CHECK(NegotiateExpositionFormat("application/openmetrics-text; version=2.0.0, */*;q=0.1") == kText);
  CHECK(NegotiateExpositionFormat("application/openmetrics-text;q=0") == kText);              // refused
  CHECK(NegotiateExpositionFormat("application/openmetrics-text;q=nonsense") == kText);
  CHECK(NegotiateExpositionFormat("application/openmetrics-text;q=1.5") == kText);
  CHECK(NegotiateExpositionFormat("text/plain;version=0.0.4;q=0.9, application/openmetrics-text") == kOpenMetrics);
  CHECK(NegotiateExpositionFormat("text/plain;version=0.0.5, application/openmetrics-text;q=0.1") == kOpenMetrics);
}

TEST_CASE("Among equal q the first listed wins") {
  CHECK(NegotiateExpositionFormat("application/openmetrics-text, text/plain") == kOpenMetrics);
  CHECK(NegotiateExpositionFormat("text/plain, application/openmetrics-text") == kText);
  CHECK(NegotiateExpositionFormat(" , ;;, application/openmetrics-text ;version=1.0.0 ,") == kOpenMetrics);
}

TEST_CASE("gzip when Accept-Encoding allows it") {
  CHECK(AcceptsGzip("gzip"));
  CHECK(AcceptsGzip("deflate, gzip;q=0.5"));
  CHECK(AcceptsGzip("GZIP"));
  CHECK(AcceptsGzip("*"));
  CHECK_FALSE(AcceptsGzip(""));
  CHECK_FALSE(AcceptsGzip("identity"));
  CHECK_FALSE(AcceptsGzip("gzip;q=0"));
  CHECK_FALSE(AcceptsGzip("gzip;q=0, *"));
  CHECK_FALSE(AcceptsGzip("br, deflate"));
}

TEST_CASE("Content types and format labels") {
  CHECK(std::string(ContentTypeOf(kOpenMetrics)) == "application/openmetrics-text; version=1.0.0; charset=utf-8");
  CHECK(std::string(ContentTypeOf(kText)) == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(std::string(FormatLabelOf(kOpenMetrics)) == "openmetrics");
  CHECK(std::string(FormatLabelOf(kText)) == "text");
}

}  // namespace ncclwatch::tools
