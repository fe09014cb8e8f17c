// Fuzz target: a hang dump file read by the CLI and the analyzer (core/dump/dump_reader.h).
// Input: the file's bytes. Checks the reader's contract: it never throws or crashes, fails
// with a one-line message naming the file, and what it accepts can be printed (text and
// JSON) and read back.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"
#include "core/dump/dump_reader.h"
#include "core/dump/dump_text.h"
#include "fuzz/fuzz_check.h"

namespace {

// One scratch file per process, removed at exit. Never destroyed: the exit handler reads it
// after static destructors registered later have run.
const std::string& ScratchPath() {
  static const std::string* path = [] {
    std::string dir = (std::filesystem::temp_directory_path() / "ncclwatch-fuzz-dump.XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) std::abort();
    auto* file = new std::string(dir + "/rank0.json");
    std::atexit([] { std::filesystem::remove_all(std::filesystem::path(ScratchPath()).parent_path()); });
    return file;
  }();
  return *path;
}

void WriteScratch(const uint8_t* data, size_t size) {
  const int fd = ::open(ScratchPath().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  FUZZ_CHECK(fd >= 0);
  for (size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    FUZZ_CHECK(n > 0);
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  WriteScratch(data, size);
  const ncclwatch::Result<ncclwatch::dump::RankDump> read = ncclwatch::dump::ReadDumpFile(ScratchPath());
  if (!read.ok()) {
    const std::string& error = read.error().message();
    FUZZ_CHECK(error.rfind(ScratchPath(), 0) == 0);
    FUZZ_CHECK(error.find('\n') == std::string::npos);
    return 0;
  }
  ncclwatch::dump::RenderDumpText(*read);
  const std::string text = ncclwatch::dump::ToJson(*read).dump();
  // What the reader accepted, written back, is a dump again.
  FUZZ_CHECK(ncclwatch::dump::ParseDump(text).ok());
  return 0;
}
