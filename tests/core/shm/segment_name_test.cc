#include <catch2/catch.hpp>

#include <string>

#include "core/shm/segment_name.h"

namespace ncclwatch::shm {
namespace {

TEST_CASE("job ids are sanitized to a safe file-name alphabet", "[segment_name]") {
  CHECK(SanitizeJobId("abc-DEF_1.2") == "abc-DEF_1.2");
  CHECK(SanitizeJobId("host:29500/x y") == "host_29500_x_y");
  CHECK(SanitizeJobId("") == "default");
  CHECK(SanitizeJobId("..") == "default");
  CHECK(SanitizeJobId(std::string(200, 'j')).size() == kMaxJobIdLength);
}

TEST_CASE("segment names round-trip and do not match a job that is a prefix", "[segment_name]") {
  const std::string name = SegmentName(1000, "job.a", 4242, 987654);
  CHECK(name == "/ncclwatch.1000.job.a.4242.987654");
  ParsedSegmentName parsed;
  REQUIRE(ParseSegmentEntry(name.substr(1), 1000, "job.a", &parsed));
  CHECK(parsed.pid == 4242);
  CHECK(parsed.start_ticks == 987654);
  CHECK_FALSE(ParseSegmentEntry(name.substr(1), 1000, "job", &parsed));
  CHECK_FALSE(ParseSegmentEntry(name.substr(1), 1001, "job.a", &parsed));
  CHECK_FALSE(ParseSegmentEntry("ncclwatch.1000.job.a.12x.5", 1000, "job.a", &parsed));
}

}  // namespace
}  // namespace ncclwatch::shm
