// Options of `ncclwatch exporter` and the civetweb settings they become. Pure (no I/O), so
// that the server's limits are unit-tested.
#ifndef NCCLWATCH_TOOLS_EXPORTER_EXPORTER_OPTIONS_H_
#define NCCLWATCH_TOOLS_EXPORTER_EXPORTER_OPTIONS_H_

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace ncclwatch::tools {

// 9100-9999, the range Prometheus' "Default port allocations" wiki started with, is fully
// allocated (since 2023); the wiki now allocates upwards from 10000 (10019 in 2024, around
// 10050 in 2026). 10436 lies beyond every allocation seen; see tools/README.md "exporter".
inline constexpr int kDefaultPort = 10436;
inline constexpr const char* kDefaultListen = "0.0.0.0:10436";
// Each connection occupies one civetweb worker from accept until it is answered or times
// out (civetweb 1.15 has no event loop), so idle clients hold workers and a scrape queues
// behind them. 1000 idle connections must not stop a scrape within Prometheus' default 10 s
// scrape timeout: 256 workers dropping silent clients after 1 s clear 1000 of them in
// 1000/256 x 1 s = ~4 s (measured 3.0 s, tests/tools/exporter exporter_idle_connections; 64 workers:
// 15 s). Idle workers cost little: RSS 6.3 MiB with 64, 9.2 MiB with 256, 21 MiB with 1024.
inline constexpr int kDefaultThreads = 256;
inline constexpr int kDefaultRequestTimeoutMs = 1000;
// The oldest pending op is within the newest records unless more were issued after it: 256
// covers 256 ops in flight on one communicator (NCCL's own limit on outstanding ops per
// communicator is lower), at 16 KiB copied per communicator and scrape.
inline constexpr size_t kDefaultMaxRecords = 256;

struct ExporterOptions {
  std::string listen = kDefaultListen;
  std::string job;                // empty: every job
  std::string dump_dir;           // empty: no dump census
  double stall_sec = 60.0;        // for segments that do not publish their threshold
  int threads = kDefaultThreads;
  int request_timeout_ms = kDefaultRequestTimeoutMs;
  size_t max_records = kDefaultMaxRecords;
};

// ADDR:PORT with ADDR an IPv4 address, [IPv6] address, or empty (every interface), and PORT
// 1-65535; otherwise an error of one line, naming `option`.
Status ValidateListen(const std::string& listen, const std::string& option = "--listen");

// The civetweb options of the exporter's server: listening port, worker count, timeouts, no
// keep-alive (a scraper reconnects every interval anyway, and a kept-alive idle connection
// would hold a worker).
std::vector<std::string> CivetwebOptions(const ExporterOptions& options);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_EXPORTER_EXPORTER_OPTIONS_H_
