// A CUDA 11 runtime's cudaGraphInstantiate and cudaGraphExecUpdate, the forms before CUDA 12.0
// changed their arguments under the same names: each prints what reached it (cuda11_graph_abi).
#include <cstddef>
#include <cstdio>

extern "C" __attribute__((visibility("default"))) int cudaGraphInstantiate(void** exec, void* graph, void** error_node,
                                                                           char* log, size_t log_size) {
  if (log != nullptr && log_size > 0) std::snprintf(log, log_size, "log of 11.x");
  if (error_node != nullptr) *error_node = reinterpret_cast<void*>(0xe11);
  *exec = reinterpret_cast<void*>(0xe7ec);
  std::printf("cudaGraphInstantiate graph=%p error_node=%s log_size=%zu\n", graph, error_node ? "set" : "null",
              log_size);
  return 0;
}

extern "C" __attribute__((visibility("default"))) int cudaGraphExecUpdate(void* exec, void* graph, void** error_node,
                                                                          int* result) {
  if (error_node != nullptr) *error_node = nullptr;
  if (result != nullptr) *result = 7;
  std::printf("cudaGraphExecUpdate exec=%p graph=%p error_node=%s result=%s\n", exec, graph,
              error_node ? "set" : "null", result ? "set" : "null");
  return 0;
}
