// ncclwatch exporter [--listen ADDR:PORT] [--job ID] [--dump-dir DIR]
//
// A per-host process serving this host's segments at /metrics in the Prometheus text format
// or, when the scraper asks for it, OpenMetrics 1.0; civetweb is the HTTP server
// (tools/exporter/metrics_endpoint.h). Metric building is tools/exporter/metrics_families.h; this file reads the
// inputs, adds the exporter's own health and runs the server.
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <CivetServer.h>
#include <prometheus/collectable.h>

#include "core/format/escape.h"
#include "core/shm/process_info.h"
#include "core/shm/reader.h"
#include "tools/cli/cli_checks.h"
#include "tools/cli/commands.h"
#include "tools/exporter/dump_census.h"
#include "tools/cli/exit_status.h"
#include "tools/exporter/exporter_options.h"
#include "tools/exporter/metrics_endpoint.h"
#include "tools/exporter/metrics_families.h"

#ifndef NCCLWATCH_VERSION
#define NCCLWATCH_VERSION "unknown"
#endif

namespace ncclwatch::tools {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily OneValue(const char* name, const char* help, MetricType type, double value,
                      std::vector<ClientMetric::Label> labels = {}) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  ClientMetric m;
  m.label = std::move(labels);
  if (type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
  return f;
}

// Called by civetweb's worker threads, possibly several at once: one collection at a time
// (a scrape flood costs one reader, not one per connection), and a result younger than
// kReuseWithin is served again rather than recomputed.
class SegmentCollector : public prometheus::Collectable {
 public:
  explicit SegmentCollector(ExporterOptions options) : options_(std::move(options)) {
    if (!options_.dump_dir.empty()) census_.emplace(options_.dump_dir);
  }

  std::vector<MetricFamily> Collect() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto start = std::chrono::steady_clock::now();
    if (last_ && start - last_at_ < kReuseWithin) return *last_;
    std::vector<MetricFamily> out;
    // Nothing may escape into civetweb's C code: a failed collection serves only the health
    // families (and counts an error), never a partial or stale segment value.
    try {
      MetricsOutput built = BuildMetricFamilies(Gather());
      dropped_ += built.dropped;
      out = std::move(built.families);
    } catch (const std::exception&) {  // out of memory, prometheus-cpp's errors
      ++errors_;
      out.clear();
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.push_back(OneValue("ncclwatch_exporter_build_info", "ncclwatch version of this exporter (value 1)",
                           MetricType::Gauge, 1, {{"version", NCCLWATCH_VERSION}}));
    out.push_back(OneValue("ncclwatch_exporter_scrape_errors_total",
                           "Collections that failed (out of memory, unreadable input) and served no segment values",
                           MetricType::Counter, static_cast<double>(errors_)));
    out.push_back(OneValue("ncclwatch_exporter_dropped_series_total",
                           "Series left out because a segment's values were impossible (forged or torn) or ambiguous",
                           MetricType::Counter, static_cast<double>(dropped_)));
    out.push_back(OneValue("ncclwatch_exporter_collect_seconds", "Time the last collection took",
                           MetricType::Gauge, took));
    if (census_) {
      out.push_back(OneValue("ncclwatch_exporter_dump_dir_errors_total",
                             "Scans of --dump-dir that failed (the last good counts are served)", MetricType::Counter,
                             static_cast<double>(dump_dir_errors_)));
      out.push_back(OneValue("ncclwatch_exporter_dump_files_rejected",
                             "*.json files in --dump-dir that are not valid dumps", MetricType::Gauge,
                             static_cast<double>(census_->rejected_files())));
    }
    last_ = out;
    last_at_ = start;
    return out;
  }

 private:
  static constexpr std::chrono::milliseconds kReuseWithin{200};

  MetricsInput Gather() const {
    MetricsInput input;
    input.fallback_stall_sec = options_.stall_sec;
    // The checked reader accepts only segments of our own user (owner and mode 0600 checked
    // on the open fd): an exporter reads the jobs of the user it runs as, and nothing else.
    const std::vector<std::string> ids =
        options_.job.empty() ? shm::ListJobIds() : std::vector<std::string>{options_.job};
    for (const auto& id : ids) input.jobs.push_back(shm::ReadJobSnapshot(id, getuid(), options_.max_records));
    // After the reads: no record can look younger than the clock it is compared with.
    input.now_ns = shm::MonotonicNowNs();
    if (census_) {
      if (!census_->Scan().ok()) ++dump_dir_errors_;  // the last good counts are served
      input.dumps = census_->counts();
    }
    return input;
  }

