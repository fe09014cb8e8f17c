#include "event.h"

#include <chrono>

#include "capture.h"
#include <unordered_map>
#include <utility>

namespace ncclsim {
namespace {

std::mutex registry_mu;
std::unordered_map<const void*, std::unique_ptr<Event>>& Registry() {
  static auto* events = new std::unordered_map<const void*, std::unique_ptr<Event>>();
  return *events;
}

}  // namespace

int64_t MonotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Event::SetRecord(StreamPoint point, std::shared_ptr<std::atomic<int64_t>> time_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  point_ = std::move(point);
  time_ns_ = std::move(time_ns);
  captured_in_.reset();
  captured_nodes_.clear();
}

void Event::SetCaptured(std::shared_ptr<CaptureSequence> sequence, std::vector<cudaGraphNode_t> nodes) {
  std::lock_guard<std::mutex> lock(mu_);
  // A captured record is no point of any stream: the event no longer refers to its last real one.
  point_ = StreamPoint{};
  time_ns_.reset();
  captured_in_ = std::move(sequence);
  captured_nodes_ = std::move(nodes);
}

std::shared_ptr<CaptureSequence> Event::Captured(std::vector<cudaGraphNode_t>* nodes) {
  std::lock_guard<std::mutex> lock(mu_);
  // Read under Captures' lock by its callers, so `ended` cannot change meanwhile.
  if (captured_in_ && captured_in_->ended) return nullptr;
  if (nodes != nullptr) *nodes = captured_nodes_;
  return captured_in_;
}
StreamPoint Event::point() {
  std::lock_guard<std::mutex> lock(mu_);
  return point_;
}

cudaError_t Event::Query() {
  StreamPoint p = point();
  if (!p.stream || p.stream->IsComplete(p.ticket)) return cudaSuccess;
  return cudaErrorNotReady;
}

void Event::Synchronize() {
  StreamPoint p = point();
  if (p.stream) p.stream->WaitFor(p.ticket);
}

int64_t Event::TimeNs() {
  std::lock_guard<std::mutex> lock(mu_);
  return time_ns_ ? time_ns_->load() : -1;
}

cudaEvent_t Event::Register(std::unique_ptr<Event> event) {
  auto handle = reinterpret_cast<cudaEvent_t>(event.get());
  std::lock_guard<std::mutex> lock(registry_mu);
  Registry().emplace(handle, std::move(event));
  return handle;
}

Event* Event::Lookup(cudaEvent_t handle) {
  std::lock_guard<std::mutex> lock(registry_mu);
  auto it = Registry().find(handle);
  return it == Registry().end() ? nullptr : it->second.get();
}

bool Event::Destroy(cudaEvent_t handle) {
  std::lock_guard<std::mutex> lock(registry_mu);
  return Registry().erase(handle) > 0;
}

}  // namespace ncclsim
