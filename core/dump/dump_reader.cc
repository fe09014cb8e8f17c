#include "core/dump/dump_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"

namespace ncclwatch::dump {
namespace {

namespace fs = std::filesystem;

// A dump holds a few hundred records and stacks; anything this big is not one.
constexpr uintmax_t kMaxDumpBytes = 256u << 20;

bool ReadWholeFile(const std::string& path, std::string* text, std::string* error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0;
  if (ok && static_cast<uintmax_t>(st.st_size) > kMaxDumpBytes) {
    *error = path + ": too large to be a dump (" + std::to_string(st.st_size) + " bytes)";
    ::close(fd);
    return false;
  }
  text->resize(ok ? static_cast<size_t>(st.st_size) : 0);
  size_t done = 0;
  while (ok && done < text->size()) {
    ssize_t n = ::read(fd, text->data() + done, text->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // shrank meanwhile: parse what is there
    done += static_cast<size_t>(n);
  }
  if (!ok) *error = path + ": cannot read: " + std::strerror(errno);
  ::close(fd);
  text->resize(done);
  return ok;
}

// Parsing dominates the analysis of big jobs, and files are independent: spread them
// over the cores.
void ReadAll(const std::vector<std::string>& paths, DumpSet* set) {
  std::vector<LoadedDump> loaded(paths.size());
  std::vector<std::string> errors(paths.size());
  std::vector<char> ok(paths.size(), 0);
  size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  workers = std::min(workers, std::max<size_t>(1, paths.size() / 16));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) {
      ok[i] = ReadDumpFile(paths[i], &loaded[i].dump, &errors[i]);
      loaded[i].path = paths[i];
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < paths.size(); ++i) {
    if (ok[i]) {
      set->dumps.push_back(std::move(loaded[i]));
    } else {
      set->rejected.push_back(RejectedFile{paths[i], std::move(errors[i])});
    }
  }
}

}  // namespace

bool ReadDumpFile(const std::string& path, RankDump* out, std::string* error) noexcept {
  try {
    std::string text;
    if (!ReadWholeFile(path, &text, error)) return false;
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
      *error = path + ": empty file (truncated?)";
      return false;
    }
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      *error = path + ": not valid JSON (truncated or corrupt) at byte " + std::to_string(e.byte);
      return false;
    }
    *out = FromJson(doc);
    return true;
  } catch (const DumpFormatError& e) {
    *error = path + ": " + e.what();
  } catch (const std::exception& e) {
    *error = path + ": unreadable dump: " + e.what();
  } catch (...) {
    *error = path + ": unreadable dump";
  }
  return false;
}

DumpSet ReadDumpDir(const std::string& dir) noexcept {
  DumpSet set;
  try {
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
      set.error = dir + ": no such directory";
      return set;
    }
    if (!fs::is_directory(dir, ec)) {
      set.error = dir + ": not a directory";
      return set;
    }
    std::vector<std::string> paths;
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
    if (ec) {
      set.error = dir + ": cannot list: " + ec.message();
      return set;
    }
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      const fs::path& p = it->path();
      std::string name = p.filename().string();
      if (name.empty() || name[0] == '.' || p.extension() != ".json") continue;
      if (it->is_regular_file(ec)) paths.push_back(p.string());
    }
    if (ec) {
      set.error = dir + ": cannot list: " + ec.message();
      return set;
    }
    std::sort(paths.begin(), paths.end());
    ReadAll(paths, &set);
  } catch (const std::exception& e) {
    set.error = dir + ": " + e.what();
  }
  return set;
}

}  // namespace ncclwatch::dump
