// Body of libncclwatch_symbolizer.so: a thin C entry point over absl::Symbolize.
#include "core/stacks/symbolizer_plugin.h"

#include "absl/debugging/symbolize.h"

extern "C" __attribute__((visibility("default"))) int ncclwatch_symbolizer_lookup(const void* pc, char* out,
                                                                                  int out_size) {
  if (out == nullptr || out_size <= 0) return 0;
  return absl::Symbolize(pc, out, out_size) ? 1 : 0;
}
