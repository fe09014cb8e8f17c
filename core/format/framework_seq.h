// How the framework's number for an op is shown beside ncclwatch's #N. ncclwatch
// numbers every NCCL call on a communicator; a framework numbers its own collectives, and
// issues some as a group of several NCCL calls (torch's all_gather into a list: one broadcast
// per rank). The framework number counts such a group once, as torch's SeqNum and Flight
// Recorder's collective_seq_id do; for a P2P op it is its position among the rank's P2P ops on
// the communicator (FR's p2p_seq_id). Worded "framework seq", not "torch seq": it is counted at
// the NCCL level and equals torch's number on torch (tools/README.md, "Matching Flight
// Recorder"), and means the same counting under any other framework.
#ifndef NCCLWATCH_CORE_FORMAT_FRAMEWORK_SEQ_H_
#define NCCLWATCH_CORE_FORMAT_FRAMEWORK_SEQ_H_

#include <cstdint>
#include <string>

namespace ncclwatch::format {

// " (framework seq 25)" after a collective's #N, " (framework p2p seq 5)" after a P2P op's;
// "" when unknown (0: a dump of an older ncclwatch).
std::string FrameworkSeqNote(uint64_t framework_seq, bool point_to_point);

}  // namespace ncclwatch::format

#endif  // NCCLWATCH_CORE_FORMAT_FRAMEWORK_SEQ_H_
