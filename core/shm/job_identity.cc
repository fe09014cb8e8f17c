#include "core/shm/job_identity.h"

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "core/shm/segment_name.h"

namespace ncclwatch::shm {
namespace {

const char* NonEmpty(const EnvLookup& env, const char* name) {
  const char* value = env(name);
  return (value != nullptr && value[0] != '\0') ? value : nullptr;
}

int IntOr(const EnvLookup& env, const char* name, int fallback) {
  const char* value = NonEmpty(env, name);
  if (value == nullptr) return fallback;
  int parsed = 0;
  const char* end = value + std::strlen(value);
  const auto [stop, ec] = std::from_chars(value, end, parsed);
  return (ec == std::errc() && stop == end && parsed >= 0) ? parsed : fallback;
}

bool TryLauncher(const EnvLookup& env, const char* rank, const char* local, const char* world, RankSource source,
                 RankIdentity* out) {
  const int global_rank = IntOr(env, rank, -1);
  if (global_rank < 0) return false;
  out->global_rank = global_rank;
  out->local_rank = IntOr(env, local, -1);
  out->world_size = IntOr(env, world, -1);
  out->source = source;
  return true;
}

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

std::string JobIdFromEnvironment(const EnvLookup& env) {
  for (const char* name : {"NCCLWATCH_JOB_ID", "TORCHELASTIC_RUN_ID", "SLURM_JOB_ID"}) {
    if (const char* value = NonEmpty(env, name)) return SanitizeJobId(value);
  }
  const char* addr = NonEmpty(env, "MASTER_ADDR");
  const char* port = NonEmpty(env, "MASTER_PORT");
  if (addr != nullptr && port != nullptr) return SanitizeJobId(std::string(addr) + ":" + port);
  return SanitizeJobId("");
}

RankIdentity RankFromEnvironment(const EnvLookup& env) {
  RankIdentity id;
  if (TryLauncher(env, "RANK", "LOCAL_RANK", "WORLD_SIZE", RankSource::kTorchrun, &id)) return id;
  if (TryLauncher(env, "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", RankSource::kSlurm, &id)) return id;
  if (TryLauncher(env, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
                  RankSource::kOpenMpi, &id)) {
    return id;
  }
  return RankIdentity{};
}

}  // namespace ncclwatch::shm
