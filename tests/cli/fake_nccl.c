/* A stand-in with the soname libnccl.so.2, for `doctor` to find as a dynamic dependency. */
int ncclAllReduce(void) { return 0; }
