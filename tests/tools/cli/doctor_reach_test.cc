// `ncclwatch doctor --pid`: which NCCL a running process loaded, by which path, and whether
// ncclwatch reaches it, over fake programs (tests/tools/cli/fake_*.c) with and without an (empty)
// libncclwatch.so preloaded.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "tests/tools/cli/run_process.h"
#include "tests/tools/cli/running_app.h"

using ncclwatch::testing::NcclwatchBinary;
using ncclwatch::testing::ProcessResult;
using ncclwatch::testing::RunningApp;
using ncclwatch::testing::RunProcess;

namespace {

std::string EnvPath(const char* name) {
  const char* value = std::getenv(name);
  if (!value) FAIL(std::string(name) + " is not set (run through ctest)");
  return value;
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// doctor --pid on `app`, retried (up to 5 s) until `ready` shows: the child has then run the
// dynamic loader and its own dlopen.
std::string DoctorOnceReady(const RunningApp& app, const std::string& ready) {
  ProcessResult r;
  for (int attempt = 0; attempt < 100; ++attempt) {
    r = RunProcess({NcclwatchBinary(), "doctor", "--pid", std::to_string(app.pid())});
    if (Has(r.out, ready)) break;
    usleep(50'000);
  }
  CHECK(r.exit_status == 0);
  return r.out;
}

std::map<std::string, std::string> Preloaded() { return {{"LD_PRELOAD", EnvPath("FAKE_NCCLWATCH_LIB")}}; }

}  // namespace

TEST_CASE("doctor --pid: NCCL that the program NEEDs, found through its RUNPATH", "[cli][doctor]") {
  SECTION("preloaded: reached") {
    RunningApp app({EnvPath("FAKE_DYNAMIC_APP"), "wait"}, Preloaded());
    std::string out = DoctorOnceReady(app, "NCCL loaded");
    CHECK(Has(out, "libncclwatch.so is loaded in pid"));
    CHECK(Has(out, "(preloaded)"));
    CHECK(Has(out, "libnccl.so.2 (2.27.3)"));  // from the library's banner
    CHECK(Has(out, "came by:     NEEDED of the main program " + EnvPath("FAKE_DYNAMIC_APP")));
    CHECK((Has(out, "found through RUNPATH") || Has(out, "found through RPATH")));
    CHECK(Has(out, "reached:     yes: its callers bind to ncclwatch's exports"));
  }
  SECTION("not preloaded: not reached") {
    RunningApp app({EnvPath("FAKE_DYNAMIC_APP"), "wait"}, {});
    std::string out = DoctorOnceReady(app, "NCCL loaded");
    CHECK(Has(out, "libncclwatch.so is NOT loaded"));
    CHECK(Has(out, "reached:     NO: libncclwatch.so is not loaded"));
  }
  SECTION("preloaded after a preloaded libnccl: not reached") {
    RunningApp app({EnvPath("FAKE_DYNAMIC_APP"), "wait"},
                   {{"LD_PRELOAD", EnvPath("FAKE_NCCL_LIB") + ":" + EnvPath("FAKE_NCCLWATCH_LIB")}});
    std::string out = DoctorOnceReady(app, "NCCL loaded");
    CHECK(Has(out, "(but not preloaded)"));
    CHECK(Has(out, "came by:     LD_PRELOAD"));
    CHECK(Has(out, "reached:     NO: libncclwatch.so is mapped but not preloaded ahead of NCCL"));
  }
}

TEST_CASE("doctor --pid: NCCL dlopen'ed by path is in no NEEDED list, reached by the dlsym hook", "[cli][doctor]") {
  RunningApp app({EnvPath("FAKE_DLOPEN_APP"), EnvPath("FAKE_NCCL_LIB")}, Preloaded());
  std::string out = DoctorOnceReady(app, "NCCL loaded");
  CHECK(Has(out, "NCCL loaded:   " + EnvPath("FAKE_NCCL_LIB")));
  CHECK(Has(out, "came by:     dlopen (no loaded object lists it as NEEDED"));
  CHECK(Has(out, "reached:     yes, through the dlsym hook"));
  CHECK_FALSE(Has(out, "statically"));
}

TEST_CASE("doctor --pid: NCCL linked statically is never reached, even preloaded", "[cli][doctor]") {
  RunningApp app({EnvPath("FAKE_STATIC_WAITING_APP")}, Preloaded());
  std::string out = DoctorOnceReady(app, "libncclwatch.so is loaded");  // ld.so has run
  CHECK(Has(out, "libncclwatch.so is loaded in pid"));
  CHECK(Has(out, "has NCCL linked statically into " + EnvPath("FAKE_STATIC_WAITING_APP")));
  CHECK(Has(out, "CANNOT interpose it, never"));
  CHECK_FALSE(Has(out, "NCCL loaded"));
}
