// tools/exporter/exporter_options.h: --listen validation and the civetweb limits.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tools/exporter/exporter_options.h"

namespace ncclwatch::tools {
namespace {

std::string Option(const std::vector<std::string>& options, const std::string& name) {
  for (size_t i = 0; i + 1 < options.size(); i += 2) {
    if (options[i] == name) return options[i + 1];
  }
  return "<absent>";
}

}  // namespace

TEST_CASE("--listen accepts ADDR:PORT and refuses the rest with one line") {
  CHECK(ValidateListen("0.0.0.0:10436").ok());
  CHECK(ValidateListen("127.0.0.1:1").ok());
  CHECK(ValidateListen(":10436").ok());
  CHECK(ValidateListen("[::1]:10436").ok());
  for (const char* bad : {"10436", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:99999999",
                          "localhost:80", "1.2.3:4", "[::1:80", "127.0.0.1:8x", "1.2.3.4:-1"}) {
    INFO(bad);
    const Status error = ValidateListen(bad);
    CHECK_FALSE(error.ok());
    CHECK(error.message().find('\n') == std::string::npos);
    CHECK(error.message().rfind("--listen", 0) == 0);
  }
}

TEST_CASE("civetweb runs with bounded workers, a request timeout and no keep-alive") {
  ExporterOptions o;
  std::vector<std::string> civet = CivetwebOptions(o);
  CHECK(Option(civet, "listening_ports") == "10436");
  CHECK(Option(civet, "num_threads") == std::to_string(kDefaultThreads));
  CHECK(Option(civet, "request_timeout_ms") == std::to_string(kDefaultRequestTimeoutMs));
  CHECK(Option(civet, "enable_keep_alive") == "no");
  CHECK(Option(civet, "document_root") == "<absent>");
  o.listen = "127.0.0.1:9";
  CHECK(Option(CivetwebOptions(o), "listening_ports") == "127.0.0.1:9");
  o.listen = ":9";
  CHECK(Option(CivetwebOptions(o), "listening_ports") == "+9");
}

}  // namespace ncclwatch::tools
