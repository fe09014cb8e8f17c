// ncclwatch gc [--job ID]
//
// Removes the shared-memory segments that killed ranks left behind. A rank ended by SIGTERM
// or SIGKILL (torchrun tearing a job down, the OOM killer) cannot remove its own segment.
#include <cstdio>
#include <memory>
#include <string>

#include "core/shm/reader.h"
#include "tools/commands.h"
#include "tools/exit_status.h"

namespace ncclwatch::tools {

void AddGcCommand(CLI::App& app, int* exit_status) {
  auto job = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "gc", "Remove the shared memory of this user's ranks that died without cleaning up. With --job, the "
            "dead ranks of that job (live ranks' segments always stay); without, every job none of whose "
            "processes is alive. Watchdogs also do this for other jobs when a job starts.");
  cmd->add_option("--job", *job, "job id (NCCLWATCH_JOB_ID / TORCHELASTIC_RUN_ID ...)");
  cmd->footer("Exit status: 0.");
  cmd->callback([job, exit_status] {
    const int removed = job->empty() ? shm::RemoveDeadJobs("") : shm::RemoveStaleSegments(*job);
    std::printf("removed %d stale segment%s\n", removed, removed == 1 ? "" : "s");
    *exit_status = kExitOk;
  });
}

}  // namespace ncclwatch::tools
