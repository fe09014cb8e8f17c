#include "core/format/framework_seq.h"

namespace ncclwatch::format {

std::string FrameworkSeqNote(uint64_t framework_seq, bool point_to_point) {
  if (framework_seq == 0) return "";
  return (point_to_point ? " (framework p2p seq " : " (framework seq ") + std::to_string(framework_seq) + ")";
}

}  // namespace ncclwatch::format
