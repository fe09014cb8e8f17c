// Reads back a dump a test expects to be valid: the test fails with the reader's error line
// otherwise.
#ifndef NCCLWATCH_TESTS_DUMP_READ_BACK_H_
#define NCCLWATCH_TESTS_DUMP_READ_BACK_H_

#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "core/dump/dump_reader.h"

namespace ncclwatch::testing {

inline dump::RankDump ReadBack(const std::string& path) {
  Result<dump::RankDump> read = dump::ReadDumpFile(path);
  if (!read.ok()) FAIL(read.error().message());
  return std::move(read).value();
}

}  // namespace ncclwatch::testing

#endif  // NCCLWATCH_TESTS_DUMP_READ_BACK_H_
