// Shares one ncclUniqueId among the ranks of a torchrun-style job.
//
// Rank 0 creates the id and serves it on MASTER_ADDR:MASTER_PORT to the other WORLD_SIZE-1 ranks,
// the way PyTorch passes it through its TCPStore. Works the same over real NCCL and over the sim.
#pragma once

#include <nccl.h>

#include <string>

namespace examples {

struct JobEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
};

// Reads RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT. Missing values default to a
// single-rank job. Returns false and fills *error on malformed values.
bool ReadJobEnv(JobEnv* env, std::string* error);

// Rank 0: calls ncclGetUniqueId and sends it to every other rank. Other ranks: receive it,
// retrying the connection for up to timeout_sec. Returns false and fills *error on failure.
bool ExchangeUniqueId(const JobEnv& env, ncclUniqueId* id, int timeout_sec, std::string* error);

}  // namespace examples
