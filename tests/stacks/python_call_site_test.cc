// The "innermost user frame" rule of NCCLWATCH_CALL_SITES (core/stacks/python_call_site.h).
#include "core/stacks/python_call_site.h"

#include <catch2/catch.hpp>

#include <string>

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

TEST_CASE("the call site is the innermost user frame of a one-thread traceback", "[call-site]") {
  const std::string text =
      "Stack (most recent call first):\n"
      "  File \"/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py\", line 2501 in broadcast\n"
      "  File \"/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py\", line 81 in wrapper\n"
      "  File \"/usr/lib/python3.11/contextlib.py\", line 81 in inner\n"
      "  File \"/job/train.py\", line 88 in step\n"
      "  File \"/job/train.py\", line 120 in <module>\n";
  CHECK(CallSiteFromTraceback(text) == "/job/train.py:88 in step");
}

TEST_CASE("no user frame, no call site", "[call-site]") {
  CHECK(CallSiteFromTraceback("").empty());
  CHECK(CallSiteFromTraceback("Stack (most recent call first):\n"
                              "  File \"/venv/lib/python3.11/site-packages/torch/x.py\", line 1 in f\n"
                              "  File \"<frozen runpy>\", line 88 in _run_code\n")
            .empty());
}

TEST_CASE("a last line cut by the read bound is not taken for a frame", "[call-site]") {
  const std::string text =
      "Stack (most recent call first):\n"
      "  File \"/venv/lib/python3.11/site-packages/torch/x.py\", line 1 in f\n"
      "  File \"/job/train.py\", line 88 in st";
  CHECK(CallSiteFromTraceback(text).empty());
  CHECK(CallSiteFromTraceback(text + "ep\n") == "/job/train.py:88 in step");
}

}  // namespace
}  // namespace ncclwatch
