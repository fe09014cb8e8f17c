// FUZZ_CHECK: an invariant of the code under test. A violation aborts with the condition and
// its location, so libFuzzer (or the replay driver) records the input as a crash.
#ifndef NCCLWATCH_FUZZ_FUZZ_CHECK_H_
#define NCCLWATCH_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                                    \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);     \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

#endif  // NCCLWATCH_FUZZ_FUZZ_CHECK_H_
