#include "comm_init.h"

#include <cuda_runtime_api.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>

#include "last_error.h"
#include "launch.h"

namespace ncclsim {
namespace {

std::atomic<int> g_comm_counter{0};

std::string DebugLine(const InitRequest& req, const Comm* c, const char* state) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %x%s commId 0x%llx - Init %s",
                req.api.c_str(), static_cast<const void*>(c), c->rank, c->nranks, c->device,
                c->device, (c->device + 1) * 0x1000, req.extra.c_str(),
                static_cast<unsigned long long>(c->hash), state);
  return buf;
}

void RunInit(Comm* c, const InitRequest& req) {
  if (DebugSubsysEnabled("INIT")) DebugInfo(c->device, DebugLine(req, c, "START"));
  std::string error;
  auto stop = [c] { return c->aborted.load(); };
  if (!c->segment->Attach(c->rank, stop, &error) || !c->segment->WaitAllAttached(stop)) {
    if (!error.empty()) {
      if (DebugWarnEnabled()) DebugWarn(c->device, req.api + ": " + error);
      SetLastError(req.api + ": " + error);
      c->init_state.store(ncclSystemError);
    } else {
      c->init_state.store(ncclInvalidUsage);  // aborted while waiting for peers
    }
    c->segment->Unlink();
    return;
  }
  for (int r = 0; r < c->nranks; ++r) c->hosts.push_back(c->segment->host(r));
  if (FindFault(c->faults, FaultKind::kDie, c->index, c->rank, FaultPoint{})) kill(getpid(), SIGKILL);
  if (FindFault(c->faults, FaultKind::kHang, c->index, c->rank, FaultPoint{})) {
    WaitFor(c, [] { return false; });
    c->init_state.store(ncclInvalidUsage);
    return;
  }
  if (DebugSubsysEnabled("INIT")) DebugInfo(c->device, DebugLine(req, c, "COMPLETE"));
  c->init_state.store(ncclSuccess);
}

bool ConfigBlocking(const ncclConfig_t* config) {
  return config == nullptr || config->blocking == NCCL_CONFIG_UNDEF_INT || config->blocking != 0;
}

// An aborted comm whose ops are still queued behind a stuck stream must not block Abort:
// the last of those ops frees it (launch.cc FinishOne). A nonblocking comm's worker may
// still hold it, so that one is stopped and kept until exit. True when handed off.
bool HandOffRelease(Comm* c) {
  std::lock_guard<std::mutex> lock(c->mu);
  if (c->inflight == 0 && c->pending_enqueue == 0) return false;
  if (c->worker.joinable()) {
    c->worker_stop = true;
    c->cv.notify_all();
  } else {
    c->release_when_idle = true;
  }
  return true;
}

}  // namespace

ncclResult_t StartCommInit(const InitRequest& req, ncclComm_t* out) {
  if (out == nullptr) {
    SetLastError(req.api + ": newcomm argument is NULL");
    return ncclInvalidArgument;
  }
  *out = nullptr;
  if (req.nranks < 1 || req.rank < 0 || req.rank >= req.nranks) {
    SetLastError(req.api + ": invalid rank " + std::to_string(req.rank) + "/" +
                 std::to_string(req.nranks));
    return ncclInvalidArgument;
  }
  if (req.config != nullptr && req.config->magic != 0xcafebeef) {
    SetLastError(req.api + ": ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER");
    return ncclInvalidArgument;
  }
  if (req.config != nullptr && req.config->blocking != NCCL_CONFIG_UNDEF_INT &&
      req.config->blocking != 0 && req.config->blocking != 1) {
    SetLastError(req.api + ": invalid config blocking attribute value");
    return ncclInvalidArgument;
  }
  std::string fault_error;
  const char* spec = std::getenv("NCCLSIM_FAULT");
  auto faults = ParseFaultSpec(spec ? spec : "", &fault_error);
  if (!faults) {
    std::fprintf(stderr, "%s\n", fault_error.c_str());
    SetLastError(fault_error);
    return ncclInvalidArgument;
  }
  auto* c = new Comm;
  c->rank = req.rank;
  c->nranks = req.nranks;
  c->hash = req.hash;
  c->blocking = ConfigBlocking(req.config);
  c->faults = std::move(*faults);
  c->index = g_comm_counter.fetch_add(1);
  MarkCommLive(c, c->index);
  cudaGetDevice(&c->device);
  c->segment = std::make_unique<ShmSegment>(req.hash, req.nranks);
  *out = c;
  if (!c->blocking || InGroup()) {
    c->init_thread = std::thread([c, req] { RunInit(c, req); });
    if (InGroup()) AddGroupInit(c);
    return c->blocking ? ncclSuccess : ncclInProgress;
  }
  RunInit(c, req);
  const ncclResult_t r = c->init_state.load();
  if (r != ncclSuccess) {
    *out = nullptr;
    ReleaseComm(c);
  }
  return r;
}

ncclResult_t NewUniqueId(ncclUniqueId* id, const char* api) {
  if (id == nullptr) {
    SetLastError(std::string(api) + ": uniqueId argument is NULL");
    return ncclInvalidArgument;
  }
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  ssize_t got = fd >= 0 ? read(fd, id->internal, sizeof id->internal) : -1;
  if (fd >= 0) close(fd);
  if (got != static_cast<ssize_t>(sizeof id->internal)) {
    SetLastError(std::string(api) + ": cannot read /dev/urandom");
    return ncclSystemError;
  }
  return ncclSuccess;
}

void ReleaseComm(Comm* c) {
  if (c->init_thread.joinable()) c->init_thread.join();
  if (c->aborted.load() && HandOffRelease(c)) return;
  WaitIdle(c);
  StopWorker(c);
  delete c;
}

}  // namespace ncclsim
