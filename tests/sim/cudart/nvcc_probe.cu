// Built by nvcc (-cudart shared) and run against the sim: launches, syncs and copies must
// succeed. Kernels have no effect on the sim, so only host-visible behaviour is checked.
#include <cstdio>
#include <cstring>

__global__ void Scale(float* data, float factor) { data[threadIdx.x] *= factor; }

#define EXPECT_OK(call)                                                        \
  do {                                                                         \
    cudaError_t rc = (call);                                                   \
    if (rc != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(rc));    \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main() {
  cudaDeviceProp prop;
  EXPECT_OK(cudaGetDeviceProperties(&prop, 0));
  if (std::strncmp(prop.name, "ncclsim", 7) != 0) {
    std::fprintf(stderr, "not running on the sim: %s\n", prop.name);
    return 1;
  }
  float host[32];
  for (int i = 0; i < 32; ++i) host[i] = static_cast<float>(i);
  float* device = nullptr;
  EXPECT_OK(cudaMalloc(&device, sizeof(host)));
  EXPECT_OK(cudaMemcpy(device, host, sizeof(host), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  EXPECT_OK(cudaStreamCreate(&stream));
  cudaEvent_t done;
  EXPECT_OK(cudaEventCreate(&done));
  Scale<<<1, 32>>>(device, 2.0f);
  Scale<<<1, 32, 0, stream>>>(device, 2.0f);
  EXPECT_OK(cudaGetLastError());
  EXPECT_OK(cudaEventRecord(done, stream));
  EXPECT_OK(cudaDeviceSynchronize());
  EXPECT_OK(cudaEventQuery(done));
  float back[32];
  EXPECT_OK(cudaMemcpy(back, device, sizeof(back), cudaMemcpyDeviceToHost));
  if (std::memcmp(back, host, sizeof(host)) != 0) {
    std::fprintf(stderr, "copy round trip changed the data\n");
    return 1;
  }
  EXPECT_OK(cudaEventDestroy(done));
  EXPECT_OK(cudaStreamDestroy(stream));
  EXPECT_OK(cudaFree(device));
  return 0;
}
