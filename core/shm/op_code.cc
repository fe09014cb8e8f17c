#include "core/shm/op_code.h"

namespace ncclwatch::shm {

const char* OpName(Op op) {
  switch (op) {
    case Op::kNone: return "None";
    case Op::kAllReduce: return "AllReduce";
    case Op::kBroadcast: return "Broadcast";
    case Op::kReduce: return "Reduce";
    case Op::kAllGather: return "AllGather";
    case Op::kReduceScatter: return "ReduceScatter";
    case Op::kAlltoAll: return "AlltoAll";
    case Op::kGather: return "Gather";
    case Op::kScatter: return "Scatter";
    case Op::kSend: return "Send";
    case Op::kRecv: return "Recv";
    case Op::kPutSignal: return "PutSignal";
    case Op::kSignal: return "Signal";
    case Op::kWaitSignal: return "WaitSignal";
  }
  return "Unknown";
}

}  // namespace ncclwatch::shm
