#include "bootstrap.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace examples {
namespace {

bool ParseInt(const char* text, int* out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 0 || v > (1 << 30)) return false;
  *out = static_cast<int>(v);
  return true;
}

bool ReadIntVar(const char* name, int* out, std::string* error) {
  const char* text = std::getenv(name);
  if (text == nullptr) return true;
  if (ParseInt(text, out)) return true;
  *error = std::string(name) + " is not a non-negative integer: '" + text + "'";
  return false;
}

bool ResolveAddress(const JobEnv& env, sockaddr_in* addr, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(env.master_addr.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    *error = "cannot resolve MASTER_ADDR '" + env.master_addr + "': " + gai_strerror(rc);
    return false;
  }
  *addr = *reinterpret_cast<sockaddr_in*>(res->ai_addr);
  addr->sin_port = htons(static_cast<uint16_t>(env.master_port));
  freeaddrinfo(res);
  return true;
}

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ServeId(const JobEnv& env, const sockaddr_in& addr, const ncclUniqueId& id, std::string* error) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 64) != 0) {
    *error = std::string("cannot listen on MASTER_ADDR:MASTER_PORT: ") + std::strerror(errno);
    close(fd);
    return false;
  }
  bool ok = true;
  for (int served = 1; served < env.world_size && ok; ++served) {
    int peer = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (peer < 0) {
      if (errno == EINTR) { --served; continue; }
      *error = std::string("accept failed: ") + std::strerror(errno);
      ok = false;
      break;
    }
    ok = WriteAll(peer, &id, sizeof(id));
    if (!ok) *error = "sending the unique id failed";
    close(peer);
  }
  close(fd);
  return ok;
}

bool FetchId(const sockaddr_in& addr, ncclUniqueId* id, int timeout_sec, std::string* error) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_sec);
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
      bool ok = ReadAll(fd, id, sizeof(*id));
      close(fd);
      if (ok) return true;
    } else {
      close(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *error = "timed out fetching the unique id from rank 0 at MASTER_ADDR:MASTER_PORT";
  return false;
}

}  // namespace

bool ReadJobEnv(JobEnv* env, std::string* error) {
  if (!ReadIntVar("RANK", &env->rank, error) || !ReadIntVar("LOCAL_RANK", &env->local_rank, error) ||
      !ReadIntVar("WORLD_SIZE", &env->world_size, error) ||
      !ReadIntVar("MASTER_PORT", &env->master_port, error)) {
    return false;
  }
  if (const char* addr = std::getenv("MASTER_ADDR")) env->master_addr = addr;
  if (env->world_size < 1 || env->rank >= env->world_size) {
    *error = "RANK must be below WORLD_SIZE";
    return false;
  }
  if (env->world_size > 1 && env->master_port == 0) {
    *error = "MASTER_PORT must be set when WORLD_SIZE > 1";
    return false;
  }
  return true;
}

bool ExchangeUniqueId(const JobEnv& env, ncclUniqueId* id, int timeout_sec, std::string* error) {
  if (env.rank == 0) {
    ncclResult_t rc = ncclGetUniqueId(id);
    if (rc != ncclSuccess) {
      *error = std::string("ncclGetUniqueId failed: ") + ncclGetErrorString(rc);
      return false;
    }
  }
  if (env.world_size == 1) return true;
  sockaddr_in addr{};
  if (!ResolveAddress(env, &addr, error)) return false;
  return env.rank == 0 ? ServeId(env, addr, *id, error) : FetchId(addr, id, timeout_sec, error);
}

}  // namespace examples
