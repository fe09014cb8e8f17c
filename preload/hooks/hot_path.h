// Marks the functions every hooked op runs through (collectives, P2P, groups, host syncs).
//
// GCC puts a function marked hot in .text.hot, which the linker lays out as one block. The
// benchmark pauses 10 ms between batches of 128 calls, as a job computes between its
// collectives, and after a pause every line and page of the hook is cold: spread over the
// library (about ten 4 KB pages for one collective), the hook's code would cost more misses
// than its work. Grouped, the path is a few contiguous pages.
#ifndef NCCLWATCH_PRELOAD_HOOKS_HOT_PATH_H_
#define NCCLWATCH_PRELOAD_HOOKS_HOT_PATH_H_

#define NCCLWATCH_HOT __attribute__((hot))

// A hot function inlined into each caller: for the small steps of one op, whose prologues and
// epilogues as calls are a measurable part of the hook (callgrind).
#define NCCLWATCH_HOT_INLINE NCCLWATCH_HOT inline __attribute__((always_inline))

#endif  // NCCLWATCH_PRELOAD_HOOKS_HOT_PATH_H_
