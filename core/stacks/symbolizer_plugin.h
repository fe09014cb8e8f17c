// C ABI of libncclwatch_symbolizer.so, the optional helper that resolves
// names from .symtab (static functions, executables without -rdynamic).
//
// It is a separate object, dlopen'ed RTLD_LOCAL on demand, so the preload
// never carries abseil as a NEEDED dependency into every host process.
#ifndef NCCLWATCH_CORE_STACKS_SYMBOLIZER_PLUGIN_H_
#define NCCLWATCH_CORE_STACKS_SYMBOLIZER_PLUGIN_H_

#define NCCLWATCH_SYMBOLIZER_FILE_NAME "libncclwatch_symbolizer.so"
#define NCCLWATCH_SYMBOLIZER_LOOKUP "ncclwatch_symbolizer_lookup"

extern "C" {
// Writes the demangled name of the function containing `pc` into `out`
// (NUL-terminated, truncated to out_size) and returns 1, or returns 0.
typedef int (*ncclwatch_symbolizer_lookup_fn)(const void* pc, char* out, int out_size);
}

#endif  // NCCLWATCH_CORE_STACKS_SYMBOLIZER_PLUGIN_H_
