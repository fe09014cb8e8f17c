// The floor of the hook-overhead benchmark: a call that does nothing, made through the PLT
// into a shared object, as every call into libnccl.so.2 or libcudart.so.13 is.
#ifndef NCCLWATCH_BENCH_HOOKS_EMPTY_CALL_H_
#define NCCLWATCH_BENCH_HOOKS_EMPTY_CALL_H_

extern "C" void ncclwatch_bench_empty_call();

#endif  // NCCLWATCH_BENCH_HOOKS_EMPTY_CALL_H_
