/* Blocks until its stdin closes, so that `doctor --pid` can inspect it running. With an
 * argument it first dlopen()s that library (RTLD_LOCAL, as ctypes.CDLL does), so NCCL is in
 * no NEEDED list. Built with FAKE_STATIC_NCCL it carries its own ncclAllReduce, as a program
 * with NCCL linked statically does. */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#ifdef FAKE_STATIC_NCCL
int ncclAllReduce(void) { return 0; }
#endif

int main(int argc, char** argv) {
  if (argc > 1 && dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) == NULL) {
    fprintf(stderr, "fake_loader_app: %s\n", dlerror());
    return 1;
  }
  char c;
  while (read(0, &c, 1) > 0) {
  }
  return 0;
}
