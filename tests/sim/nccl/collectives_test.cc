// Numeric results of every collective for 1, 2, 4 and 8 processes.
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>
#include <string>
#include <vector>

#include "multiprocess.h"
#include "typed_values.h"

using simtest::Checker;
using simtest::InputValue;
using simtest::LoadValue;
using simtest::StoreValue;

namespace {

using Bytes = std::vector<unsigned char>;

struct Rank {
  int rank;
  int n;
  ncclComm_t comm;
  cudaStream_t stream;
  Checker& check;
};

Bytes Buffer(ncclDataType_t t, size_t count) { return Bytes(count * simtest::TypeSize(t) + 1, 0xEE); }

std::string Label(const char* what, ncclDataType_t t, size_t count, int extra = -1) {
  return std::string(what) + " type " + std::to_string(t) + " count " + std::to_string(count) +
         (extra >= 0 ? " op/root " + std::to_string(extra) : "");
}

bool Sync(Rank& r, const std::string& what) {
  return r.check(cudaStreamSynchronize(r.stream) == cudaSuccess, "sync after " + what);
}

void CheckAllReduceEveryTypeAndOp(Rank& r, size_t count) {
  struct Case { ncclDataType_t t; ncclRedOp_t op; Bytes send, recv; };
  std::vector<Case> cases;
  for (ncclDataType_t t : simtest::AllTypes()) {
    for (ncclRedOp_t op : {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg}) {
      Case c{t, op, Buffer(t, count), Buffer(t, count)};
      for (size_t i = 0; i < count; ++i) StoreValue(c.send.data(), i, t, InputValue(r.rank, i));
      cases.push_back(std::move(c));
    }
  }
  for (auto& c : cases)
    r.check(ncclAllReduce(c.send.data(), c.recv.data(), count, c.t, c.op, r.comm, r.stream) == ncclSuccess,
            Label("AllReduce enqueue", c.t, count, c.op));
  if (!Sync(r, "AllReduce")) return;
  for (auto& c : cases) {
    bool ok = true;
    for (size_t i = 0; i < count && ok; ++i)
      ok = LoadValue(c.recv.data(), i, c.t) == simtest::ExpectedReduction(c.op, c.t, r.n, i);
    r.check(ok, Label("AllReduce result", c.t, count, c.op));
  }
}

void CheckInPlaceAllReduce(Rank& r, ncclDataType_t t, size_t count) {
  Bytes buf = Buffer(t, count);
  for (size_t i = 0; i < count; ++i) StoreValue(buf.data(), i, t, InputValue(r.rank, i));
  ncclAllReduce(buf.data(), buf.data(), count, t, ncclSum, r.comm, r.stream);
  if (!Sync(r, "in-place AllReduce")) return;
  bool ok = true;
  for (size_t i = 0; i < count && ok; ++i)
    ok = LoadValue(buf.data(), i, t) == simtest::ExpectedReduction(ncclSum, t, r.n, i);
  r.check(ok, Label("in-place AllReduce", t, count));
}

void CheckBroadcastAndReduce(Rank& r, ncclDataType_t t, size_t count) {
  const int root = r.n - 1;
  Bytes send = Buffer(t, count), bcast = Buffer(t, count), reduced = Buffer(t, count), bcast2 = Buffer(t, count);
  for (size_t i = 0; i < count; ++i) {
    StoreValue(send.data(), i, t, InputValue(r.rank, i));
    StoreValue(bcast2.data(), i, t, r.rank == root ? InputValue(root, i) : 0);
  }
  ncclBroadcast(send.data(), bcast.data(), count, t, root, r.comm, r.stream);
  ncclReduce(send.data(), reduced.data(), count, t, ncclMax, 0, r.comm, r.stream);
  ncclBcast(bcast2.data(), count, t, root, r.comm, r.stream);
  if (!Sync(r, "Broadcast/Reduce")) return;
  bool bok = true, rok = true, b2ok = true;
  for (size_t i = 0; i < count; ++i) {
    bok &= LoadValue(bcast.data(), i, t) == InputValue(root, i);
    b2ok &= LoadValue(bcast2.data(), i, t) == InputValue(root, i);
    if (r.rank == 0) rok &= LoadValue(reduced.data(), i, t) == simtest::ExpectedReduction(ncclMax, t, r.n, i);
  }
  r.check(bok, Label("Broadcast", t, count, root));
  r.check(b2ok, Label("Bcast (in place)", t, count, root));
  r.check(rok, Label("Reduce max", t, count, 0));
  if (r.rank != 0) r.check(reduced[0] == 0xEE, "Reduce must not write recvbuff of non-root ranks");
}

void CheckGathers(Rank& r, ncclDataType_t t, size_t count) {
  const size_t total = count * r.n;
  Bytes send = Buffer(t, count), gathered = Buffer(t, total), in_place = Buffer(t, total), rooted = Buffer(t, total);
  for (size_t i = 0; i < count; ++i) {
    StoreValue(send.data(), i, t, InputValue(r.rank, i));
    StoreValue(in_place.data(), r.rank * count + i, t, InputValue(r.rank, i));
  }
  const size_t es = simtest::TypeSize(t);
  ncclAllGather(send.data(), gathered.data(), count, t, r.comm, r.stream);
  ncclAllGather(in_place.data() + r.rank * count * es, in_place.data(), count, t, r.comm, r.stream);
  ncclGather(send.data(), rooted.data(), count, t, 0, r.comm, r.stream);
  if (!Sync(r, "AllGather/Gather")) return;
  bool ok = true, ipok = true, gok = true;
  for (int src = 0; src < r.n; ++src) {
    for (size_t i = 0; i < count; ++i) {
      ok &= LoadValue(gathered.data(), src * count + i, t) == InputValue(src, i);
      ipok &= LoadValue(in_place.data(), src * count + i, t) == InputValue(src, i);
      if (r.rank == 0) gok &= LoadValue(rooted.data(), src * count + i, t) == InputValue(src, i);
    }
  }
  r.check(ok, Label("AllGather", t, count));
  r.check(ipok, Label("in-place AllGather", t, count));
  r.check(gok, Label("Gather", t, count));
}

void CheckReduceScatter(Rank& r, ncclDataType_t t, size_t count, ncclRedOp_t op) {
  const size_t total = count * r.n;
  Bytes send = Buffer(t, total), recv = Buffer(t, count), in_place = Buffer(t, total);
  for (size_t j = 0; j < total; ++j) {
    StoreValue(send.data(), j, t, InputValue(r.rank, j));
    StoreValue(in_place.data(), j, t, InputValue(r.rank, j));
  }
  const size_t es = simtest::TypeSize(t);
  ncclReduceScatter(send.data(), recv.data(), count, t, op, r.comm, r.stream);
  ncclReduceScatter(in_place.data(), in_place.data() + r.rank * count * es, count, t, op, r.comm, r.stream);
  if (!Sync(r, "ReduceScatter")) return;
  bool ok = true, ipok = true;
  for (size_t i = 0; i < count; ++i) {
    const double want = simtest::ExpectedReduction(op, t, r.n, r.rank * count + i);
    ok &= LoadValue(recv.data(), i, t) == want;
    ipok &= LoadValue(in_place.data(), r.rank * count + i, t) == want;
  }
  r.check(ok, Label("ReduceScatter", t, count, op));
  r.check(ipok, Label("in-place ReduceScatter", t, count, op));
}

// Distinct value for (source rank, destination block, element), exact in int32 and float.
double Tagged(int src, int block, size_t i) { return src * 100000.0 + block * 1000.0 + static_cast<double>(i % 1000); }

void CheckAlltoAllAndScatter(Rank& r, ncclDataType_t t, size_t count) {
  const size_t total = count * r.n;
  const int root = r.n - 1;
  Bytes send = Buffer(t, total), recv = Buffer(t, total), scattered = Buffer(t, count);
  for (int b = 0; b < r.n; ++b)
    for (size_t i = 0; i < count; ++i) StoreValue(send.data(), b * count + i, t, Tagged(r.rank, b, i));
  ncclAlltoAll(send.data(), recv.data(), count, t, r.comm, r.stream);
  ncclScatter(send.data(), scattered.data(), count, t, root, r.comm, r.stream);
  if (!Sync(r, "AlltoAll/Scatter")) return;
  bool ok = true, sok = true;
  for (int src = 0; src < r.n; ++src)
    for (size_t i = 0; i < count; ++i) ok &= LoadValue(recv.data(), src * count + i, t) == Tagged(src, r.rank, i);
  for (size_t i = 0; i < count; ++i) sok &= LoadValue(scattered.data(), i, t) == Tagged(root, r.rank, i);
  r.check(ok, Label("AlltoAll", t, count));
  r.check(sok, Label("Scatter", t, count, root));
}

int RankBody(const ncclUniqueId& id, int n, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  if (!check(ncclCommInitRank(&comm, n, id, rank) == ncclSuccess, "init")) return 1;
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream) == cudaSuccess, "stream create");
  int count = 0, me = -1;
  ncclCommCount(comm, &count);
  ncclCommUserRank(comm, &me);
  check(count == n && me == rank, "CommCount/UserRank");
  Rank r{rank, n, comm, stream, check};
  CheckAllReduceEveryTypeAndOp(r, 37);
  for (size_t count_per_rank : {size_t{37}, size_t{40000}}) {
    CheckInPlaceAllReduce(r, ncclFloat32, count_per_rank);
    for (ncclDataType_t t : {ncclFloat32, ncclInt32, ncclBfloat16}) {
      CheckBroadcastAndReduce(r, t, count_per_rank);
      CheckGathers(r, t, count_per_rank);
      CheckReduceScatter(r, t, count_per_rank, ncclSum);
      CheckReduceScatter(r, t, count_per_rank, ncclMin);
    }
    CheckAlltoAllAndScatter(r, ncclFloat32, count_per_rank);
    CheckAlltoAllAndScatter(r, ncclInt32, count_per_rank);
  }
  CheckInPlaceAllReduce(r, ncclFloat64, 0);  // zero-count collectives still match up
  check(ncclCommDestroy(comm) == ncclSuccess, "destroy");
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

void RunCollectives(int n) {
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(n, [&](int rank) { return RankBody(id, n, rank); }, 60000);
  result.segment_left = simtest::RemoveSegment(id);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

}  // namespace

TEST_CASE("collectives give NCCL's results with 1 process", "[sim_nccl][collectives]") { RunCollectives(1); }
TEST_CASE("collectives give NCCL's results with 2 processes", "[sim_nccl][collectives]") { RunCollectives(2); }
TEST_CASE("collectives give NCCL's results with 4 processes", "[sim_nccl][collectives]") { RunCollectives(4); }
TEST_CASE("collectives give NCCL's results with 8 processes", "[sim_nccl][collectives]") { RunCollectives(8); }
