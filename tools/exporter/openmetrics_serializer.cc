#include "tools/exporter/openmetrics_serializer.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace ncclwatch::tools {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr std::string_view kTotal = "_total";

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// The base units OpenMetrics names ("Units and Base Units") that this project's names use.
std::string_view UnitOf(std::string_view family_name) {
  for (std::string_view unit : {"seconds", "bytes", "ratio"}) {
    if (family_name.size() > unit.size() + 1 && EndsWith(family_name, unit) &&
        family_name[family_name.size() - unit.size() - 1] == '_') {
      return unit;
    }
  }
  return {};
}

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::Counter: return "counter";
    case MetricType::Gauge: return "gauge";
    case MetricType::Summary: return "summary";
    case MetricType::Histogram: return "histogram";
    case MetricType::Untyped: break;
  }
  return "unknown";
}

// Backslash, double quote and line feed escaped: the ABNF's escaped-string, for label values
// and help text alike.
void WriteEscaped(std::ostream& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '\\': out << "\\\\"; break;
      case '"': out << "\\\""; break;
      case '\n': out << "\\n"; break;
      default: out << c;
    }
  }
}

bool NonFinite(std::ostream& out, double value) {
  if (std::isnan(value)) {
    out << "NaN";
  } else if (std::isinf(value)) {
    out << (value > 0 ? "+Inf" : "-Inf");
  } else {
    return false;
  }
  return true;
}

// The shortest text that reads back as `value` (std::to_chars picks fixed or exponent, which
// both fit the ABNF's realnumber).
void WriteNumber(std::ostream& out, double value) {
  if (NonFinite(out, value)) return;
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out.write(buf, result.ptr - buf);
}

void WriteLabels(std::ostream& out, const std::vector<ClientMetric::Label>& labels, const char* extra_name = nullptr,
                 const std::string& extra_value = {}) {
  if (labels.empty() && extra_name == nullptr) return;
  out << '{';
  bool first = true;
  for (const auto& label : labels) {
    out << (first ? "" : ",") << label.name << "=\"";
    WriteEscaped(out, label.value);
    out << '"';
    first = false;
  }
  if (extra_name != nullptr) out << (first ? "" : ",") << extra_name << "=\"" << extra_value << '"';
  out << '}';
}

// prometheus-cpp keeps milliseconds since the epoch; OpenMetrics wants seconds, written
// exactly (no float rounding of the milliseconds).
void WriteTimestamp(std::ostream& out, int64_t timestamp_ms) {
  if (timestamp_ms == 0) return;
  const int64_t ms = std::llabs(timestamp_ms % 1000);
  const int64_t s = timestamp_ms / 1000;
  out << ' ' << (timestamp_ms < 0 && s == 0 ? "-" : "") << s << '.' << static_cast<char>('0' + ms / 100)
      << static_cast<char>('0' + ms / 10 % 10) << static_cast<char>('0' + ms % 10);
}

void WriteSample(std::ostream& out, std::string_view name, std::string_view suffix, const ClientMetric& metric,
                 double value, const char* extra_name = nullptr, const std::string& extra_value = {}) {
  out << name << suffix;
  WriteLabels(out, metric.label, extra_name, extra_value);
  out << ' ';
  WriteNumber(out, value);
  WriteTimestamp(out, metric.timestamp_ms);
  out << '\n';
}

void WriteHistogram(std::ostream& out, std::string_view name, const ClientMetric& metric) {
  const auto& h = metric.histogram;
  bool has_inf = false;
  for (const auto& bucket : h.bucket) {
    has_inf = has_inf || std::isinf(bucket.upper_bound);
    WriteSample(out, name, "_bucket", metric, static_cast<double>(bucket.cumulative_count), "le",
                CanonicalOpenMetricsNumber(bucket.upper_bound));
  }
  // OpenMetrics requires the +Inf bucket; prometheus-cpp's own histograms end with it.
  if (!has_inf) {
    WriteSample(out, name, "_bucket", metric, static_cast<double>(h.sample_count), "le", "+Inf");
  }
  WriteSample(out, name, "_count", metric, static_cast<double>(h.sample_count));
  WriteSample(out, name, "_sum", metric, h.sample_sum);
}

void WriteSummary(std::ostream& out, std::string_view name, const ClientMetric& metric) {
  const auto& s = metric.summary;
  for (const auto& q : s.quantile) {
    WriteSample(out, name, "", metric, q.value, "quantile", CanonicalOpenMetricsNumber(q.quantile));
  }
  WriteSample(out, name, "_count", metric, static_cast<double>(s.sample_count));
  WriteSample(out, name, "_sum", metric, s.sample_sum);
}

void WriteFamily(std::ostream& out, const MetricFamily& family) {
  // A counter's family name has no _total; its sample has.
  std::string_view name = family.name;
  if (family.type == MetricType::Counter && EndsWith(name, kTotal)) name.remove_suffix(kTotal.size());
  out << "# TYPE " << name << ' ' << TypeName(family.type) << '\n';
  if (const std::string_view unit = UnitOf(name); !unit.empty()) out << "# UNIT " << name << ' ' << unit << '\n';
  if (!family.help.empty()) {
    out << "# HELP " << name << ' ';
    WriteEscaped(out, family.help);
    out << '\n';
  }
  for (const auto& metric : family.metric) {
    switch (family.type) {
      case MetricType::Counter: WriteSample(out, name, kTotal, metric, metric.counter.value); break;
      case MetricType::Gauge: WriteSample(out, name, "", metric, metric.gauge.value); break;
      case MetricType::Untyped: WriteSample(out, name, "", metric, metric.untyped.value); break;
      case MetricType::Histogram: WriteHistogram(out, name, metric); break;
      case MetricType::Summary: WriteSummary(out, name, metric); break;
    }
  }
}

}  // namespace

std::string CanonicalOpenMetricsNumber(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  // The shortest digits in exponent form tell the decimal exponent, which picks the form as
  // Go's %g does for its shortest rendering.
  const auto sci = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  const std::string_view sci_text(buf, sci.ptr - buf);
  std::string_view exponent_text = sci_text.substr(sci_text.find('e') + 1);  // "+06", "-05"
  const bool negative = exponent_text.front() == '-';
  int exponent = 0;
  std::from_chars(exponent_text.data() + 1, exponent_text.data() + exponent_text.size(), exponent);
  if (negative) exponent = -exponent;
  if (exponent < -4 || exponent >= 6) return std::string(sci_text);
  const auto fixed = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed);
  std::string text(buf, fixed.ptr - buf);
  if (text.find('.') == std::string::npos) text += ".0";
  return text;
}

void OpenMetricsSerializer::Serialize(std::ostream& out, const std::vector<MetricFamily>& families) const {
  for (const auto& family : families) WriteFamily(out, family);
  out << "# EOF\n";
}

}  // namespace ncclwatch::tools
