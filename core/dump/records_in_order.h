// A communicator's ops in the order its rank issued them. The model keeps collectives and
// point-to-point ops apart (detect::CommFacts::records / p2p_records: their numbers count
// differently); a dump file keeps them in one "records" list, in the ring's order, and the
// text and trace views draw them in that order too.
#ifndef NCCLWATCH_CORE_DUMP_RECORDS_IN_ORDER_H_
#define NCCLWATCH_CORE_DUMP_RECORDS_IN_ORDER_H_

#include <vector>

#include "core/detect/facts.h"

namespace ncclwatch::dump {

// Both lists merged by enqueue time; on a tie (or an unset time) the collective comes first.
// Each list keeps its own order, so a file the watchdog wrote (in enqueue order) reads back
// and writes again unchanged. O(n).
std::vector<const detect::RecordFacts*> RecordsInIssueOrder(const detect::CommFacts& comm);

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_RECORDS_IN_ORDER_H_
