// preload::CommNameOfConfig: ncclConfig_t.commName read from a caller's config of any NCCL
// header generation, never faulting and never writing to it.
#include "preload/observe/config_comm_name.h"

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <string>

#include "core/format/comm_label.h"
#include "preload/hooks/nccl_abi_232.h"

using ncclwatch::nccl_abi::ConfigPrefix;
using ncclwatch::preload::CommNameOfConfig;
namespace shm = ncclwatch::shm;

namespace {

std::string Text(const shm::PackedCommName& packed) {
  char text[shm::kCommNameBytes];
  return std::string(text, shm::UnpackCommName(packed, text));
}

// A config as NCCL_CONFIG_INITIALIZER of a >= 2.27 header leaves it, named `name`.
ConfigPrefix NewConfig(const char* name) {
  ConfigPrefix c{};
  c.size = sizeof c;
  c.magic = ncclwatch::nccl_abi::kApiMagic;
  c.version = 22809;
  c.commName = name;
  return c;
}

// The 2.18 ncclConfig_t (nccl-2.18.3/include/nccl.h): no trafficClass, no commName.
struct Config218 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking, cgaClusterSize, minCTAs, maxCTAs;
  const char* netName;
  int splitShare;
};

}  // namespace

TEST_CASE("a name in a new config is read, and the config is left as it was", "[config_name]") {
  ConfigPrefix c = NewConfig("0:default_pg");
  const ConfigPrefix before = c;
  errno = 1234;
  CHECK(Text(CommNameOfConfig(&c)) == "0:default_pg");
  CHECK(errno == 1234);
  CHECK(std::memcmp(&c, &before, sizeof c) == 0);
}

TEST_CASE("no config, a NULL name, or an empty one give no name", "[config_name]") {
  CHECK(Text(CommNameOfConfig(nullptr)).empty());
  ConfigPrefix c = NewConfig(nullptr);
  CHECK(Text(CommNameOfConfig(&c)).empty());
  c = NewConfig("");
  CHECK(Text(CommNameOfConfig(&c)).empty());
}

TEST_CASE("a config older than the field gives no name", "[config_name]") {
  // Built against NCCL 2.18: the struct ends at splitShare. Lay it at the very end of a page
  // with nothing mapped after it, so that reading past `size` would fault.
  const long page = sysconf(_SC_PAGESIZE);
  auto* pages = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(pages != MAP_FAILED);
  REQUIRE(munmap(pages + page, page) == 0);
  auto* old = reinterpret_cast<Config218*>(pages + page - sizeof(Config218));
  *old = Config218{sizeof(Config218), ncclwatch::nccl_abi::kApiMagic, 21803, -1, -1, -1, -1, nullptr, -1};
  CHECK(Text(CommNameOfConfig(old)).empty());
  // Same bytes, but claiming a new version: `size` still says the field is not there.
  old->version = 22809;
  CHECK(Text(CommNameOfConfig(old)).empty());
  munmap(pages, page);

  // A new struct that says it is old (version), and one whose magic is not NCCL's.
  ConfigPrefix c = NewConfig("x");
  c.version = 22600;
  CHECK(Text(CommNameOfConfig(&c)).empty());
  c = NewConfig("x");
  c.magic = 0;
  CHECK(Text(CommNameOfConfig(&c)).empty());
}

TEST_CASE("a long name is truncated to 64 bytes", "[config_name]") {
  const std::string long_name(200, 'a');
  ConfigPrefix c = NewConfig(long_name.c_str());
  CHECK(Text(CommNameOfConfig(&c)) == std::string(shm::kCommNameBytes, 'a'));
}

TEST_CASE("a bad name pointer gives no name instead of a fault", "[config_name]") {
  const long page = sysconf(_SC_PAGESIZE);
  auto* pages = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(pages != MAP_FAILED);
  REQUIRE(munmap(pages + page, page) == 0);
  ConfigPrefix c = NewConfig(pages + page);  // unmapped
  CHECK(Text(CommNameOfConfig(&c)).empty());
  // A short name that ends right before the unmapped page is read whole.
  std::memcpy(pages + page - 3, "tp", 3);
  c = NewConfig(pages + page - 3);
  CHECK(Text(CommNameOfConfig(&c)) == "tp");
  munmap(pages, page);
}

TEST_CASE("control characters are kept raw and escaped only when printed", "[config_name]") {
  ConfigPrefix c = NewConfig("pg\x1b[2J\n");
  const std::string name = Text(CommNameOfConfig(&c));
  CHECK(name == "pg\x1b[2J\n");
  CHECK(ncclwatch::format::CommLabel(0x1f, name) == "0x1f \"pg\\x1b[2J\\n\"");
}
