// The verdict rules, applied to one communicator aligned across all dumps.
//
// In priority order (the first that applies wins), the live detector's order:
//   mismatch        at some collective number the ranks' fingerprints (op, count, datatype,
//                   redop, root) differ, completed or not; culprits are the ranks outside
//                   the largest group, or every rank when there is no unique largest group
//                   (2 ranks, ties), as core/detect/mismatch_rule.cpp names them;
//   init_hang       some rank started init and never finished it;
//   straggler       #S, the lowest collective some rank joined and has not completed, was
//                   not joined by some ranks: they are the culprits; ranks without a dump
//                   are culprits only when every rank with a dump joined #S;
//   collective_hang every rank joined #S and it has not completed on some (usually all) of
//                   them: culprits are the ranks where it has not completed.
// A communicator with nothing in flight and init done gets no verdict.
// rank_exited and sync_stuck cannot be derived from the communicator state alone; the
// analyzer adopts them from the ranks' own verdicts.
#ifndef NCCLWATCH_CORE_ANALYZE_CLASSIFY_H_
#define NCCLWATCH_CORE_ANALYZE_CLASSIFY_H_

#include <optional>
#include <string>

#include "core/analyze/analysis.h"
#include "core/analyze/comm_table.h"

namespace ncclwatch::analyze {

// How much of a verdict to fill in.
enum class RankDetail {
  kFull,     // everything: the verdict that is reported
  kSummary,  // kind, nranks, seq, op and summary are complete, but rank lists made of ranks
             // without a dump stay empty: they can hold 2^20 ranks, and a hostile set can
             // have many such communicators. Costs O(the table's records and dumps).
};

std::optional<MergedVerdict> ClassifyComm(const CommTable& table, RankDetail detail = RankDetail::kFull);

// Lower is more important; unknown kinds sort last.
int KindPriority(const std::string& kind);

// Point-to-point calls legitimately differ between ranks, so they are never compared.
bool IsPointToPoint(const std::string& op);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_CLASSIFY_H_
