// The human-readable companion of a dump (<stem>.txt): the same facts as the JSON, laid
// out for a person reading one rank's file with `less`. Not a parsing target. Every string
// is escaped (core/format/escape.h): a dump's strings come from the job, so a thread name
// must not be able to drive the terminal or fake a line; the JSON keeps them exact.
#ifndef NCCLWATCH_CORE_DUMP_DUMP_TEXT_H_
#define NCCLWATCH_CORE_DUMP_DUMP_TEXT_H_

#include <string>

#include "core/dump/dump.h"

namespace ncclwatch::dump {

std::string RenderDumpText(const RankDump& dump);

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_DUMP_TEXT_H_
