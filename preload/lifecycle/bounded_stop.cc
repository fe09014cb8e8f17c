#include "preload/lifecycle/bounded_stop.h"

namespace ncclwatch::preload {

void StopWithin(std::thread& thread, std::mutex& mu, std::condition_variable& wake, bool& stop,
                const bool& stopped, std::chrono::milliseconds timeout) {
  if (!thread.joinable()) return;
  std::unique_lock<std::mutex> lock(mu);
  stop = true;
  wake.notify_all();
  const bool ended = wake.wait_for(lock, timeout, [&stopped] { return stopped; });
  lock.unlock();
  if (ended) {
    thread.join();
  } else {
    thread.detach();
  }
}

}  // namespace ncclwatch::preload
