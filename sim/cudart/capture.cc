#include "capture.h"

#include <algorithm>
#include <utility>

#include "event.h"

namespace ncclsim {
namespace {

thread_local cudaStreamCaptureMode thread_capture_mode = cudaStreamCaptureModeGlobal;

bool IsMember(const std::vector<cudaGraphNode_t>& set, cudaGraphNode_t node) {
  return std::find(set.begin(), set.end(), node) != set.end();
}

void AddAll(std::vector<cudaGraphNode_t>* set, const std::vector<cudaGraphNode_t>& more) {
  for (cudaGraphNode_t n : more) {
    if (!IsMember(*set, n)) set->push_back(n);
  }
}

}  // namespace

Captures& Captures::Get() {
  static auto* captures = new Captures();  // never destroyed: workers may outlive exit
  return *captures;
}

cudaStreamCaptureMode Captures::ExchangeThreadMode(cudaStreamCaptureMode mode) {
  return std::exchange(thread_capture_mode, mode);
}

Captures::StreamState* Captures::FindLocked(const Stream& stream) {
  auto it = streams_.find(&stream);
  return it == streams_.end() ? nullptr : &it->second;
}

void Captures::JoinLocked(const std::shared_ptr<Stream>& stream, const std::shared_ptr<CaptureSequence>& sequence,
                          std::vector<cudaGraphNode_t> dependencies) {
  StreamState& state = streams_[stream.get()];
  state.stream = stream;
  state.sequence = sequence;
  state.dependencies = std::move(dependencies);
}

void Captures::InvalidateLocked(CaptureSequence* sequence) { sequence->invalidated = true; }

void Captures::CloseLocked(const std::shared_ptr<CaptureSequence>& sequence) {
  sequence->ended = true;
  for (auto it = streams_.begin(); it != streams_.end();) {
    it = it->second.sequence == sequence ? streams_.erase(it) : std::next(it);
  }
  sequences_.erase(std::remove(sequences_.begin(), sequences_.end(), sequence), sequences_.end());
  live_.store(static_cast<int>(sequences_.size()), std::memory_order_release);
}

cudaError_t Captures::Begin(const std::shared_ptr<Stream>& stream, cudaStreamCaptureMode mode, cudaGraph_t target,
                            const cudaGraphNode_t* dependencies, size_t count) {
  if (stream->kind() == StreamKind::kLegacy) return cudaErrorStreamCaptureUnsupported;
  std::lock_guard<std::mutex> lock(mu_);
  if (FindLocked(*stream) != nullptr) return cudaErrorIllegalState;
  auto sequence = std::make_shared<CaptureSequence>();
  sequence->id = next_id_++;
  sequence->mode = mode;
  sequence->owner = std::this_thread::get_id();
  sequence->origin = stream.get();
  sequence->callers_graph = target != nullptr;
  sequence->graph = target != nullptr ? target : Graph::Create();
  sequences_.push_back(sequence);
  live_.store(static_cast<int>(sequences_.size()), std::memory_order_release);
  JoinLocked(stream, sequence, std::vector<cudaGraphNode_t>(dependencies, dependencies + count));
  return cudaSuccess;
}

cudaError_t Captures::End(const Stream& stream, cudaGraph_t* graph) {
  std::lock_guard<std::mutex> lock(mu_);
  StreamState* state = FindLocked(stream);
  if (state == nullptr) return cudaErrorIllegalState;
  std::shared_ptr<CaptureSequence> sequence = state->sequence;
  if (sequence->origin != &stream) {
    InvalidateLocked(sequence.get());
    return cudaErrorStreamCaptureUnmatched;
  }
  if (sequence->mode != cudaStreamCaptureModeRelaxed && sequence->owner != std::this_thread::get_id()) {
    return cudaErrorStreamCaptureWrongThread;
  }
  cudaError_t result = sequence->invalidated ? cudaErrorStreamCaptureInvalidated : cudaSuccess;
  Graph* g = Graph::Lookup(sequence->graph);
  if (result == cudaSuccess) {
    // Every other stream's last work must be an ancestor of the origin's: joined back.
    const std::vector<cudaGraphNode_t> joined = state->dependencies;
    for (const auto& [s, other] : streams_) {
      if (other.sequence != sequence || s == &stream) continue;
      for (cudaGraphNode_t n : other.dependencies) {
        if (!g->Reaches(n, joined)) result = cudaErrorStreamCaptureUnjoined;
      }
    }
  }
  CloseLocked(sequence);
  if (result != cudaSuccess) {
    if (!sequence->callers_graph) Graph::Destroy(sequence->graph);
    *graph = nullptr;
    return result;
  }
  *graph = sequence->graph;
  return cudaSuccess;
}

cudaError_t Captures::Query(const Stream& stream, CaptureInfo* info) {
  *info = CaptureInfo{};
  if (stream.kind() == StreamKind::kLegacy) return CheckLegacyUse(stream.device(), /*invalidate=*/false);
  if (!Any()) return cudaSuccess;
  std::lock_guard<std::mutex> lock(mu_);
  StreamState* state = FindLocked(stream);
  if (state == nullptr) return cudaSuccess;
  const CaptureSequence& sequence = *state->sequence;
  info->id = sequence.id;
  if (sequence.invalidated) {
    info->status = cudaStreamCaptureStatusInvalidated;
    return cudaSuccess;
  }
  info->status = cudaStreamCaptureStatusActive;
  info->graph = sequence.graph;
  state->edges.assign(state->dependencies.size(), cudaGraphEdgeData{});
  info->dependencies = state->dependencies.data();
  info->edges = state->edges.data();
  info->count = state->dependencies.size();
  return cudaSuccess;
}

cudaError_t Captures::UpdateDependencies(const Stream& stream, const cudaGraphNode_t* dependencies, size_t count,
                                         unsigned flags) {
  std::lock_guard<std::mutex> lock(mu_);
  StreamState* state = FindLocked(stream);
  if (state == nullptr) return cudaErrorIllegalState;
  if (state->sequence->invalidated) return cudaErrorStreamCaptureInvalidated;
  Graph* g = Graph::Lookup(state->sequence->graph);
  std::vector<cudaGraphNode_t> given(dependencies, dependencies + count);
  for (cudaGraphNode_t n : given) {
    if (!g->Owns(n)) return cudaErrorInvalidValue;
  }
  if (flags == cudaStreamSetCaptureDependencies) state->dependencies.clear();
  AddAll(&state->dependencies, given);
  return cudaSuccess;
}

bool Captures::Record(const Stream& stream, const NodeAction& action, cudaError_t* result) {
  if (!Any()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  StreamState* state = FindLocked(stream);
  if (state == nullptr) return false;
  *result = RecordLocked(state, action);
  return true;
}

cudaError_t Captures::RecordLocked(StreamState* state, const NodeAction& action) {
  if (state->sequence->invalidated) return cudaErrorStreamCaptureInvalidated;
  Graph* g = Graph::Lookup(state->sequence->graph);
  cudaGraphNode_t node = g->Add(action, state->dependencies.data(), state->dependencies.size());
  if (node == nullptr) {
    // A dependency was removed from the graph behind the capture's back.
    InvalidateLocked(state->sequence.get());
    return cudaErrorStreamCaptureInvalidated;
  }
  state->dependencies.assign(1, node);
  return cudaSuccess;
}

bool Captures::Refuse(const Stream& stream, cudaError_t* result) {
  if (!Any()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  StreamState* state = FindLocked(stream);
  if (state == nullptr) return false;
  *result = state->sequence->invalidated ? cudaErrorStreamCaptureInvalidated : cudaErrorStreamCaptureUnsupported;
  InvalidateLocked(state->sequence.get());
  return true;
}

bool Captures::RecordEvent(const Stream& stream, Event* event, unsigned flags, cudaError_t* result) {
  if (!Any()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  StreamState* state = FindLocked(stream);
  if (state == nullptr) return false;
  if (state->sequence->invalidated) {
    *result = cudaErrorStreamCaptureInvalidated;
    return true;
  }
  if (flags & cudaEventRecordExternal) {
    NodeAction action;
    action.type = cudaGraphNodeTypeEventRecord;
    action.event = reinterpret_cast<cudaEvent_t>(event);
    *result = RecordLocked(state, action);
    return true;
  }
  event->SetCaptured(state->sequence, state->dependencies);
  *result = cudaSuccess;
  return true;
}

bool Captures::WaitEvent(const std::shared_ptr<Stream>& stream, Event* event, unsigned flags, cudaError_t* result) {
  if (!Any()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  StreamState* state = FindLocked(*stream);
  std::vector<cudaGraphNode_t> nodes;
  std::shared_ptr<CaptureSequence> recorded_in = event->Captured(&nodes);
  *result = cudaSuccess;
  if (recorded_in == nullptr) {
    if (state == nullptr) return false;  // neither side captures: an ordinary wait
    if (state->sequence->invalidated) {
      *result = cudaErrorStreamCaptureInvalidated;
      return true;
    }
    if ((flags & cudaEventWaitExternal) == 0) {
      // Only in-stream order may cross into a capture; an outside event needs the flag.
      if (event->point().stream) {
        InvalidateLocked(state->sequence.get());
        *result = cudaErrorStreamCaptureIsolation;
      }
      return true;  // a never-recorded event is no dependency at all
    }
    NodeAction action;
    action.type = cudaGraphNodeTypeWaitEvent;
    action.event = reinterpret_cast<cudaEvent_t>(event);
    *result = RecordLocked(state, action);
    return true;
  }
  if (recorded_in->invalidated) {
    if (state != nullptr) InvalidateLocked(state->sequence.get());
    *result = cudaErrorStreamCaptureInvalidated;
    return true;
  }
  if (state == nullptr) {
    if (stream->kind() == StreamKind::kLegacy) {
      InvalidateLocked(recorded_in.get());
      *result = cudaErrorStreamCaptureImplicit;
      return true;
    }
    JoinLocked(stream, recorded_in, std::move(nodes));  // the stream joins the capture (a fork)
    return true;
  }
  if (state->sequence != recorded_in) {
    InvalidateLocked(state->sequence.get());
    InvalidateLocked(recorded_in.get());
    *result = cudaErrorStreamCaptureMerge;
    return true;
  }
  if (state->sequence->invalidated) {
    *result = cudaErrorStreamCaptureInvalidated;
    return true;
  }
  AddAll(&state->dependencies, nodes);  // a join
  return true;
}

cudaError_t Captures::CheckLegacyUse(int device, bool invalidate) {
  if (!Any()) return cudaSuccess;
  std::lock_guard<std::mutex> lock(mu_);
  cudaError_t result = cudaSuccess;
  for (auto& [s, state] : streams_) {
    if (state.stream->device() != device || !state.stream->blocking()) continue;
    if (invalidate) InvalidateLocked(state.sequence.get());
    result = cudaErrorStreamCaptureImplicit;
  }
  return result;
}

cudaError_t Captures::CheckUnsafeCall() {
  if (!Any()) return cudaSuccess;
  const cudaStreamCaptureMode mode = thread_capture_mode;
  if (mode == cudaStreamCaptureModeRelaxed) return cudaSuccess;
  const std::thread::id me = std::this_thread::get_id();
  std::lock_guard<std::mutex> lock(mu_);
  cudaError_t result = cudaSuccess;
  for (auto& sequence : sequences_) {
    const bool own = sequence->owner == me && sequence->mode != cudaStreamCaptureModeRelaxed;
    const bool others_global = mode == cudaStreamCaptureModeGlobal && sequence->owner != me &&
                               sequence->mode == cudaStreamCaptureModeGlobal;
    if (!own && !others_global) continue;
    InvalidateLocked(sequence.get());
    result = cudaErrorStreamCaptureUnsupported;
  }
  return result;
}

cudaError_t Captures::CheckStreamSync(const Stream& stream) {
  if (!Any()) return cudaSuccess;
  std::lock_guard<std::mutex> lock(mu_);
  StreamState* state = FindLocked(stream);
  if (state == nullptr) return cudaSuccess;
  InvalidateLocked(state->sequence.get());
  return cudaErrorStreamCaptureUnsupported;
}

cudaError_t Captures::CheckDeviceSync(int device) {
  if (!Any()) return cudaSuccess;
  std::lock_guard<std::mutex> lock(mu_);
  cudaError_t result = cudaSuccess;
  for (auto& [s, state] : streams_) {
    if (state.stream->device() != device) continue;
    InvalidateLocked(state.sequence.get());
    result = cudaErrorStreamCaptureUnsupported;
  }
  return result;
}

cudaError_t Captures::CheckEventUse(Event* event) {
  if (!Any()) return cudaSuccess;
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<CaptureSequence> recorded_in = event->Captured(nullptr);
  if (recorded_in == nullptr) return cudaSuccess;
  InvalidateLocked(recorded_in.get());
  return cudaErrorCapturedEvent;
}

void Captures::Forget(const Stream* stream) {
  if (!Any()) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(stream);
  if (it == streams_.end()) return;
  std::shared_ptr<CaptureSequence> sequence = it->second.sequence;
  InvalidateLocked(sequence.get());
  streams_.erase(it);
  // Without its origin the capture can never end; it ends now, so that its mode stops
  // forbidding other threads' calls.
  if (sequence->origin == stream) {
    CloseLocked(sequence);
    if (!sequence->callers_graph) Graph::Destroy(sequence->graph);
  }
}

bool Captures::CapturesInto(cudaGraph_t graph) {
  if (!Any()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  return std::any_of(sequences_.begin(), sequences_.end(), [graph](const auto& s) { return s->graph == graph; });
}

}  // namespace ncclsim
