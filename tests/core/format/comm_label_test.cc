// format::CommLabel: the one form of a communicator in text, hash then quoted escaped name.
#include "core/format/comm_label.h"

#include <catch2/catch.hpp>
#include <string>

using ncclwatch::format::CommLabel;
using ncclwatch::format::QuotedCommName;

TEST_CASE("a named communicator is its hash, then its name quoted", "[comm_label]") {
  CHECK(CommLabel(0xfb1dd03142a6399ull, "0:default_pg") == "0xfb1dd03142a6399 \"0:default_pg\"");
  CHECK(QuotedCommName("tp") == "\"tp\"");
}

TEST_CASE("the unescaped form is for a writer that escapes the whole line", "[comm_label]") {
  CHECK(ncclwatch::format::CommLabelUnescaped(0x1f, "pg\x1b") == "0x1f \"pg\x1b\"");
  CHECK(ncclwatch::format::CommLabelUnescaped(0x1f, "") == "0x1f");
}

TEST_CASE("an unnamed communicator is its hash alone", "[comm_label]") {
  CHECK(CommLabel(0x1f, "") == "0x1f");
  CHECK(QuotedCommName("").empty());
}

TEST_CASE("control characters and quotes in a name are escaped", "[comm_label]") {
  // A name comes from the application's config through shared memory or a dump: it may try to
  // clear the screen or close the quotes early.
  CHECK(CommLabel(0x1, std::string("a\x1b[2J\"b\nc")) == "0x1 \"a\\x1b[2J\\\"b\\nc\"");
  CHECK(QuotedCommName(std::string("\0x", 2)) == "\"\\x00x\"");
}
