// Calls the CUDA 11 forms of cudaGraphInstantiate and cudaGraphExecUpdate (cuda11_graph_stub.cc)
// and prints what came back: run with and without LD_PRELOAD=libncclwatch.so, whose hooks are
// declared in the CUDA 12 form, the output must be the same (preload/hooks/cuda_api_table.h).
#include <cstddef>
#include <cstdio>

extern "C" int cudaGraphInstantiate(void** exec, void* graph, void** error_node, char* log, size_t log_size);
extern "C" int cudaGraphExecUpdate(void* exec, void* graph, void** error_node, int* result);

int main() {
  void* exec = nullptr;
  void* error_node = nullptr;
  char log[32] = "untouched";
  const int rc = cudaGraphInstantiate(&exec, reinterpret_cast<void*>(0x6a), &error_node, log, sizeof log);
  std::printf("rc=%d exec=%p error_node=%p log=%s\n", rc, exec, error_node, log);
  int result = -1;
  void* update_error = reinterpret_cast<void*>(1);
  const int update_rc = cudaGraphExecUpdate(exec, reinterpret_cast<void*>(0x6b), &update_error, &result);
  std::printf("rc=%d error_node=%p result=%d\n", update_rc, update_error, result);
  return 0;
}
