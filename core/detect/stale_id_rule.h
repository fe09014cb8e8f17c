// Rule for kind "stale_unique_id": ranks that initialise a communicator from a unique id that
// was already used up, while their peers initialise a new one.
//
// Why it is a kind of its own: NCCL draws a fresh unique id (and so a fresh commHash) for every
// root communicator, and an id serves one initialisation: once its ranks have initialised, its
// root no longer listens. A rank that initialises the same id again waits for peers who will
// never come, and the peers it should have met wait in the init of another communicator for a
// rank that never joins it. Judged one communicator at a time, that reads as two init hangs
// on ranks that look fine, each blaming the other; the cause is the id. The usual source is a
// key-value store that outlives the group that wrote the id: torch publishes a new group's id
// under the same store key as the group before it, torchrun's store outlives a group and a
// restart, and a non-root rank that reads the key before the new root writes it gets the old
// id (docs/torchrun-restart-race.md).
//
// Condition: a live rank has been in the init of a root communicator H (made from a unique id,
// not split or shrunk: a shrink's hash legitimately repeats) for at least two poll intervals
// (live; offline at once), and H was used up before that init began. Used up, as the facts can
// prove it:
//   * the same process initialised H before (an earlier slot of H whose init finished before
//     this one began: one clock);
//   * a process of an earlier attempt of the job held H (torchrun restart, SLURM requeue);
//   * a process on the same host held H, finished its init and exited before this init began;
//   * another process finished its init of H and has left it (destroyed, finalized, aborted,
//     revoked) while this rank is still in its init: ranks leave an init together, within
//     milliseconds of each other, so a rank still in it two polls later is in another one.
// Culprits: the ranks of H in such an init. Others: the ranks initialising, at the same time,
// another root communicator of the same size and name (the one the culprits should have
// joined): the verdict explains that communicator too, which then gets no verdict of its own.
#ifndef NCCLWATCH_CORE_DETECT_STALE_ID_RULE_H_
#define NCCLWATCH_CORE_DETECT_STALE_ID_RULE_H_

#include <cstdint>
#include <set>
#include <vector>

#include "core/detect/comm_group.h"
#include "core/detect/detect_config.h"
#include "core/detect/facts.h"
#include "core/detect/verdict.h"

namespace ncclwatch::detect {

struct StaleIdVerdicts {
  std::vector<Verdict> verdicts;   // one per stale communicator
  std::set<uint64_t> explained;    // the stale communicators and those their peers initialise
};

StaleIdVerdicts CheckStaleUniqueIds(const JobFacts& facts, const std::vector<CommGroup>& groups,
                                    const DetectConfig& config, uint64_t now_ns);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_STALE_ID_RULE_H_
