// ncclwatch gc [--job ID]
//
// Removes the shared-memory segments that gone ranks left behind. A rank that exits keeps its
// segment as exit evidence for the peers it may leave waiting, and the last live process of
// the job removes them all; when that one is killed too (torchrun tearing a job down, the OOM
// killer, SIGKILL), the segments stay until a watchdog of a later job or this command.
#include <cstdio>
#include <memory>
#include <string>

#include "core/shm/segment_gc.h"
#include "tools/cli/commands.h"
#include "tools/cli/exit_status.h"

namespace ncclwatch::tools {

void AddGcCommand(CLI::App& app, int* exit_status) {
  auto job = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "gc", "Remove the shared memory that this user's gone ranks left (killed ranks, and exited ranks' exit "
            "evidence). With --job, the gone ranks of that job (live ranks' segments always stay); without, "
            "every job none of whose processes is alive. Watchdogs also do this for other jobs when a job starts.");
  cmd->add_option("--job", *job, "job id (NCCLWATCH_JOB_ID / TORCHELASTIC_RUN_ID ...)");
  cmd->footer("Exit status: 0.");
  cmd->callback([job, exit_status] {
    const int removed = job->empty() ? shm::RemoveDeadJobs("") : shm::RemoveStaleSegments(*job);
    std::printf("removed %d stale segment%s\n", removed, removed == 1 ? "" : "s");
    *exit_status = kExitOk;
  });
}

}  // namespace ncclwatch::tools
