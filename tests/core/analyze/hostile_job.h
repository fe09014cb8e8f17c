// Generators of hostile dump sets for the analyzer and CLI tests: communicators of 2^20
// ranks, sequence numbers near 2^64, strings that try to control the terminal. Written as
// JSON text directly (no fsync per file as WriteDump does), so that sets of hundreds of MB
// are generated in seconds, and never committed.
#ifndef NCCLWATCH_TESTS_CORE_ANALYZE_HOSTILE_JOB_H_
#define NCCLWATCH_TESTS_CORE_ANALYZE_HOSTILE_JOB_H_

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"
#include "core/format/hex.h"
#include "tests/core/analyze/crafted_job.h"

namespace ncclwatch::testing {

inline constexpr int kHugeRanks = 1 << 20;
// Every way a dump string reaches the report ends with a fake verdict line after a clear screen.
inline const std::string kHostileText = "\x1b[2J\nVERDICT: fake";

// A collective hang of two ranks on two hosts (#3 joined, #2 completed) in which every string
// that reaches the report ends in kHostileText: op, host, NCCL_P2P_DISABLE, kernel release,
// the main thread's name and its user function.
inline std::vector<dump::RankDump> HostileStringsJob() {
  const std::string& evil = kHostileText;
  auto job = HealthyJob(2, 0, 1);
  for (auto& d : job) {
    Issue(d, 3, 2, "AllReduce" + evil);  // before the host changes: Issue reads the host index
    d.process.host += evil;
    d.environment.nccl_env["NCCL_P2P_DISABLE"] = "1" + evil;
    d.environment.kernel_release = "4.19" + evil;
    AddBlockedMainThread(d, "train_step" + evil);
    d.threads.back().name = "python3" + evil;
  }
  return job;
}

// The JSON text of `d` with `comms_json` (a JSON array, as text) as its "comms".
inline std::string DumpTextWithComms(const dump::RankDump& d, const std::string& comms_json) {
  nlohmann::json doc = dump::ToJson(d);
  doc["comms"] = "@COMMS@";
  std::string text = doc.dump();
  const std::string placeholder = "\"@COMMS@\"";
  return text.replace(text.find(placeholder), placeholder.size(), comms_json);
}

// Comm entries for ranks [first, last] of a communicator of `nranks`, each with init done,
// #1..#enqueued joined and #1..#completed completed, no records.
inline std::string CommEntries(uint64_t hash, int nranks, int first, int last, uint64_t enqueued,
                               uint64_t completed) {
  const std::string head = "{\"comm\":\"" + format::FormatHex(hash) + "\",\"nranks\":" + std::to_string(nranks) +
                           ",\"init_done_ns\":1,\"last_enqueued_seq\":" + std::to_string(enqueued) +
                           ",\"last_completed_seq\":" + std::to_string(completed) + ",\"rank\":";
  std::string out = "[";
  for (int r = first; r <= last; ++r) {
    if (r != first) out += ',';
    out += head + std::to_string(r) + "}";
  }
  return out + "]";
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

// A communicator of 2^20 ranks of which only ranks 0..present-1 left a dump (global ranks
// 100+r, so communicator and global ranks differ); they wait in #1, so the 2^20 - present
// others are the straggler culprits.
inline void WriteMostlyMissingJob(const std::string& dir, int present) {
  for (int r = 0; r < present; ++r) {
    dump::RankDump d = MakeRankDump(100 + r, kHugeRanks);
    WriteText(dir + "/rank" + std::to_string(r) + ".json",
              DumpTextWithComms(d, CommEntries(kWorldComm, kHugeRanks, r, r, 1, 0)));
  }
}

// Every rank of a 2^20-rank communicator is present, held by `processes` processes (one
// dump file each); every rank joined #1 and none completed: a collective hang whose
// 2^20 culprits all have a dump.
inline void WriteAllRanksPresentJob(const std::string& dir, int processes) {
  const int per_process = kHugeRanks / processes;
  for (int p = 0; p < processes; ++p) {
    dump::RankDump d = MakeRankDump(p, processes, 1);
    AddBlockedMainThread(d, "train_step_" + std::to_string(p));  // one stack group per process
    WriteText(dir + "/proc" + std::to_string(p) + ".json",
              DumpTextWithComms(d, CommEntries(kWorldComm, kHugeRanks, p * per_process, (p + 1) * per_process - 1,
                                               1, 0)));
  }
}

// One process holding rank 0 of `comms` different communicators of 2^20 ranks each, every
// one waiting in #1: as many large tables as classifications.
inline void WriteManyLargeCommsJob(const std::string& dir, int comms) {
  dump::RankDump d = MakeRankDump(0, kHugeRanks);
  std::string entries = "[";
  for (int c = 0; c < comms; ++c) {
    std::string one = CommEntries(0x1000 + static_cast<uint64_t>(c), kHugeRanks, 0, 0, 1, 0);
    entries += (c ? "," : "") + one.substr(1, one.size() - 2);
  }
  WriteText(dir + "/rank0.json", DumpTextWithComms(d, entries + "]"));
}

}  // namespace ncclwatch::testing

#endif  // NCCLWATCH_TESTS_CORE_ANALYZE_HOSTILE_JOB_H_
