/* A stand-in with the soname libnccl.so.2, for `doctor` to find as a dynamic dependency.
 * Its banner is the one NCCL prints at init, from which doctor reads the version. */
const char ncclwatch_fake_banner[] = "NCCL version 2.27.3+cuda12.9";
int ncclAllReduce(void) { return ncclwatch_fake_banner[0] == 'N' ? 0 : 1; }
