#include "device_profile.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime.h"

namespace ncclsim {
namespace {

constexpr size_t kGiB = size_t{1} << 30;
constexpr int kKiB = 1 << 10;
constexpr int kMiB = 1 << 20;

// H100 SXM5 80GB and A100 SXM4 80GB, as deviceQuery reports them.
constexpr DeviceProfile kProfiles[] = {
    {"h100", "H100 SXM 80GB", 9, 0, 132, 80 * kGiB, 1980000, 2619000, 5120, 50 * kMiB, 30 * kMiB, 48 * kKiB,
     227 * kKiB, 228 * kKiB, 1 * kKiB, 65536, 65536, 1024, 2048, 32, 32, 3, 1, 4, 0x233010de, 0x16c110de},
    {"a100", "A100 SXM4 80GB", 8, 0, 108, 80 * kGiB, 1410000, 1593000, 5120, 40 * kMiB, 30 * kMiB, 48 * kKiB,
     163 * kKiB, 164 * kKiB, 1 * kKiB, 65536, 65536, 1024, 2048, 32, 32, 3, 0, 1, 0x20b210de, 0x147f10de},
};

const DeviceProfile& ProfileFromEnvironment() {
  const char* key = std::getenv("NCCLSIM_DEVICE_PROFILE");
  if (key == nullptr || *key == '\0') return kProfiles[0];
  for (const DeviceProfile& p : kProfiles) {
    if (std::strcmp(p.key, key) == 0) return p;
  }
  std::fprintf(stderr, "ncclsim cudart: unknown NCCLSIM_DEVICE_PROFILE '%s' (known: h100, a100); using h100\n",
               key);
  return kProfiles[0];
}

struct AttributeTable {
  std::array<int, cudaDevAttrMax> value{};
  std::array<bool, cudaDevAttrMax> known{};
};

struct Entry {
  cudaDeviceAttr attribute;
  int value;
};

// Texture and surface limits are those of every GPU since compute capability 7.0.
AttributeTable BuildTable(const DeviceProfile& p) {
  const Entry entries[] = {
      {cudaDevAttrMaxThreadsPerBlock, p.threads_per_block},
      {cudaDevAttrMaxBlockDimX, p.threads_per_block},
      {cudaDevAttrMaxBlockDimY, p.threads_per_block},
      {cudaDevAttrMaxBlockDimZ, 64},
      {cudaDevAttrMaxGridDimX, 0x7fffffff},
      {cudaDevAttrMaxGridDimY, 65535},
      {cudaDevAttrMaxGridDimZ, 65535},
      {cudaDevAttrMaxSharedMemoryPerBlock, p.shared_per_block},
      {cudaDevAttrTotalConstantMemory, 64 * kKiB},
      {cudaDevAttrWarpSize, p.warp_size},
      {cudaDevAttrMaxPitch, 0x7fffffff},
      {cudaDevAttrMaxRegistersPerBlock, p.registers_per_block},
      {cudaDevAttrClockRate, p.clock_khz},
      {cudaDevAttrTextureAlignment, 512},
      {cudaDevAttrGpuOverlap, 1},
      {cudaDevAttrMultiProcessorCount, p.multiprocessors},
      {cudaDevAttrKernelExecTimeout, 0},
      {cudaDevAttrIntegrated, 0},
      {cudaDevAttrCanMapHostMemory, 1},
      {cudaDevAttrComputeMode, cudaComputeModeDefault},
      {cudaDevAttrMaxTexture1DWidth, 131072},
      {cudaDevAttrMaxTexture2DWidth, 131072},
      {cudaDevAttrMaxTexture2DHeight, 65536},
      {cudaDevAttrMaxTexture3DWidth, 16384},
      {cudaDevAttrMaxTexture3DHeight, 16384},
      {cudaDevAttrMaxTexture3DDepth, 16384},
      {cudaDevAttrMaxTexture2DLayeredWidth, 32768},
      {cudaDevAttrMaxTexture2DLayeredHeight, 32768},
      {cudaDevAttrMaxTexture2DLayeredLayers, 2048},
      {cudaDevAttrSurfaceAlignment, 512},
      {cudaDevAttrConcurrentKernels, 1},
      {cudaDevAttrEccEnabled, 1},
      {cudaDevAttrPciBusId, 0},  // per device, see PerDeviceValue
      {cudaDevAttrPciDeviceId, 0},
      {cudaDevAttrTccDriver, 0},
      {cudaDevAttrMemoryClockRate, p.memory_clock_khz},
      {cudaDevAttrGlobalMemoryBusWidth, p.memory_bus_bits},
      {cudaDevAttrL2CacheSize, p.l2_cache_bytes},
      {cudaDevAttrMaxThreadsPerMultiProcessor, p.threads_per_multiprocessor},
      {cudaDevAttrAsyncEngineCount, p.async_engines},
      {cudaDevAttrUnifiedAddressing, 1},
      {cudaDevAttrMaxTexture1DLayeredWidth, 32768},
      {cudaDevAttrMaxTexture1DLayeredLayers, 2048},
      {cudaDevAttrMaxTexture2DGatherWidth, 32768},
      {cudaDevAttrMaxTexture2DGatherHeight, 32768},
      {cudaDevAttrMaxTexture3DWidthAlt, 8192},
      {cudaDevAttrMaxTexture3DHeightAlt, 8192},
      {cudaDevAttrMaxTexture3DDepthAlt, 32768},
      {cudaDevAttrPciDomainId, 0},
      {cudaDevAttrTexturePitchAlignment, 32},
      {cudaDevAttrMaxTextureCubemapWidth, 32768},
      {cudaDevAttrMaxTextureCubemapLayeredWidth, 32768},
      {cudaDevAttrMaxTextureCubemapLayeredLayers, 2046},
      {cudaDevAttrMaxSurface1DWidth, 32768},
      {cudaDevAttrMaxSurface2DWidth, 131072},
      {cudaDevAttrMaxSurface2DHeight, 65536},
      {cudaDevAttrMaxSurface3DWidth, 16384},
      {cudaDevAttrMaxSurface3DHeight, 16384},
      {cudaDevAttrMaxSurface3DDepth, 16384},
      {cudaDevAttrMaxSurface1DLayeredWidth, 32768},
      {cudaDevAttrMaxSurface1DLayeredLayers, 2048},
      {cudaDevAttrMaxSurface2DLayeredWidth, 32768},
      {cudaDevAttrMaxSurface2DLayeredHeight, 32768},
      {cudaDevAttrMaxSurface2DLayeredLayers, 2048},
      {cudaDevAttrMaxSurfaceCubemapWidth, 32768},
      {cudaDevAttrMaxSurfaceCubemapLayeredWidth, 32768},
      {cudaDevAttrMaxSurfaceCubemapLayeredLayers, 2046},
      {cudaDevAttrMaxTexture1DLinearWidth, 268435456},
      {cudaDevAttrMaxTexture2DLinearWidth, 131072},
      {cudaDevAttrMaxTexture2DLinearHeight, 65000},
      {cudaDevAttrMaxTexture2DLinearPitch, 2097120},
      {cudaDevAttrMaxTexture2DMipmappedWidth, 32768},
      {cudaDevAttrMaxTexture2DMipmappedHeight, 32768},
      {cudaDevAttrComputeCapabilityMajor, p.compute_major},
      {cudaDevAttrComputeCapabilityMinor, p.compute_minor},
      {cudaDevAttrMaxTexture1DMipmappedWidth, 32768},
      {cudaDevAttrStreamPrioritiesSupported, 1},
      {cudaDevAttrGlobalL1CacheSupported, 1},
      {cudaDevAttrLocalL1CacheSupported, 1},
      {cudaDevAttrMaxSharedMemoryPerMultiprocessor, p.shared_per_multiprocessor},
      {cudaDevAttrMaxRegistersPerMultiprocessor, p.registers_per_multiprocessor},
      {cudaDevAttrManagedMemory, 1},
      {cudaDevAttrIsMultiGpuBoard, 0},
      {cudaDevAttrMultiGpuBoardGroupID, 0},  // per device
      {cudaDevAttrHostNativeAtomicSupported, 0},
      {cudaDevAttrSingleToDoublePrecisionPerfRatio, 2},
      {cudaDevAttrPageableMemoryAccess, 0},
      {cudaDevAttrConcurrentManagedAccess, 1},
      {cudaDevAttrComputePreemptionSupported, 1},
      {cudaDevAttrCanUseHostPointerForRegisteredMem, 1},
      {cudaDevAttrReserved92, 0},
      {cudaDevAttrReserved93, 0},
      {cudaDevAttrReserved94, 0},
      {cudaDevAttrCooperativeLaunch, 1},
      {cudaDevAttrReserved96, 0},
      {cudaDevAttrMaxSharedMemoryPerBlockOptin, p.shared_per_block_optin},
      {cudaDevAttrCanFlushRemoteWrites, 0},
      {cudaDevAttrHostRegisterSupported, 1},
      {cudaDevAttrPageableMemoryAccessUsesHostPageTables, 0},
      {cudaDevAttrDirectManagedMemAccessFromHost, 0},
      {cudaDevAttrMaxBlocksPerMultiprocessor, p.blocks_per_multiprocessor},
      {cudaDevAttrMaxPersistingL2CacheSize, p.persisting_l2_max_bytes},
      {cudaDevAttrMaxAccessPolicyWindowSize, 134213632},
      {cudaDevAttrReservedSharedMemoryPerBlock, p.reserved_shared_per_block},
      {cudaDevAttrSparseCudaArraySupported, 1},
      {cudaDevAttrHostRegisterReadOnlySupported, 1},
      {cudaDevAttrTimelineSemaphoreInteropSupported, 1},
      {cudaDevAttrMemoryPoolsSupported, 1},  // cudaMallocAsync and the default pool exist
      {cudaDevAttrGPUDirectRDMASupported, 1},
      {cudaDevAttrGPUDirectRDMAFlushWritesOptions, cudaFlushGPUDirectRDMAWritesOptionHost},
      {cudaDevAttrGPUDirectRDMAWritesOrdering, cudaGPUDirectRDMAWritesOrderingOwner},
      {cudaDevAttrMemoryPoolSupportedHandleTypes, cudaMemHandleTypePosixFileDescriptor},
      {cudaDevAttrClusterLaunch, p.cluster_launch},
      {cudaDevAttrDeferredMappingCudaArraySupported, 1},
      {cudaDevAttrReserved122, 0},
      {cudaDevAttrReserved123, 0},
      {cudaDevAttrReserved124, 0},
      {cudaDevAttrIpcEventSupport, 1},
      {cudaDevAttrMemSyncDomainCount, p.mem_sync_domains},
      {cudaDevAttrReserved127, 0},
      {cudaDevAttrReserved128, 0},
      {cudaDevAttrReserved129, 0},
      {cudaDevAttrNumaConfig, 0},
      {cudaDevAttrNumaId, -1},
      {cudaDevAttrReserved132, 0},
      {cudaDevAttrMpsEnabled, 0},
      {cudaDevAttrHostNumaId, 0},
      {cudaDevAttrD3D12CigSupported, 0},
      {cudaDevAttrVulkanCigSupported, 0},
      {cudaDevAttrGpuPciDeviceId, static_cast<int>(p.pci_device_id)},
      {cudaDevAttrGpuPciSubsystemId, static_cast<int>(p.pci_subsystem_id)},
      {cudaDevAttrReserved141, 0},
      {cudaDevAttrHostNumaMemoryPoolsSupported, 0},
      {cudaDevAttrHostNumaMultinodeIpcSupported, 0},
      {cudaDevAttrHostMemoryPoolsSupported, 0},
      {cudaDevAttrReserved145, 0},
      {cudaDevAttrOnlyPartialHostNativeAtomicSupported, 0},
  };
  AttributeTable table;
  for (const Entry& e : entries) {
    table.value[e.attribute] = e.value;
    table.known[e.attribute] = true;
  }
  return table;
}

const AttributeTable& Table() {
  static const AttributeTable table = BuildTable(ActiveProfile());
  return table;
}

// The few attributes that tell devices apart: each device sits on PCI bus <device>.
int PerDeviceValue(cudaDeviceAttr attribute, int device, int table_value) {
  if (attribute == cudaDevAttrPciBusId || attribute == cudaDevAttrMultiGpuBoardGroupID) return device;
  return table_value;
}

int Value(cudaDeviceAttr attribute, int device) {
  return PerDeviceValue(attribute, device, Table().value[attribute]);
}

void FillLimits(int device, cudaDeviceProp* p) {
  auto v = [device](cudaDeviceAttr a) { return Value(a, device); };
  p->sharedMemPerBlock = static_cast<size_t>(v(cudaDevAttrMaxSharedMemoryPerBlock));
  p->regsPerBlock = v(cudaDevAttrMaxRegistersPerBlock);
  p->warpSize = v(cudaDevAttrWarpSize);
  p->memPitch = static_cast<size_t>(v(cudaDevAttrMaxPitch));
  p->maxThreadsPerBlock = v(cudaDevAttrMaxThreadsPerBlock);
  p->maxThreadsDim[0] = v(cudaDevAttrMaxBlockDimX);
  p->maxThreadsDim[1] = v(cudaDevAttrMaxBlockDimY);
  p->maxThreadsDim[2] = v(cudaDevAttrMaxBlockDimZ);
  p->maxGridSize[0] = v(cudaDevAttrMaxGridDimX);
  p->maxGridSize[1] = v(cudaDevAttrMaxGridDimY);
  p->maxGridSize[2] = v(cudaDevAttrMaxGridDimZ);
  p->totalConstMem = static_cast<size_t>(v(cudaDevAttrTotalConstantMemory));
  p->major = v(cudaDevAttrComputeCapabilityMajor);
  p->minor = v(cudaDevAttrComputeCapabilityMinor);
  p->multiProcessorCount = v(cudaDevAttrMultiProcessorCount);
  p->maxThreadsPerMultiProcessor = v(cudaDevAttrMaxThreadsPerMultiProcessor);
  p->sharedMemPerMultiprocessor = static_cast<size_t>(v(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
  p->regsPerMultiprocessor = v(cudaDevAttrMaxRegistersPerMultiprocessor);
  p->sharedMemPerBlockOptin = static_cast<size_t>(v(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  p->maxBlocksPerMultiProcessor = v(cudaDevAttrMaxBlocksPerMultiprocessor);
  p->reservedSharedMemPerBlock = static_cast<size_t>(v(cudaDevAttrReservedSharedMemoryPerBlock));
  p->memoryBusWidth = v(cudaDevAttrGlobalMemoryBusWidth);
  p->l2CacheSize = v(cudaDevAttrL2CacheSize);
  p->persistingL2CacheMaxSize = v(cudaDevAttrMaxPersistingL2CacheSize);
  p->accessPolicyMaxWindowSize = v(cudaDevAttrMaxAccessPolicyWindowSize);
  p->asyncEngineCount = v(cudaDevAttrAsyncEngineCount);
}

void FillTextureLimits(int device, cudaDeviceProp* p) {
  auto v = [device](cudaDeviceAttr a) { return Value(a, device); };
  p->textureAlignment = static_cast<size_t>(v(cudaDevAttrTextureAlignment));
  p->texturePitchAlignment = static_cast<size_t>(v(cudaDevAttrTexturePitchAlignment));
  p->surfaceAlignment = static_cast<size_t>(v(cudaDevAttrSurfaceAlignment));
  p->maxTexture1D = v(cudaDevAttrMaxTexture1DWidth);
  p->maxTexture1DMipmap = v(cudaDevAttrMaxTexture1DMipmappedWidth);
  p->maxTexture2D[0] = v(cudaDevAttrMaxTexture2DWidth);
  p->maxTexture2D[1] = v(cudaDevAttrMaxTexture2DHeight);
  p->maxTexture2DMipmap[0] = v(cudaDevAttrMaxTexture2DMipmappedWidth);
  p->maxTexture2DMipmap[1] = v(cudaDevAttrMaxTexture2DMipmappedHeight);
  p->maxTexture2DLinear[0] = v(cudaDevAttrMaxTexture2DLinearWidth);
  p->maxTexture2DLinear[1] = v(cudaDevAttrMaxTexture2DLinearHeight);
  p->maxTexture2DLinear[2] = v(cudaDevAttrMaxTexture2DLinearPitch);
  p->maxTexture2DGather[0] = v(cudaDevAttrMaxTexture2DGatherWidth);
  p->maxTexture2DGather[1] = v(cudaDevAttrMaxTexture2DGatherHeight);
  p->maxTexture3D[0] = v(cudaDevAttrMaxTexture3DWidth);
  p->maxTexture3D[1] = v(cudaDevAttrMaxTexture3DHeight);
  p->maxTexture3D[2] = v(cudaDevAttrMaxTexture3DDepth);
  p->maxTexture3DAlt[0] = v(cudaDevAttrMaxTexture3DWidthAlt);
  p->maxTexture3DAlt[1] = v(cudaDevAttrMaxTexture3DHeightAlt);
  p->maxTexture3DAlt[2] = v(cudaDevAttrMaxTexture3DDepthAlt);
  p->maxTextureCubemap = v(cudaDevAttrMaxTextureCubemapWidth);
  p->maxTexture1DLayered[0] = v(cudaDevAttrMaxTexture1DLayeredWidth);
  p->maxTexture1DLayered[1] = v(cudaDevAttrMaxTexture1DLayeredLayers);
  p->maxTexture2DLayered[0] = v(cudaDevAttrMaxTexture2DLayeredWidth);
  p->maxTexture2DLayered[1] = v(cudaDevAttrMaxTexture2DLayeredHeight);
  p->maxTexture2DLayered[2] = v(cudaDevAttrMaxTexture2DLayeredLayers);
  p->maxTextureCubemapLayered[0] = v(cudaDevAttrMaxTextureCubemapLayeredWidth);
  p->maxTextureCubemapLayered[1] = v(cudaDevAttrMaxTextureCubemapLayeredLayers);
}

void FillSurfaceLimits(int device, cudaDeviceProp* p) {
  auto v = [device](cudaDeviceAttr a) { return Value(a, device); };
  p->maxSurface1D = v(cudaDevAttrMaxSurface1DWidth);
  p->maxSurface2D[0] = v(cudaDevAttrMaxSurface2DWidth);
  p->maxSurface2D[1] = v(cudaDevAttrMaxSurface2DHeight);
  p->maxSurface3D[0] = v(cudaDevAttrMaxSurface3DWidth);
  p->maxSurface3D[1] = v(cudaDevAttrMaxSurface3DHeight);
  p->maxSurface3D[2] = v(cudaDevAttrMaxSurface3DDepth);
  p->maxSurface1DLayered[0] = v(cudaDevAttrMaxSurface1DLayeredWidth);
  p->maxSurface1DLayered[1] = v(cudaDevAttrMaxSurface1DLayeredLayers);
  p->maxSurface2DLayered[0] = v(cudaDevAttrMaxSurface2DLayeredWidth);
  p->maxSurface2DLayered[1] = v(cudaDevAttrMaxSurface2DLayeredHeight);
  p->maxSurface2DLayered[2] = v(cudaDevAttrMaxSurface2DLayeredLayers);
  p->maxSurfaceCubemap = v(cudaDevAttrMaxSurfaceCubemapWidth);
  p->maxSurfaceCubemapLayered[0] = v(cudaDevAttrMaxSurfaceCubemapLayeredWidth);
  p->maxSurfaceCubemapLayered[1] = v(cudaDevAttrMaxSurfaceCubemapLayeredLayers);
}

void FillCapabilities(int device, cudaDeviceProp* p) {
  auto v = [device](cudaDeviceAttr a) { return Value(a, device); };
  p->integrated = v(cudaDevAttrIntegrated);
  p->canMapHostMemory = v(cudaDevAttrCanMapHostMemory);
  p->concurrentKernels = v(cudaDevAttrConcurrentKernels);
  p->ECCEnabled = v(cudaDevAttrEccEnabled);
  p->pciBusID = v(cudaDevAttrPciBusId);
  p->pciDeviceID = v(cudaDevAttrPciDeviceId);
  p->pciDomainID = v(cudaDevAttrPciDomainId);
  p->tccDriver = v(cudaDevAttrTccDriver);
  p->unifiedAddressing = v(cudaDevAttrUnifiedAddressing);
  p->streamPrioritiesSupported = v(cudaDevAttrStreamPrioritiesSupported);
  p->globalL1CacheSupported = v(cudaDevAttrGlobalL1CacheSupported);
  p->localL1CacheSupported = v(cudaDevAttrLocalL1CacheSupported);
  p->managedMemory = v(cudaDevAttrManagedMemory);
  p->isMultiGpuBoard = v(cudaDevAttrIsMultiGpuBoard);
  p->multiGpuBoardGroupID = v(cudaDevAttrMultiGpuBoardGroupID);
  p->hostNativeAtomicSupported = v(cudaDevAttrHostNativeAtomicSupported);
  p->pageableMemoryAccess = v(cudaDevAttrPageableMemoryAccess);
  p->concurrentManagedAccess = v(cudaDevAttrConcurrentManagedAccess);
  p->computePreemptionSupported = v(cudaDevAttrComputePreemptionSupported);
  p->canUseHostPointerForRegisteredMem = v(cudaDevAttrCanUseHostPointerForRegisteredMem);
  p->cooperativeLaunch = v(cudaDevAttrCooperativeLaunch);
  p->pageableMemoryAccessUsesHostPageTables = v(cudaDevAttrPageableMemoryAccessUsesHostPageTables);
  p->directManagedMemAccessFromHost = v(cudaDevAttrDirectManagedMemAccessFromHost);
  p->hostRegisterSupported = v(cudaDevAttrHostRegisterSupported);
  p->sparseCudaArraySupported = v(cudaDevAttrSparseCudaArraySupported);
  p->hostRegisterReadOnlySupported = v(cudaDevAttrHostRegisterReadOnlySupported);
  p->timelineSemaphoreInteropSupported = v(cudaDevAttrTimelineSemaphoreInteropSupported);
  p->memoryPoolsSupported = v(cudaDevAttrMemoryPoolsSupported);
  p->gpuDirectRDMASupported = v(cudaDevAttrGPUDirectRDMASupported);
  p->gpuDirectRDMAFlushWritesOptions = static_cast<unsigned>(v(cudaDevAttrGPUDirectRDMAFlushWritesOptions));
  p->gpuDirectRDMAWritesOrdering = v(cudaDevAttrGPUDirectRDMAWritesOrdering);
  p->memoryPoolSupportedHandleTypes = static_cast<unsigned>(v(cudaDevAttrMemoryPoolSupportedHandleTypes));
  p->deferredMappingCudaArraySupported = v(cudaDevAttrDeferredMappingCudaArraySupported);
  p->ipcEventSupported = v(cudaDevAttrIpcEventSupport);
  p->clusterLaunch = v(cudaDevAttrClusterLaunch);
  p->deviceNumaConfig = v(cudaDevAttrNumaConfig);
  p->deviceNumaId = v(cudaDevAttrNumaId);
  p->mpsEnabled = v(cudaDevAttrMpsEnabled);
  p->hostNumaId = v(cudaDevAttrHostNumaId);
  p->gpuPciDeviceID = static_cast<unsigned>(v(cudaDevAttrGpuPciDeviceId));
  p->gpuPciSubsystemID = static_cast<unsigned>(v(cudaDevAttrGpuPciSubsystemId));
  p->hostNumaMultinodeIpcSupported = v(cudaDevAttrHostNumaMultinodeIpcSupported);
}

}  // namespace

const DeviceProfile& ActiveProfile() {
  static const DeviceProfile& profile = ProfileFromEnvironment();
  return profile;
}

cudaError_t DeviceAttributeValue(cudaDeviceAttr attribute, int device, int* value) {
  if (device < 0 || device >= Runtime::Get().device_count()) return cudaErrorInvalidDevice;
  const int index = static_cast<int>(attribute);
  if (value == nullptr || index < 0 || index >= cudaDevAttrMax || !Table().known[index]) {
    return cudaErrorInvalidValue;
  }
  *value = Value(attribute, device);
  return cudaSuccess;
}

void FillDeviceProperties(int device, cudaDeviceProp* prop) {
  std::memset(prop, 0, sizeof(*prop));
  std::snprintf(prop->name, sizeof(prop->name), "ncclsim CPU device %d", device);
  // sim/driver's cuDeviceGetUuid returns the same bytes, so both APIs name a device alike.
  prop->uuid.bytes[0] = static_cast<char>(device + 1);
  prop->totalGlobalMem = ActiveProfile().memory_bytes;
  // unifiedFunctionPointers, the one field without a cudaDeviceAttr, stays 0 as on x86 hosts.
  FillLimits(device, prop);
  FillTextureLimits(device, prop);
  FillSurfaceLimits(device, prop);
  FillCapabilities(device, prop);
}

}  // namespace ncclsim