  const ExporterOptions options_;
  mutable std::mutex mutex_;
  mutable std::optional<DumpCensus> census_;
  mutable std::optional<std::vector<MetricFamily>> last_;
  mutable std::chrono::steady_clock::time_point last_at_;
  mutable uint64_t errors_ = 0;
  mutable uint64_t dropped_ = 0;
  mutable uint64_t dump_dir_errors_ = 0;
};

int RunExporter(const ExporterOptions& options) {
  // SIGINT/SIGTERM are taken synchronously by sigwait below; blocked before the server starts
  // its threads, which inherit the mask, so no civetweb thread is interrupted by them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // A client that goes away mid-response must not kill the exporter.
  signal(SIGPIPE, SIG_IGN);
  // Collections run one at a time, on whichever civetweb worker took the request: with a
  // malloc arena per thread, each worker would keep its own high-water mark of a collection's
  // copies (measured: 568 MiB resident after 40 scrapes of 8 ranks x 256 communicators, vs
  // 87 MiB with two arenas; bench/runner/exporter_scrape.py).
  mallopt(M_ARENA_MAX, 2);
  MetricsEndpoint endpoint(std::make_shared<SegmentCollector>(options));
  std::unique_ptr<CivetServer> server;
  try {
    server = std::make_unique<CivetServer>(CivetwebOptions(options));
  } catch (const std::exception& e) {  // CivetException: the port is taken, the address not ours
    std::fprintf(stderr, "ncclwatch exporter: cannot listen on %s: %s\n",
                 format::EscapeForTerminal(options.listen).c_str(), format::EscapeForTerminal(e.what()).c_str());
    return kExitUsage;
  }
  server->addHandler("/metrics$", endpoint);  // civetweb matches prefixes; "$": this path only
  std::string ports;
  for (int port : server->getListeningPorts()) ports += (ports.empty() ? "" : ",") + std::to_string(port);
  std::fprintf(stderr, "ncclwatch exporter: serving /metrics on %s (port %s)\n",
               format::EscapeForTerminal(options.listen).c_str(), ports.c_str());
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  server.reset();  // stops civetweb, joining its threads, before the endpoint goes
  return kExitOk;
}

}  // namespace

void AddExporterCommand(CLI::App& app, int* exit_status) {
  auto options = std::make_shared<ExporterOptions>();
  CLI::App* cmd = app.add_subcommand("exporter", "Serve this host's live state at /metrics for Prometheus");
  cmd->add_option("--listen", options->listen,
                  "ADDR:PORT to listen on (default " + std::string(kDefaultListen) + "; 127.0.0.1:PORT: this host only)");
  cmd->add_option("--job", options->job, "Only this job id (default: every job of the user the exporter runs as)");
  cmd->add_option("--dump-dir", options->dump_dir,
                  "Count dumps and incidents in this directory (NCCLWATCH_DUMP_DIR of the jobs)");
  cmd->add_option("--stall-sec", options->stall_sec,
                  "Stall threshold served for a job whose segments do not publish theirs (default 60, as "
                  "NCCLWATCH_STALL_SEC)")
      ->check(Positive());
  cmd->add_option("--threads", options->threads,
                  "HTTP worker threads (default " + std::to_string(kDefaultThreads) +
                      "); each idle client holds one for at most --request-timeout-ms")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--request-timeout-ms", options->request_timeout_ms,
                  "Drop a client that has not sent its whole request in this time (default " +
                      std::to_string(kDefaultRequestTimeoutMs) + ")")
      ->check(CLI::Range(100, 600000));
  cmd->add_option("--max-records", options->max_records,
                  "Newest ring records read per communicator to find the oldest pending op (default " +
                      std::to_string(kDefaultMaxRecords) + ")")
      ->check(CLI::Range(1, 1 << 16));
  cmd->footer(
      "Serves the Prometheus text format (0.0.4) at /metrics, or OpenMetrics 1.0 to a scraper whose\n"
      "Accept header prefers it (Prometheus does); see tools/README.md \"exporter\" for the\n"
      "metrics, their labels and cardinality, and deploy/ for Prometheus rules, a Grafana dashboard,\n"
      "a systemd unit and Kubernetes manifests. It reads the segments of the user it runs as, only.\n"
      "Stops on SIGINT or SIGTERM.\n"
      "Exit status: 0 stopped by a signal; 2 bad usage or the address cannot be listened on.");
  cmd->callback([options, exit_status] {
    if (const Status listen = ValidateListen(options->listen); !listen.ok()) {
      std::fprintf(stderr, "ncclwatch exporter: %s (see --help)\n", listen.message().c_str());
      *exit_status = kExitUsage;
      return;
    }
    *exit_status = RunExporter(*options);
  });
}

}  // namespace ncclwatch::tools
