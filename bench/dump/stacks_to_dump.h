// Copies a stack capture into a dump the way a rank's watchdog does, so that the dump-cost
// benchmark writes files of realistic size.
#ifndef NCCLWATCH_BENCH_DUMP_STACKS_TO_DUMP_H_
#define NCCLWATCH_BENCH_DUMP_STACKS_TO_DUMP_H_

#include "core/dump/dump.h"
#include "core/stacks/process_stacks.h"

namespace ncclwatch::bench {

void CopyStacksIntoDump(const ProcessStacks& stacks, dump::RankDump* dump);

}  // namespace ncclwatch::bench

#endif  // NCCLWATCH_BENCH_DUMP_STACKS_TO_DUMP_H_
