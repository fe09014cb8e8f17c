#include "tools/cli/run_metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/format/escape.h"

namespace ncclwatch::tools {
namespace {

// Whether something accepts TCP connections at LISTEN (0.0.0.0 and the empty address are
// probed on the loopback). IPv6 addresses are probed as given.
bool SomethingListens(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  std::string host = listen.substr(0, colon);
  const int port = std::stoi(listen.substr(colon + 1));
  const bool v6 = !host.empty() && host.front() == '[';
  if (v6) host = host.substr(1, host.size() - 2);
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  const int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int rc = -1;
  if (v6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET6, host.c_str(), &a.sin6_addr) == 1) rc = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) == 1) rc = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  close(fd);
  return rc == 0;
}

}  // namespace

void StartExporterUnlessListening(const std::string& listen, const std::string& dump_dir) {
  const std::string shown = format::EscapeForTerminal(listen);
  if (SomethingListens(listen)) {
    std::fprintf(stderr, "ncclwatch run: %s already answers; not starting another exporter\n", shown.c_str());
    return;
  }
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "ncclwatch run: cannot start the exporter: %s; running without it\n", std::strerror(errno));
    return;
  }
  if (child > 0) return;
  // The exporter ends with the job: SIGTERM when the process that forked us (CMD, once
  // exec'd) ends. If it already ended before the request took effect, end now.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(0);
  std::string self = "/proc/self/exe";
  std::vector<char*> argv{const_cast<char*>("ncclwatch"), const_cast<char*>("exporter"),
                          const_cast<char*>("--listen"), const_cast<char*>(listen.c_str())};
  if (!dump_dir.empty()) {
    argv.push_back(const_cast<char*>("--dump-dir"));
    argv.push_back(const_cast<char*>(dump_dir.c_str()));
  }
  argv.push_back(nullptr);
  execv(self.c_str(), argv.data());
  std::fprintf(stderr, "ncclwatch run: cannot start the exporter: %s\n", std::strerror(errno));
  _exit(127);
}

}  // namespace ncclwatch::tools
