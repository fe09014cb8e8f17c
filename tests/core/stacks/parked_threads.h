// Test threads that block on a condition variable until released. The
// destructor releases and joins them, so a failing assertion never leaves a
// thread behind.
#ifndef NCCLWATCH_TESTS_CORE_STACKS_PARKED_THREADS_H_
#define NCCLWATCH_TESTS_CORE_STACKS_PARKED_THREADS_H_

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/stacks/task_list.h"

namespace ncclwatch::testing {

class Park {
 public:
  // Blocks until Release(); a deadline keeps a broken test from hanging.
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait_for(lock, std::chrono::seconds(60), [this] { return released_; });
  }
  // Like Wait() but through the untimed, exported libstdc++ entry point
  // std::condition_variable::wait, so it shows in stacks by name.
  void WaitUntimed() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    while (!released_) changed_.wait(lock);
  }
  // Blocks until `count` threads are inside Wait().
  bool AwaitWaiting(int count) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return waiting_ >= count; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int waiting_ = 0;
  bool released_ = false;
};

class ParkedThreads {
 public:
  ~ParkedThreads() {
    park_.Release();
    for (std::thread& thread : threads_) thread.join();
  }
  // Runs body(park) on a new thread named `name`; returns its kernel tid once
  // the thread has started.
  pid_t Start(const std::string& name, std::function<void(Park&)> body) {
    std::mutex mutex;
    std::condition_variable started;
    pid_t tid = 0;
    threads_.emplace_back([&, name, body] {
      pthread_setname_np(pthread_self(), name.c_str());
      {
        std::lock_guard<std::mutex> lock(mutex);
        tid = static_cast<pid_t>(syscall(SYS_gettid));
        started.notify_all();
      }
      body(park_);
    });
    std::unique_lock<std::mutex> lock(mutex);
    started.wait(lock, [&] { return tid != 0; });
    tids_.push_back(tid);
    return tid;
  }
  // Waits until `count` threads entered Park::Wait and every started thread
  // is asleep (state S in /proc), so captures see them blocked.
  bool AwaitParked(int count) {
    if (!park_.AwaitWaiting(count)) return false;
    for (int attempt = 0; attempt < 1000; ++attempt) {
      if (AllSleeping()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

 private:
  bool AllSleeping() const {
    for (pid_t tid : tids_) {
      if (stacks_internal::ReadThreadState(tid) != 'S') return false;
    }
    return true;
  }

  Park park_;
  std::vector<pid_t> tids_;
  std::vector<std::thread> threads_;
};

}  // namespace ncclwatch::testing

#endif  // NCCLWATCH_TESTS_CORE_STACKS_PARKED_THREADS_H_
