/* Carries its own ncclAllReduce, as a program with NCCL linked statically does. */
int ncclAllReduce(void) { return 0; }
int main(void) { return ncclAllReduce(); }
