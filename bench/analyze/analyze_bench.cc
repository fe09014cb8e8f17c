// Benchmark of `ncclwatch analyze`: generates N synthetic rank dumps, then reads, analyses
// and renders them in a fresh child process, reporting wall time and peak RSS
// (getrusage). Not a test: figures depend on the machine.
//
// Usage: analyze_bench [N...]   (default: 512 1024 4096)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/analyze/synthetic_job.h"
#include "core/analyze/analyzer.h"
#include "core/analyze/report.h"
#include "core/dump/dump_reader.h"
#include "core/dump/dump_writer.h"

namespace {

using namespace ncclwatch;

bool Generate(const std::string& dir, int nranks) {
  for (int r = 0; r < nranks; ++r) {
    dump::WriteResult result = dump::WriteDump(bench::SyntheticRankDump(r, nranks, nranks / 3), dir);
    if (!result.ok()) {
      std::fprintf(stderr, "analyze_bench: %s\n", result.message.c_str());
      return false;
    }
  }
  return true;
}

// In a child so that each size's peak RSS is its own. Returns the child's exit status.
int AnalyzeInChild(const std::string& dir, int nranks) {
  pid_t pid = fork();
  if (pid == 0) {
    auto start = std::chrono::steady_clock::now();
    dump::DumpSet set = dump::ReadDumpDir(dir);
    auto read = std::chrono::steady_clock::now();
    analyze::Analysis analysis = analyze::Analyze(set);
    std::string text = analyze::RenderTextReport(analysis);
    auto end = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(end - start).count();
    double read_seconds = std::chrono::duration<double>(read - start).count();
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("%6d ranks  %7.3f s (read %.3f s)  %8.1f MiB peak RSS  %7.2f ms/rank  verdict %s %s\n", nranks,
                seconds, read_seconds,
                static_cast<double>(usage.ru_maxrss) / 1024.0, seconds * 1000.0 / nranks,
                analysis.verdict.kind.c_str(), analysis.verdict.ranks.size() == 1 ? "(1 culprit)" : "");
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
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {512, 1024, 4096};
  std::string root = std::filesystem::temp_directory_path() / ("ncclwatch-bench-" + std::to_string(getpid()));
  int failures = 0;
  for (int n : sizes) {
    std::string dir = root + "/" + std::to_string(n);
    std::filesystem::create_directories(dir);
    if (!Generate(dir, n) || AnalyzeInChild(dir, n) != 0) ++failures;
    std::filesystem::remove_all(dir);
  }
  std::filesystem::remove_all(root);
  return failures == 0 ? 0 : 1;
}
