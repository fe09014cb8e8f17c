// Completion as both classifiers compute it (core/detect/completion.h).
#include <catch2/catch.hpp>

#include "core/detect/completion.h"

using namespace ncclwatch::detect;

namespace {

RecordFacts Record(uint64_t seq, bool complete, bool never_completes = false) {
  RecordFacts r;
  r.seq = seq;
  r.op = "AllReduce";
  r.enqueue_ns = seq * 1000;
  r.complete_ns = complete ? seq * 1000 + 500 : 0;
  r.never_completes = never_completes;
  return r;
}

}  // namespace

TEST_CASE("a record seen complete raises a lagging published counter", "[completion]") {
  CHECK(EffectiveLastCompleted(2, {Record(3, true), Record(4, true), Record(5, false)}) == 4);
}

TEST_CASE("untrackable records right after the last completed one count as complete", "[completion]") {
  // #4 and #5 were captured: their completion is never published, and #6 is really pending.
  std::vector<RecordFacts> records{Record(6, false), Record(5, false, true), Record(3, true),
                                            Record(4, false, true)};
  CHECK(EffectiveLastCompleted(3, records) == 5);
}

TEST_CASE("an untrackable record after a pending one does not complete it", "[completion]") {
  CHECK(EffectiveLastCompleted(3, {Record(4, false), Record(5, false, true)}) == 3);
}

TEST_CASE("the published counter is kept when no record says more", "[completion]") {
  CHECK(EffectiveLastCompleted(9, {}) == 9);
  CHECK(EffectiveLastCompleted(9, {Record(8, true)}) == 9);
}

TEST_CASE("an untracked record is never counted complete by itself", "[completion]") {
  RecordFacts untracked = Record(4, false);
  untracked.untracked = true;
  CHECK(EffectiveLastCompleted(3, {untracked, Record(5, false)}) == 3);
  // A later record seen complete implies it (completion events fire in stream order).
  CHECK(EffectiveLastCompleted(3, {untracked, Record(5, true)}) == 5);
}
