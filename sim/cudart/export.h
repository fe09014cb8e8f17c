// Marks the C entry points this library exports. Everything else is hidden; the linker version
// script (libcudart.map) puts every export under the node libcudart.so.13, as in the real library.
#ifndef NCCLWATCH_SIM_CUDART_EXPORT_H_
#define NCCLWATCH_SIM_CUDART_EXPORT_H_

#define NCCLSIM_EXPORT extern "C" __attribute__((visibility("default")))

#endif  // NCCLWATCH_SIM_CUDART_EXPORT_H_
