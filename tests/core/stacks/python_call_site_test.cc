// The "innermost user frame" rule of NCCLWATCH_CALL_SITES (core/stacks/python_call_site.h).
#include "core/stacks/python_call_site.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace ncclwatch {
namespace {

TEST_CASE("torch, the standard library, ncclwatch and pseudo-files are not user code", "[call-site]") {
  CHECK(IsLibraryPythonFile("/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py"));
  CHECK(IsLibraryPythonFile("/usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py"));
  CHECK(IsLibraryPythonFile("/root/.pyenv/versions/3.11.7/lib/python3.11/functools.py"));
  CHECK(IsLibraryPythonFile("/usr/lib/python3.11/json/decoder.py"));
  CHECK(IsLibraryPythonFile("/venv/lib/python3.11/site-packages/ncclwatch/hook.py"));
  CHECK(IsLibraryPythonFile("<frozen importlib._bootstrap>"));
  CHECK(IsLibraryPythonFile("<string>"));
  CHECK(IsLibraryPythonFile(""));
}

TEST_CASE("the job's files and third-party libraries are user code", "[call-site]") {
  CHECK_FALSE(IsLibraryPythonFile("/home/me/train.py"));
  CHECK_FALSE(IsLibraryPythonFile("train.py"));
  CHECK_FALSE(IsLibraryPythonFile("/venv/lib/python3.11/site-packages/lightning/trainer.py"));
  CHECK_FALSE(IsLibraryPythonFile("/usr/lib/python3/dist-packages/deepspeed/engine.py"));
  // Names that only look like the excluded ones.
  CHECK_FALSE(IsLibraryPythonFile("/home/me/torch/train.py"));
  CHECK_FALSE(IsLibraryPythonFile("/venv/lib/python3.11/site-packages/torchvision/ops.py"));
  CHECK_FALSE(IsLibraryPythonFile("/home/me/lib/pythonic/train.py"));
}

// The walk (preload/call_sites/python_frames_311.cc) takes the first frame, innermost first, that is not
// library code.
std::string FirstUserFile(const std::vector<std::string>& innermost_first) {
  for (const std::string& file : innermost_first) {
    if (!IsLibraryPythonFile(file)) return file;
  }
  return {};
}

TEST_CASE("the call site is the innermost user frame of a torch collective's stack", "[call-site]") {
  CHECK(FirstUserFile({"/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py",
                       "/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py",
                       "/usr/lib/python3.11/contextlib.py", "/job/model.py", "/job/train.py",
                       "<frozen runpy>"}) == "/job/model.py");
  CHECK(FirstUserFile({"/venv/lib/python3.11/site-packages/torch/nn/parallel/distributed.py",
                       "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", "<frozen runpy>"})
            .empty());
}

TEST_CASE("the call site reads file:line in function", "[call-site]") {
  CHECK(CallSiteText("/job/train.py", 88, "step") == "/job/train.py:88 in step");
  CHECK(CallSiteText("train.py", 1, "<module>") == "train.py:1 in <module>");
}

}  // namespace
}  // namespace ncclwatch
