#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/analyze/analyzer.h"
#include "core/analyze/trace.h"
#include "tests/core/analyze/crafted_job.h"

using namespace ncclwatch;
using nlohmann::json;

namespace {

struct Traced {
  json trace;
  analyze::Analysis analysis;
};

Traced TraceOf(const std::vector<dump::RankDump>& job) {
  dump::DumpSet set;
  for (const auto& d : job) set.dumps.push_back(dump::LoadedDump{"x", d});
  Traced t;
  t.analysis = analyze::Analyze(set);
  std::vector<const dump::RankDump*> dumps;
  for (const auto& l : set.dumps) dumps.push_back(&l.dump);
  // Through text, as a viewer would read it.
  t.trace = json::parse(analyze::BuildTrace(dumps, t.analysis.verdict).dump());
  return t;
}

}  // namespace

void CheckNesting(const json& trace);

TEST_CASE("the trace is trace-event JSON with one track per rank and the culprit marked", "[trace]") {
  auto job = testing::HealthyJob(8, 0, 4);  // two hosts with unrelated monotonic clocks
  for (auto& d : job) testing::Issue(d, 6, 5);
  testing::Issue(job[5], 5, 5);
  Traced t = TraceOf(job);
  REQUIRE(t.trace["traceEvents"].is_array());
  std::map<int, std::string> process_names;
  std::set<int> span_pids;
  int culprit_instants = 0;
  for (const auto& e : t.trace["traceEvents"]) {
    REQUIRE(e.contains("ph"));
    REQUIRE(e["pid"].is_number_integer());
    REQUIRE(e["tid"].is_number_integer());
    REQUIRE(e["ts"].is_number());
    CHECK(e["ts"].get<double>() >= 0);
    std::string ph = e["ph"];
    CHECK((ph == "X" || ph == "M" || ph == "i"));
    if (ph == "M" && e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
    if (ph == "X") {
      REQUIRE(e["dur"].is_number());
      CHECK(e["dur"].get<double>() >= 0);
      span_pids.insert(e["pid"].get<int>());
    }
    if (ph == "i") {
      ++culprit_instants;
      CHECK(e["name"] == "culprit: straggler #6 AllReduce");
    }
  }
  CHECK(process_names.size() == 8);
  CHECK(span_pids.size() == 8);
  CHECK(culprit_instants == 1);
  int culprits = 0;
  for (const auto& [pid, name] : process_names) {
    if (name.find("CULPRIT") != std::string::npos) {
      ++culprits;
      CHECK(name.rfind("rank 5 (node1:1005)", 0) == 0);
    }
  }
  CHECK(culprits == 1);
}

// Complete events on one (pid, tid) must nest: a span that starts inside another ends inside it.
void CheckNesting(const json& trace) {
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> by_track;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const double ts = e["ts"], dur = e["dur"];
    by_track[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back({ts, ts + dur});
  }
  for (auto& [track, spans] : by_track) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      const bool after = spans[i].first >= spans[i - 1].second;
      const bool inside = spans[i].second <= spans[i - 1].second;
      CHECK((after || inside));
    }
  }
}

TEST_CASE("spans on a track nest: overlapping ops go to lanes of their own", "[trace]") {
  auto job = testing::HealthyJob(2, 0);
  // Three ops in flight at once on each rank (enqueued back to back, none complete).
  for (auto& d : job) testing::Issue(d, 5, 2);
  Traced t = TraceOf(job);
  CheckNesting(t.trace);
  int lanes = 0;
  for (const auto& e : t.trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" &&
        e["args"]["name"].get<std::string>().find("overlapping ops") != std::string::npos) {
      ++lanes;
    }
  }
  CHECK(lanes == 4);  // two extra lanes per rank
}

TEST_CASE("the culprit's missing collective is drawn until its dump", "[trace]") {
  auto job = testing::HealthyJob(2, 0);
  testing::Issue(job[0], 6, 5);  // rank 0 waits in #6; rank 1 never issued it
  Traced t = TraceOf(job);
  REQUIRE(t.analysis.verdict.kind == detect::VerdictKind::kStraggler);
  int missing = 0;
  for (const auto& e : t.trace["traceEvents"]) {
    if (e["ph"] == "X" && e["name"].get<std::string>().find("(never issued)") != std::string::npos) {
      ++missing;
      CHECK(e["dur"].get<double>() > 0);
      CHECK(e["args"]["issued"] == false);
    }
  }
  CHECK(missing == 1);
  CheckNesting(t.trace);
}

TEST_CASE("the trace aligns hosts by collective number, not by their monotonic clocks", "[trace]") {
  auto job = testing::HealthyJob(8, 0, 4);
  for (auto& d : job) testing::Issue(d, 6, 6);
  // Wall clocks disagree by 3 s too; completions of the same collective still line up.
  for (int r = 4; r < 8; ++r) job[r].incident.detected_unix_ns += 3'000'000'000ull;
  Traced t = TraceOf(job);
  std::map<std::string, std::vector<double>> ends_by_span;
  for (const auto& e : t.trace["traceEvents"]) {
    if (e["ph"] == "X") ends_by_span[e["name"]].push_back(e["ts"].get<double>() + e["dur"].get<double>());
  }
  REQUIRE(ends_by_span.count("AllReduce #4"));
  for (const auto& [name, ends] : ends_by_span) {
    auto [lo, hi] = std::minmax_element(ends.begin(), ends.end());
    CHECK(*hi - *lo < 1.0);  // microseconds
  }
}

TEST_CASE("an incomplete collective spans until the incident", "[trace]") {
  auto job = testing::HealthyJob(2, 0);
  for (auto& d : job) testing::Issue(d, 3, 2);
  Traced t = TraceOf(job);
  int incomplete = 0;
  for (const auto& e : t.trace["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "AllReduce #3 (incomplete)") {
      ++incomplete;
      CHECK(e["args"]["complete"] == false);
      CHECK(e["dur"].get<double>() > 1e6);  // detection is ~90 s after the enqueue
    }
  }
  CHECK(incomplete == 2);
}

TEST_CASE("a process driving 4 ranks is one track named for its 4 ranks, one thread track per rank", "[trace]") {
  auto job = testing::HealthyJob(4, 0);
  dump::RankDump process = job[0];  // one process (ncclCommInitAll) holding ranks 0-3
  process.comms.clear();
  for (auto& d : job) {
    testing::Issue(d, 6, 5);
    process.comms.push_back(testing::Comm(d));
  }
  Traced t = TraceOf({process});
  std::vector<std::string> process_names, thread_names;
  for (const auto& e : t.trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") process_names.push_back(e["args"]["name"]);
    if (e["ph"] == "M" && e["name"] == "thread_name") thread_names.push_back(e["args"]["name"]);
  }
  REQUIRE(process_names.size() == 1);
  CHECK(process_names[0].rfind("ranks 0-3 (node0:1000)", 0) == 0);
  REQUIRE(thread_names.size() == 4);
  for (int r = 0; r < 4; ++r) CHECK(thread_names[r] == "comm 0xfeedface12345678 rank " + std::to_string(r) + "/4");
}
