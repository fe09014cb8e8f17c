// The processes behind a verdict's culprits, one entry per process however many ranks it drives
// (nccl-tests -g 2, ncclCommInitAll: one process, several communicator ranks and devices), each
// described from the best evidence there is, and the command to run next about it:
//   its own dump          where its threads were (the innermost user frame); next, while it
//                         still runs: py-spy dump --native --pid P (gdb for a native process);
//   a peer's dump for it  stopped (T: kill -CONT P first), in the kernel (D: its wchan and kernel
//                         stack; /proc/P/stack), a zombie, or gone (its exit evidence: status,
//                         signal, or killed without a word: dmesg and the launcher's log);
//   no dump at all        the ranks, and that no process on the hosts that dumped held them.
#ifndef NCCLWATCH_CORE_ANALYZE_CULPRIT_PROCESSES_H_
#define NCCLWATCH_CORE_ANALYZE_CULPRIT_PROCESSES_H_

#include <utility>
#include <vector>

#include "core/analyze/analysis.h"
#include "core/analyze/comm_table.h"
#include "core/dump/dump.h"

namespace ncclwatch::analyze {

// At most this many processes are described; the report counts the rest.
inline constexpr size_t kMaxCulpritProcesses = 16;

// `culprits`: each culprit rank with a dump and its dump (a process may appear under several
// ranks); `without`: the culprit ranks with none; `then`: what happened afterwards (a process
// known to have gone since its dump is not to be inspected live). `table`: the verdict's
// communicator, nullptr for sync_stuck.
std::vector<CulpritProcess> DescribeCulprits(const std::vector<std::pair<int, const dump::RankDump*>>& culprits,
                                             const std::vector<int>& without, const CommTable* table,
                                             const std::vector<AfterEvent>& then);

// "rank 1 (vm:27590)", "process vm:28891 (rank 0) drives comm ranks 0-1, devices 0-1", "ranks 4-5".
std::string ProcessLabel(const CulpritProcess& p);

// One line of what is known of it: "in load_batch (/app/data.py:40)", "stopped (state T, in
// do_signal_stop), as vm:27589 (rank 0) saw it", "gone: exited with status 1", ...
std::string ProcessStateText(const CulpritProcess& p);

// "exited with status 1", "died of signal 6 (SIGABRT)", "vanished without recording an exit
// (SIGKILL, the OOM killer)".
std::string ExitText(const detect::ExitFacts& exit);

// The stable name of a state in the JSON report: dumped, stopped, in_kernel, zombie, gone, no_dump.
const char* ProcessStateName(ProcessState state);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_CULPRIT_PROCESSES_H_
