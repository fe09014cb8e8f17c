// `ncclwatch run --metrics ADDR:PORT`: starts `ncclwatch exporter` for the job being launched,
// unless something already listens on that port (an exporter of this host: one per port).
#ifndef NCCLWATCH_TOOLS_CLI_RUN_METRICS_H_
#define NCCLWATCH_TOOLS_CLI_RUN_METRICS_H_

#include <string>

namespace ncclwatch::tools {

// Forks `<this binary> exporter --listen LISTEN [--dump-dir DUMP_DIR]`, which ends when the
// calling process (soon CMD, after execvp) ends: PR_SET_PDEATHSIG. It serves every job of the
// user, so a second job launched while the first runs is served too, until the first ends.
// Prints one line and returns when an exporter already answers on the port, or when the fork
// fails (the job runs anyway: metrics are not worth failing a launch for).
void StartExporterUnlessListening(const std::string& listen, const std::string& dump_dir);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_CLI_RUN_METRICS_H_
