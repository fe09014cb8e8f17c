#include "core/detect/p2p_op.h"

namespace ncclwatch::detect {

P2PDirection P2PDirectionOf(std::string_view op) {
  if (op == "Send" || op == "PutSignal" || op == "Signal") return P2PDirection::kSend;
  if (op == "Recv" || op == "WaitSignal") return P2PDirection::kRecv;
  return P2PDirection::kNone;
}

}  // namespace ncclwatch::detect
