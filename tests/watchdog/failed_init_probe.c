/* Calls ncclCommInitRank N times with nranks 0 (ncclInvalidArgument): every call starts and
 * fails an init under the preload. Run under valgrind by CMake: a failed init must not leak
 * the preload's per-communicator entry (it leaked 120 bytes per call). */
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10;
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return 2;
  int failures = 0;
  for (int i = 0; i < n; ++i) {
    ncclComm_t comm = NULL;
    if (ncclCommInitRank(&comm, 0, id, 0) != ncclSuccess) ++failures;
  }
  printf("%d of %d inits failed\n", failures, n);
  return failures == n ? 0 : 1;
}
