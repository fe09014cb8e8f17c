#include "core/status/status.h"

#include <catch2/catch.hpp>

#include <cerrno>
#include <memory>
#include <string>

namespace ncclwatch {
namespace {

Result<int> Half(int n) {
  if (n % 2 != 0) return Status::Error(std::to_string(n) + " is odd");
  return n / 2;
}

struct Rejection {
  int code = 0;
  std::string why;
};

TEST_CASE("a default Status is ok and says nothing", "[status]") {
  const Status ok;
  CHECK(ok.ok());
  CHECK(ok.message().empty());
  CHECK(ok.error_number() == 0);
  CHECK(OkStatus().ok());
}

TEST_CASE("an error keeps its line and errno, and is never an empty line", "[status]") {
  const Status failed = Status::Error("cannot write /d/x: No space left on device", ENOSPC);
  CHECK_FALSE(failed.ok());
  CHECK(failed.message() == "cannot write /d/x: No space left on device");
  CHECK(failed.error_number() == ENOSPC);
  const Status unnamed = Status::Error("");
  CHECK_FALSE(unnamed.ok());
  CHECK(unnamed.message() == "unknown error");
}

TEST_CASE("a Result holds a value or the error that says why not", "[status]") {
  const Result<int> four = Half(8);
  REQUIRE(four.ok());
  CHECK(*four == 4);
  CHECK(four.error().ok());
  const Result<int> none = Half(7);
  CHECK_FALSE(none.ok());
  CHECK(none.error().message() == "7 is odd");
  CHECK(Half(7).value_or(-1) == -1);
  CHECK(Half(6).value_or(-1) == 3);
}

TEST_CASE("a Result moves a move-only value out, and takes a domain error", "[status]") {
  Result<std::unique_ptr<int>> boxed = std::make_unique<int>(5);
  std::unique_ptr<int> out = std::move(boxed).value();
  REQUIRE(out != nullptr);
  CHECK(*out == 5);
  const Result<int, Rejection> rejected = Rejection{3, "forged"};
  CHECK_FALSE(rejected.ok());
  CHECK(rejected.error().code == 3);
  CHECK(rejected.error().why == "forged");
}

}  // namespace
}  // namespace ncclwatch
