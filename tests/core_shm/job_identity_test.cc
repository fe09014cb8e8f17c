#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "core/shm/job_identity.h"

namespace ncclwatch::shm {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST_CASE("job id precedence: NCCLWATCH_JOB_ID, TORCHELASTIC_RUN_ID, SLURM_JOB_ID, master", "[job_identity]") {
  std::map<std::string, std::string> env = {{"NCCLWATCH_JOB_ID", "mine"},
                                            {"TORCHELASTIC_RUN_ID", "te"},
                                            {"SLURM_JOB_ID", "42"},
                                            {"MASTER_ADDR", "10.0.0.1"},
                                            {"MASTER_PORT", "29500"}};
  CHECK(JobIdFromEnvironment(FakeEnv(env)) == "mine");
  env.erase("NCCLWATCH_JOB_ID");
  CHECK(JobIdFromEnvironment(FakeEnv(env)) == "te");
  env["TORCHELASTIC_RUN_ID"] = "";  // empty counts as unset
  CHECK(JobIdFromEnvironment(FakeEnv(env)) == "42");
  env.erase("SLURM_JOB_ID");
  CHECK(JobIdFromEnvironment(FakeEnv(env)) == "10.0.0.1_29500");
  env.erase("MASTER_PORT");
  CHECK(JobIdFromEnvironment(FakeEnv(env)) == "default");
}

TEST_CASE("rank comes from torchrun, then SLURM, then Open MPI", "[job_identity]") {
  std::map<std::string, std::string> env = {{"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "8"},
                                            {"OMPI_COMM_WORLD_RANK", "6"}};
  RankIdentity id = RankFromEnvironment(FakeEnv(env));
  CHECK(id.global_rank == 5);
  CHECK(id.local_rank == 1);
  CHECK(id.world_size == 8);
  CHECK(id.source == RankSource::kSlurm);
  env["RANK"] = "3";
  env["WORLD_SIZE"] = "4";
  id = RankFromEnvironment(FakeEnv(env));
  CHECK(id.global_rank == 3);
  CHECK(id.local_rank == -1);
  CHECK(id.world_size == 4);
  CHECK(id.source == RankSource::kTorchrun);
  id = RankFromEnvironment(FakeEnv({{"OMPI_COMM_WORLD_RANK", "6"}, {"RANK", "garbage"}}));
  CHECK(id.global_rank == 6);
  CHECK(id.source == RankSource::kOpenMpi);
  id = RankFromEnvironment(FakeEnv({}));
  CHECK(id.global_rank == -1);
  CHECK(id.source == RankSource::kUnknown);
}

}  // namespace
}  // namespace ncclwatch::shm
