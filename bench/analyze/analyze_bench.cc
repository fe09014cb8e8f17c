// Benchmark of `ncclwatch analyze`: generates N synthetic rank dumps, then reads, analyses
// and renders them in a fresh child process, reporting wall time and peak RSS
// (getrusage). Not a test: figures depend on the machine.
//
// Usage: analyze_bench [--repeat=K] [--keep=DIR] [N...]   (default: 1 analysis each of 1024 4096 16384
// ranks; --keep leaves the dumps of N ranks in DIR/N)
// With K > 1 each size is analysed K times (one line each), so that a caller can take the
// median over the noise of a shared machine.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/analyze/synthetic_job.h"
#include "core/analyze/analyzer.h"
#include "core/analyze/report.h"
#include "core/dump/dump_json.h"
#include "core/dump/dump_reader.h"
#include "core/dump/dump_writer.h"

namespace {

using namespace ncclwatch;

// Only the .json is what `analyze` reads, and durability is not what is measured: writing it
// plainly, without WriteDump's fsyncs of file and directory, makes generating thousands of
// dumps take seconds instead of minutes.
bool Generate(const std::string& dir, int nranks) {
  for (int r = 0; r < nranks; ++r) {
    const dump::RankDump rank_dump = bench::SyntheticRankDump(r, nranks, nranks / 3);
    const std::string path = dir + "/" + dump::DumpFileStem(rank_dump) + ".json";
    std::ofstream out(path);
    out << dump::ToJson(rank_dump).dump();
    if (!out.flush()) {
      std::fprintf(stderr, "analyze_bench: cannot write %s\n", path.c_str());
      return false;
    }
  }
  return true;
}

// In a child so that each size's peak RSS is its own. Returns the child's exit status.
int AnalyzeInChild(const std::string& dir, int nranks) {
  pid_t pid = fork();
  if (pid == 0) {
    rusage at_start{};
    getrusage(RUSAGE_SELF, &at_start);
    const double cpu_at_start = static_cast<double>(at_start.ru_utime.tv_sec + at_start.ru_stime.tv_sec) +
                                static_cast<double>(at_start.ru_utime.tv_usec + at_start.ru_stime.tv_usec) / 1e6;
    auto start = std::chrono::steady_clock::now();
    // The figures are the analyzer's: any budget would do that holds the set (82 KiB a rank).
    dump::DumpSet set = dump::ReadDumpDir(dir, dump::ReadLimits{uint64_t{8} << 30}).value();
    auto read = std::chrono::steady_clock::now();
    analyze::Analysis analysis = analyze::Analyze(set);
    std::string text = analyze::RenderTextReport(analysis);
    auto end = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(end - start).count();
    double read_seconds = std::chrono::duration<double>(read - start).count();
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    // CPU time as well as wall time: on a shared machine the wall clock also counts the others.
    const double cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                               static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    std::printf("%6d ranks  %7.3f s (read %.3f s, cpu %.3f s)  %8.1f MiB peak RSS  %7.2f ms/rank  verdict %s %s\n",
                nranks, seconds, read_seconds, cpu_seconds - cpu_at_start,
                static_cast<double>(usage.ru_maxrss) / 1024.0, seconds * 1000.0 / nranks,
                detect::ToString(analysis.verdict.kind).c_str(), detect::AllCulpritRanks(analysis.verdict).size() == 1 ? "(1 culprit)" : "");
    std::fflush(stdout);
    _exit(analysis.dumps_read == static_cast<size_t>(nranks) ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  int repeats = 1;
  std::string keep;  // --keep=DIR: generate into DIR/<N> and leave it there (for a profiler)
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--repeat=", 0) == 0) {
      repeats = std::max(1, std::atoi(arg.c_str() + 9));
    } else if (arg.rfind("--keep=", 0) == 0) {
      keep = arg.substr(7);
    } else {
      sizes.push_back(std::atoi(arg.c_str()));
    }
  }
  if (sizes.empty()) sizes = {1024, 4096, 16384};
  std::string root = !keep.empty() ? keep
                                    : (std::filesystem::temp_directory_path() / ("ncclwatch-bench-" + std::to_string(getpid()))).string();
  int failures = 0;
  for (int n : sizes) {
    std::string dir = root + "/" + std::to_string(n);
    std::filesystem::create_directories(dir);
    if (!Generate(dir, n)) ++failures;
    for (int r = 0; r < repeats && failures == 0; ++r) {
      if (AnalyzeInChild(dir, n) != 0) ++failures;
    }
    if (keep.empty()) std::filesystem::remove_all(dir);
  }
  if (keep.empty()) std::filesystem::remove_all(root);
  return failures == 0 ? 0 : 1;
}
