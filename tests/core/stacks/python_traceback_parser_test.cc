#include "core/stacks/python_traceback_parser.h"

#include <catch2/catch.hpp>

#include "core/stacks/symbolizer.h"

namespace ncclwatch {
namespace {

TEST_CASE("parses threads, the current marker and frames in order", "[python]") {
  const char* text =
      "Thread 0x00007f00000000aa (most recent call first):\n"
      "  File \"/job/data.py\", line 88 in next_batch\n"
      "  File \"/job/train.py\", line 12 in <module>\n"
      "\n"
      "Current thread 0x00007f00000000bb (most recent call first):\n"
      "  File \"/job/my \\\"odd\\\", line 3 name.py\", line 7 in step\n";
  std::vector<PythonThread> threads = ParsePythonTracebacks(text);
  REQUIRE(threads.size() == 2);
  CHECK(threads[0].thread_id == 0x7f00000000aaULL);
  CHECK_FALSE(threads[0].current);
  REQUIRE(threads[0].frames.size() == 2);
  CHECK(threads[0].frames[0].file == "/job/data.py");
  CHECK(threads[0].frames[0].line == 88);
  CHECK(threads[0].frames[0].function == "next_batch");
  CHECK(threads[0].frames[1].function == "<module>");
  CHECK(threads[1].current);
  REQUIRE(threads[1].frames.size() == 1);
  CHECK(threads[1].frames[0].file == "/job/my \\\"odd\\\", line 3 name.py");
  CHECK(threads[1].frames[0].line == 7);
}

TEST_CASE("skips placeholder and truncation lines", "[python]") {
  const char* text =
      "Thread 0x0000000000000001 (most recent call first):\n"
      "  <no Python frame>\n"
      "Thread 0x0000000000000002 (most recent call first):\n"
      "  File \"a.py\", line 1 in f\n"
      "  ...\n"
      "  <truncated rest of calls>\n"
      "...\n";
  std::vector<PythonThread> threads = ParsePythonTracebacks(text);
  REQUIRE(threads.size() == 2);
  CHECK(threads[0].frames.empty());
  REQUIRE(threads[1].frames.size() == 1);
  CHECK(threads[1].frames[0].function == "f");
}

TEST_CASE("frames before any thread header and empty input yield nothing", "[python]") {
  CHECK(ParsePythonTracebacks("").empty());
  CHECK(ParsePythonTracebacks("  File \"a.py\", line 1 in f\n").empty());
}

TEST_CASE("demangles Itanium names and leaves others alone", "[symbolize]") {
  CHECK(stacks_internal::Demangle("_ZN2ns3fooEv") == "ns::foo()");
  CHECK(stacks_internal::Demangle("plain_c_function") == "plain_c_function");
  CHECK(stacks_internal::Demangle("_Znot-valid") == "_Znot-valid");
}

}  // namespace
}  // namespace ncclwatch
