// Stopping ncclwatch's background threads without ever holding up the application's exit.
#ifndef NCCLWATCH_PRELOAD_LIFECYCLE_BOUNDED_STOP_H_
#define NCCLWATCH_PRELOAD_LIFECYCLE_BOUNDED_STOP_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ncclwatch::preload {

// Sets `stop` under `mu` and wakes `thread`, which sets `stopped` under `mu` and notifies
// `wake` as it ends. Joins the thread if it ends within `timeout`; otherwise detaches it (stuck
// in the driver, or in a dump), and the process exit ends it.
void StopWithin(std::thread& thread, std::mutex& mu, std::condition_variable& wake, bool& stop,
                const bool& stopped, std::chrono::milliseconds timeout);

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_LIFECYCLE_BOUNDED_STOP_H_
