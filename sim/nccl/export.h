// Defines an NCCL entry point the way libnccl.so.2 exports it: a strong `pnccl*`
// symbol plus a weak `nccl*` alias at the same address, both with default visibility,
// so profilers and interposers see the same two names as with the real library.
#ifndef NCCLWATCH_SIM_NCCL_EXPORT_H_
#define NCCLWATCH_SIM_NCCL_EXPORT_H_

#define NCCLSIM_API(ret, name, ...)                                                      \
  extern "C" __attribute__((visibility("default"))) ret p##name(__VA_ARGS__);            \
  extern "C" __attribute__((visibility("default"), weak, alias("p" #name))) ret name(   \
      __VA_ARGS__);                                                                      \
  ret p##name(__VA_ARGS__)

#endif  // NCCLWATCH_SIM_NCCL_EXPORT_H_
