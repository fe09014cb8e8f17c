// An in-order asynchronous work queue standing in for a CUDA stream.
//
// Work items run one after another, in enqueue order, on a worker thread the stream starts the
// first time it needs one. A work item may block for as long as it likes (the NCCL sim blocks in
// host functions for the length of a collective); queries and waits from other threads never
// need the worker, so they keep answering meanwhile.
//
// Every enqueued item gets a ticket (1, 2, ...); a stream has completed ticket t once items
// 1..t have run. Cross-stream ordering is expressed as dependencies: (stream, ticket) pairs that
// must be complete before an item starts.
#ifndef NCCLWATCH_SIM_CUDART_STREAM_H_
#define NCCLWATCH_SIM_CUDART_STREAM_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace ncclsim {

class Stream;

struct StreamPoint {
  std::shared_ptr<Stream> stream;
  uint64_t ticket = 0;
};

enum class StreamKind { kLegacy, kPerThread, kCreated };

class Stream : public std::enable_shared_from_this<Stream> {
 public:
  Stream(int device, StreamKind kind, unsigned flags, int priority, uint64_t id);
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int device() const { return device_; }
  StreamKind kind() const { return kind_; }
  unsigned flags() const { return flags_; }
  int priority() const { return priority_; }
  uint64_t id() const { return id_; }
  // Blocking streams take part in legacy default-stream synchronisation.
  bool blocking() const;

  // Appends `work`, to start after `after` are complete. Work that is cheap, never blocks and
  // takes no stream lock (`trivial`) runs on the caller's thread when the stream is idle and
  // `after` is complete, so short programs never start a thread. Returns the item's ticket.
  uint64_t Enqueue(std::function<void()> work, std::vector<StreamPoint> after, bool trivial);

  uint64_t last_ticket() const;
  bool IsComplete(uint64_t ticket) const;
  // Blocks until `ticket` is complete.
  void WaitFor(uint64_t ticket) const;
  // The point a later item must wait for to follow everything enqueued so far.
  StreamPoint Tail();

  // No more work will come; the worker exits once the queue drains.
  void Retire();

 private:
  struct Item {
    uint64_t ticket;
    std::function<void()> work;
    std::vector<StreamPoint> after;
  };
  void StartWorkerLocked();
  void RunWorker();

  const int device_;
  const StreamKind kind_;
  const unsigned flags_;
  const int priority_;
  const uint64_t id_;

  mutable std::mutex mu_;
  mutable std::condition_variable completed_cv_;
  std::condition_variable work_cv_;
  std::deque<Item> queue_;
  uint64_t enqueued_ = 0;
  uint64_t completed_ = 0;
  bool worker_running_ = false;
  bool retired_ = false;
};

// Blocks until every point is complete.
void WaitForAll(const std::vector<StreamPoint>& points);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_STREAM_H_
