#include "tools/exporter/exporter_options.h"

#include <arpa/inet.h>

#include <string>

#include "core/format/escape.h"

namespace ncclwatch::tools {

Status ValidateListen(const std::string& listen, const std::string& option) {
  const size_t colon = listen.rfind(':');
  const std::string quoted = "'" + format::EscapeForTerminal(listen) + "'";
  if (colon == std::string::npos) return Status::Error(option + " " + quoted + ": expected ADDR:PORT, e.g. 0.0.0.0:10436");
  const std::string host = listen.substr(0, colon), port = listen.substr(colon + 1);
  // At most 5 digits, so the number fits an int (std::stoi cannot throw).
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) < 1 || std::stoi(port) > 65535) {
    return Status::Error(option + " " + quoted + ": the port must be a number from 1 to 65535");
  }
  unsigned char buf[16];
  const bool v6 = host.size() > 2 && host.front() == '[' && host.back() == ']' &&
                  inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), buf) == 1;
  if (!host.empty() && !v6 && inet_pton(AF_INET, host.c_str(), buf) != 1) {
    return Status::Error(option + " " + quoted + ": the address must be an IPv4 address, [IPv6] address, or empty");
  }
  return OkStatus();
}

std::vector<std::string> CivetwebOptions(const ExporterOptions& options) {
  const size_t colon = options.listen.rfind(':');
  const std::string host = options.listen.substr(0, colon), port = options.listen.substr(colon + 1);
  // civetweb: "PORT" is every IPv4 interface, "ADDR:PORT" one, "[ADDR]:PORT" IPv6 only,
  // "+PORT" IPv4 and IPv6.
  std::string ports = host.empty() ? "+" + port : host == "0.0.0.0" ? port : options.listen;
  return {"listening_ports", ports,
          "num_threads", std::to_string(options.threads),
          "request_timeout_ms", std::to_string(options.request_timeout_ms),
          "enable_keep_alive", "no",
          // Accepted connections wait here for a worker; beyond it they wait in the kernel's
          // backlog. Not a limit on clients: a bound on what one process holds.
          "connection_queue", "256",
          "listen_backlog", "1024"};  // no document_root: civetweb serves no files, only /metrics
}

}  // namespace ncclwatch::tools
