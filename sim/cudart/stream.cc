#include "stream.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <thread>
#include <utility>

namespace ncclsim {

Stream::Stream(int device, StreamKind kind, unsigned flags, int priority, uint64_t id)
    : device_(device), kind_(kind), flags_(flags), priority_(priority), id_(id) {}

bool Stream::blocking() const {
  return kind_ != StreamKind::kLegacy && (flags_ & cudaStreamNonBlocking) == 0;
}

static bool AllComplete(const std::vector<StreamPoint>& points) {
  for (const StreamPoint& p : points) {
    if (!p.stream->IsComplete(p.ticket)) return false;
  }
  return true;
}

void WaitForAll(const std::vector<StreamPoint>& points) {
  for (const StreamPoint& p : points) p.stream->WaitFor(p.ticket);
}

uint64_t Stream::Enqueue(std::function<void()> work, std::vector<StreamPoint> after, bool trivial) {
  // Checked before taking mu_: holding one stream's lock while taking another's would deadlock
  // against a submission going the other way. Completion never regresses, so the answer stays true.
  const bool after_done = trivial && AllComplete(after);
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t ticket = ++enqueued_;
  // Running inline is only equivalent to queueing when nothing is ahead of this item.
  if (after_done && completed_ + 1 == ticket) {
    work();
    completed_ = ticket;
    completed_cv_.notify_all();
    return ticket;
  }
  queue_.push_back(Item{ticket, std::move(work), std::move(after)});
  if (!worker_running_) StartWorkerLocked();
  work_cv_.notify_one();
  return ticket;
}

void Stream::StartWorkerLocked() {
  worker_running_ = true;
  // Detached: a worker stuck forever in a host function must not block process exit.
  std::thread([self = shared_from_this()] { self->RunWorker(); }).detach();
}

void Stream::RunWorker() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return !queue_.empty() || retired_; });
    if (queue_.empty()) break;
    Item item = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    WaitForAll(item.after);
    item.work();
    const uint64_t ticket = item.ticket;
    item = Item{};  // drop captured state before reporting completion
    lock.lock();
    completed_ = ticket;
    completed_cv_.notify_all();
  }
  worker_running_ = false;
}

uint64_t Stream::last_ticket() const {
  std::lock_guard<std::mutex> lock(mu_);
  return enqueued_;
}

bool Stream::IsComplete(uint64_t ticket) const {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_ >= ticket;
}

void Stream::WaitFor(uint64_t ticket) const {
  std::unique_lock<std::mutex> lock(mu_);
  completed_cv_.wait(lock, [&] { return completed_ >= ticket; });
}

StreamPoint Stream::Tail() {
  return StreamPoint{shared_from_this(), last_ticket()};
}

void Stream::Retire() {
  std::lock_guard<std::mutex> lock(mu_);
  retired_ = true;
  work_cv_.notify_all();
}

}  // namespace ncclsim
