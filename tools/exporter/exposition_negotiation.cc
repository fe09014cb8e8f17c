#include "tools/exporter/exposition_negotiation.h"

#include <cctype>
#include <charconv>
#include <string>
#include <vector>

#include "tools/exporter/openmetrics_serializer.h"

namespace ncclwatch::tools {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// One element of a comma-separated header list: "value;name=value;q=0.5".
struct Element {
  std::string value;    // lower case
  std::string version;  // the `version` parameter, unquoted; empty when absent
  double q = 1.0;       // 0 when the q parameter does not parse
};

std::vector<Element> ParseList(std::string_view header) {
  std::vector<Element> out;
  while (!header.empty()) {
    const size_t comma = header.find(',');
    std::string_view item = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    Element e;
    size_t semi = item.find(';');
    e.value = Lower(Trim(item.substr(0, semi)));
    while (semi != std::string_view::npos) {
      item = item.substr(semi + 1);
      semi = item.find(';');
      const std::string_view param = Trim(item.substr(0, semi));
      const size_t eq = param.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string name = Lower(Trim(param.substr(0, eq)));
      std::string_view value = Trim(param.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
      if (name == "q") {
        const auto parsed = std::from_chars(value.data(), value.data() + value.size(), e.q);
        if (parsed.ec != std::errc() || parsed.ptr != value.data() + value.size() || !(e.q >= 0 && e.q <= 1)) e.q = 0;
      } else if (name == "version") {
        e.version = std::string(value);
      }
    }
    if (!e.value.empty()) out.push_back(std::move(e));
  }
  return out;
}

// The format an Accept element asks for, if the exporter serves it.
bool FormatOf(const Element& e, ExpositionFormat* format) {
  if (e.value == "application/openmetrics-text" && (e.version.empty() || e.version == "1.0.0")) {
    *format = ExpositionFormat::kOpenMetrics100;
    return true;
  }
  if ((e.value == "text/plain" && (e.version.empty() || e.version == "0.0.4")) || e.value == "text/*" ||
      e.value == "*/*") {
    *format = ExpositionFormat::kText004;
    return true;
  }
  return false;
}

}  // namespace

ExpositionFormat NegotiateExpositionFormat(std::string_view accept) {
  ExpositionFormat best = ExpositionFormat::kText004;
  double best_q = 0;
  for (const Element& e : ParseList(accept)) {
    ExpositionFormat format;
    if (e.q > best_q && FormatOf(e, &format)) {
      best = format;
      best_q = e.q;
    }
  }
  return best;
}

bool AcceptsGzip(std::string_view accept_encoding) {
  // gzip as listed; "*" stands for it only when it is not listed ("gzip;q=0, *" refuses it).
  double gzip_q = -1, any_q = 0;
  for (const Element& e : ParseList(accept_encoding)) {
    if (e.value == "gzip") gzip_q = e.q;
    if (e.value == "*") any_q = e.q;
  }
  return (gzip_q >= 0 ? gzip_q : any_q) > 0;
}

const char* ContentTypeOf(ExpositionFormat format) {
  return format == ExpositionFormat::kOpenMetrics100 ? kOpenMetricsContentType : "text/plain; version=0.0.4; charset=utf-8";
}

const char* FormatLabelOf(ExpositionFormat format) {
  return format == ExpositionFormat::kOpenMetrics100 ? "openmetrics" : "text";
}

}  // namespace ncclwatch::tools
