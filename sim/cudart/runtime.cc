#include "runtime.h"

#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <utility>

#include "capture.h"

namespace ncclsim {
namespace {

constexpr int kDefaultDeviceCount = 8;

std::atomic<bool> runtime_started{false};
std::atomic<bool> forked_child{false};

thread_local int current_device_of_thread = 0;

int DeviceCountFromEnvironment() {
  const char* text = std::getenv("NCCLSIM_DEVICES");
  if (text == nullptr || *text == '\0') return kDefaultDeviceCount;
  char* end = nullptr;
  long n = std::strtol(text, &end, 10);
  if (*end != '\0' || n < 0 || n > 1024) return kDefaultDeviceCount;
  return static_cast<int>(n);
}

void MarkForkedChild() {
  if (runtime_started.load()) forked_child.store(true);
}

__attribute__((constructor)) void InstallForkHandler() {
  pthread_atfork(nullptr, nullptr, MarkForkedChild);
}

// The calling thread's per-thread default streams, one per device, retired at thread exit.
struct PerThreadStreams {
  std::vector<std::shared_ptr<Stream>> by_device;
  ~PerThreadStreams() {
    if (!Runtime::Usable()) return;
    for (auto& s : by_device) {
      if (s) s->Retire();
    }
  }
};
thread_local PerThreadStreams per_thread_streams;

}  // namespace

Runtime& Runtime::Get() {
  static Runtime* runtime = new Runtime();  // never destroyed, see header
  return *runtime;
}

bool Runtime::Usable() { return !forked_child.load(std::memory_order_relaxed); }

Runtime::Runtime() : device_count_(DeviceCountFromEnvironment()), devices_(device_count_) {
  runtime_started.store(true);
}

int Runtime::current_device() { return current_device_of_thread; }
void Runtime::set_current_device(int device) { current_device_of_thread = device; }

std::shared_ptr<Stream> Runtime::LegacyLocked(int device) {
  Device& d = devices_[device];
  if (!d.legacy) d.legacy = std::make_shared<Stream>(device, StreamKind::kLegacy, 0, 0, next_stream_id_++);
  return d.legacy;
}

void Runtime::Register(const std::shared_ptr<Stream>& stream) {
  devices_[stream->device()].others.push_back(stream);
}

std::shared_ptr<Stream> Runtime::PerThread(int device) {
  auto& slots = per_thread_streams.by_device;
  if (slots.size() <= static_cast<size_t>(device)) slots.resize(device + 1);
  if (!slots[device]) {
    std::lock_guard<std::mutex> lock(mu_);
    slots[device] = std::make_shared<Stream>(device, StreamKind::kPerThread, 0, 0, next_stream_id_++);
    Register(slots[device]);
  }
  return slots[device];
}

std::shared_ptr<Stream> Runtime::Resolve(cudaStream_t handle, DefaultStream default_stream) {
  const int device = current_device();
  if (device >= device_count_) return nullptr;
  if (handle == cudaStreamPerThread || (handle == nullptr && default_stream == DefaultStream::kPerThread)) {
    return PerThread(device);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (handle == nullptr || handle == cudaStreamLegacy) return LegacyLocked(device);
  auto it = created_.find(reinterpret_cast<const Stream*>(handle));
  return it == created_.end() ? nullptr : it->second;
}

std::shared_ptr<Stream> Runtime::CreateStream(unsigned flags, int priority) {
  const int device = current_device();
  if (device >= device_count_) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  auto stream = std::make_shared<Stream>(device, StreamKind::kCreated, flags, priority, next_stream_id_++);
  created_.emplace(stream.get(), stream);
  Register(stream);
  return stream;
}

bool Runtime::DestroyStream(cudaStream_t handle) {
  std::shared_ptr<Stream> stream;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = created_.find(reinterpret_cast<const Stream*>(handle));
    if (it == created_.end()) return false;
    stream = std::move(it->second);
    created_.erase(it);
  }
  Captures::Get().Forget(stream.get());
  // Like cudaStreamDestroy, pending work still completes; the worker then exits.
  stream->Retire();
  return true;
}

std::vector<StreamPoint> Runtime::LegacyOrdering(const Stream& stream) {
  std::vector<StreamPoint> after;
  if (stream.kind() != StreamKind::kLegacy && !stream.blocking()) return after;
  std::lock_guard<std::mutex> lock(mu_);
  Device& d = devices_[stream.device()];
  if (stream.kind() == StreamKind::kLegacy) {
    for (auto it = d.others.begin(); it != d.others.end();) {
      std::shared_ptr<Stream> other = it->lock();
      if (!other) {
        it = d.others.erase(it);
        continue;
      }
      if (other->blocking()) after.push_back(other->Tail());
      ++it;
    }
  } else if (d.legacy) {
    after.push_back(d.legacy->Tail());
  }
  return after;
}

cudaError_t Runtime::Submit(const std::shared_ptr<Stream>& stream, NodeAction action, bool trivial,
                            uint64_t* ticket, std::vector<StreamPoint> after) {
  if (ticket) *ticket = 0;
  if (stream->kind() == StreamKind::kLegacy) {
    if (cudaError_t e = Captures::Get().CheckLegacyUse(stream->device(), /*invalidate=*/true); e != cudaSuccess) {
      return e;
    }
  }
  cudaError_t captured = cudaSuccess;
  if (Captures::Get().Record(*stream, action, &captured)) return captured;  // recorded, not run
  std::vector<StreamPoint> ordering = LegacyOrdering(*stream);
  after.insert(after.end(), ordering.begin(), ordering.end());
  std::function<void()> work = std::move(action.work);
  if (!work) work = [] {};  // kernels and empty nodes only keep their place
  uint64_t t = stream->Enqueue(std::move(work), std::move(after), trivial);
  if (ticket) *ticket = t;
  return cudaSuccess;
}

void Runtime::SynchronizeDevice(int device) {
  std::vector<StreamPoint> points;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Device& d = devices_[device];
    if (d.legacy) points.push_back(d.legacy->Tail());
    for (auto& weak : d.others) {
      if (auto s = weak.lock()) points.push_back(s->Tail());
    }
  }
  WaitForAll(points);
}

}  // namespace ncclsim
