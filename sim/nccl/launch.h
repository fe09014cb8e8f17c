// NCCL group semantics and stream enqueueing. Calls record Ops in the calling thread's
// group; the outermost GroupEnd (or the implicit group of a lone call) puts each stream's
// ops on that stream as one host function, which executes them when the stream gets there.
#ifndef NCCLWATCH_SIM_NCCL_LAUNCH_H_
#define NCCLWATCH_SIM_NCCL_LAUNCH_H_

#include <nccl.h>

#include <functional>

#include "ops.h"

namespace ncclsim {

// Records op (inside a group) or launches it at once. Returns the API result.
ncclResult_t SubmitOp(const Op& op);

ncclResult_t GroupStart();
ncclResult_t GroupEnd();
ncclResult_t GroupSimulateEnd(ncclSimInfo_t* info);
bool InGroup();

// A comm init started inside a group; GroupEnd waits for it.
void AddGroupInit(Comm* c);

// Runs fn on c's background worker (nonblocking communicators).
void PostToWorker(Comm* c, std::function<void()> fn);
void StopWorker(Comm* c);

// Blocks until all of c's accepted work has finished (or, if aborted, bailed out).
void WaitIdle(Comm* c);

bool NoopMode();

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_LAUNCH_H_
