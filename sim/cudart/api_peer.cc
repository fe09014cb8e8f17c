// Peer access and PCI identity. All simulated devices share host memory, so every distinct
// pair can reach each other; enabling access is bookkeeping that yields CUDA's error codes.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <mutex>
#include <set>
#include <utility>

#include "api_common.h"

namespace ncclsim {
namespace {

std::mutex peers_mu;
// (device, peer) pairs with access enabled from `device`'s context.
std::set<std::pair<int, int>>& EnabledPeers() {
  static auto* enabled = new std::set<std::pair<int, int>>();
  return *enabled;
}

cudaError_t CanAccessPeer(int* can, int device, int peer) {
  if (cudaError_t e = CheckDevice(device); e != cudaSuccess) return e;
  if (cudaError_t e = CheckDevice(peer); e != cudaSuccess) return e;
  if (can == nullptr) return cudaErrorInvalidValue;
  *can = device != peer ? 1 : 0;
  return cudaSuccess;
}

cudaError_t EnablePeerAccess(int peer, unsigned flags) {
  const int device = Runtime::current_device();
  if (cudaError_t e = CheckDevice(device); e != cudaSuccess) return e;
  if (cudaError_t e = CheckDevice(peer); e != cudaSuccess) return e;
  if (flags != 0) return cudaErrorInvalidValue;
  if (peer == device) return cudaErrorInvalidDevice;
  std::lock_guard<std::mutex> lock(peers_mu);
  return EnabledPeers().insert({device, peer}).second ? cudaSuccess : cudaErrorPeerAccessAlreadyEnabled;
}

cudaError_t DisablePeerAccess(int peer) {
  const int device = Runtime::current_device();
  if (cudaError_t e = CheckDevice(device); e != cudaSuccess) return e;
  if (cudaError_t e = CheckDevice(peer); e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(peers_mu);
  return EnabledPeers().erase({device, peer}) == 1 ? cudaSuccess : cudaErrorPeerAccessNotEnabled;
}

// Device <i> sits on PCI bus <i> of domain 0 (cudaDevAttrPciBusId).
cudaError_t PciBusId(char* id, int length, int device) {
  if (cudaError_t e = CheckDevice(device); e != cudaSuccess) return e;
  if (id == nullptr || length <= 0) return cudaErrorInvalidValue;
  std::snprintf(id, static_cast<size_t>(length), "0000:%02x:00.0", device);
  return cudaSuccess;
}

}  // namespace
}  // namespace ncclsim

using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  return Report(ncclsim::CanAccessPeer(can, device, peer));
}
NCCLSIM_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
  return Report(ncclsim::EnablePeerAccess(peer, flags));
}
NCCLSIM_EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peer) { return Report(ncclsim::DisablePeerAccess(peer)); }
NCCLSIM_EXPORT cudaError_t cudaDeviceGetPCIBusId(char* id, int length, int device) {
  return Report(ncclsim::PciBusId(id, length, device));
}
