// The watchdog thread: every NCCLWATCH_POLL_MS it reads what the job's processes on this
// host published, classifies every communicator (core/detect), and on each new incident
// captures this process's stacks and writes this rank's dump (JSON + txt) to the dump
// directory, drops a trigger file there and logs one line. Trigger files of incidents it
// has not dumped (e.g. declared on another host) make it dump too. See README.md.
//
// Never blocks the job: it takes no lock the application may hold, stack capture is
// bounded, and every I/O failure is logged once and otherwise ignored.
#ifndef NCCLWATCH_PRELOAD_WATCHDOG_WATCHDOG_H_
#define NCCLWATCH_PRELOAD_WATCHDOG_WATCHDOG_H_

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "core/detect/detect_config.h"
#include "core/detect/facts.h"
#include "core/settings/settings.h"
#include "core/stacks/process_stacks.h"

namespace ncclwatch::preload {

struct WatchdogSettings {
  std::string job_id;     // sanitized, as in the segment name
  std::string host;
  uint64_t run_key = 0;   // this process's run (core/shm/run_identity.h)
  std::string dump_dir;   // NCCLWATCH_DUMP_DIR, else <working directory>/ncclwatch-dumps/<job>
  bool dump_dir_named_by_user = false;  // NCCLWATCH_DUMP_DIR was set (see core/dump/dump_dir.h)
  // The job written into our trigger files and required in the ones we act on: the job id,
  // unless NCCLWATCH_TRIGGER_JOB_ID names one shared by hosts whose NCCLWATCH_JOB_IDs differ.
  std::string trigger_job_id;
  detect::DetectConfig detect;
  uint64_t last_gasp_floor_ns = 0;   // NCCLWATCH_LAST_GASP_FLOOR_SEC (last_gasp.h)
  uint64_t last_gasp_budget_ns = 0;  // NCCLWATCH_LAST_GASP_SEC; 0: off
  CaptureOptions capture;
  std::map<std::string, std::string> nccl_env;  // recorded in dumps
  // This process's launcher attempt and start (wall clock): triggers of another attempt, or
  // written before it started, are not answered (core/watch/trigger_file.h).
  detect::Attempt attempt;
  uint64_t process_start_unix_ns = 0;
};

// The watchdog's part of the process's settings; resolves the default dump directory against
// the working directory now.
WatchdogSettings WatchdogSettingsOf(const settings::Settings& config, const std::string& host);

// A communicator of this process finished its init: the watchdog leaves its quiet phase
// (core/watch/watch_phase.h). Cheap after the first call (one atomic exchange); keeps errno.
void NoteCommunicatorReady() noexcept;
bool CommunicatorReady() noexcept;

class Watchdog {
 public:
  explicit Watchdog(WatchdogSettings settings) : settings_(std::move(settings)) {}
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts the thread (all signals blocked). Idempotent.
  void Start();
  // Stops the thread, waiting at most ~1 s (a dump may be in progress); then detaches.
  void Stop();

 private:
  void Run();

  WatchdogSettings settings_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;     // guarded by mu_
  bool stopped_ = false;  // guarded by mu_
  bool started_ = false;
  std::thread thread_;
};

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_WATCHDOG_WATCHDOG_H_
