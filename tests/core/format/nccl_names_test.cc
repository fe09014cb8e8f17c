#include <catch2/catch.hpp>

#include <climits>

#include "core/format/nccl_names.h"

using namespace ncclwatch::format;

TEST_CASE("datatypes by name, fp8 included, unknown values as numbers", "[format][names]") {
  CHECK(DataTypeName(0) == "int8");
  CHECK(DataTypeName(4) == "int64");
  CHECK(DataTypeName(6) == "float16");
  CHECK(DataTypeName(7) == "float32");
  CHECK(DataTypeName(8) == "float64");
  CHECK(DataTypeName(9) == "bfloat16");
  CHECK(DataTypeName(10) == "float8e4m3");
  CHECK(DataTypeName(11) == "float8e5m2");
  CHECK(DataTypeName(12) == "datatype(12)");
  CHECK(DataTypeName(42) == "datatype(42)");
  CHECK(DataTypeName(INT_MAX) == "datatype(2147483647)");
  CHECK(DataTypeName(-1) == "-");
  CHECK(DataTypeName(INT_MIN) == "-");
}

TEST_CASE("reductions by name; PreMulSum ops are custom", "[format][names]") {
  CHECK(RedOpName(0) == "sum");
  CHECK(RedOpName(1) == "prod");
  CHECK(RedOpName(2) == "max");
  CHECK(RedOpName(3) == "min");
  CHECK(RedOpName(4) == "avg");
  CHECK(RedOpName(5) == "custom(5)");
  CHECK(RedOpName(127) == "custom(127)");
  CHECK(RedOpName(-1) == "-");
}

TEST_CASE("no root or peer is a dash", "[format][names]") {
  CHECK(RankOrNone(-1) == "-");
  CHECK(RankOrNone(0) == "0");
  CHECK(RankOrNone(17) == "17");
}

TEST_CASE("results by NCCL's names, unknown as the number", "[format][names]") {
  CHECK(NcclResultName(0) == "ncclSuccess");
  CHECK(NcclResultName(1) == "ncclUnhandledCudaError");
  CHECK(NcclResultName(2) == "ncclSystemError");
  CHECK(NcclResultName(3) == "ncclInternalError");
  CHECK(NcclResultName(4) == "ncclInvalidArgument");
  CHECK(NcclResultName(5) == "ncclInvalidUsage");
  CHECK(NcclResultName(6) == "ncclRemoteError");
  CHECK(NcclResultName(7) == "ncclInProgress");
  CHECK(NcclResultName(8) == "ncclTimeout");
  CHECK(NcclResultName(9) == "9");
  CHECK(NcclResultName(-3) == "-3");
}

TEST_CASE("versions: NCCL's two encodings and CUDA's", "[format][names]") {
  CHECK(NcclVersionText(22809) == "2.28.9");
  CHECK(NcclVersionText(23203) == "2.32.3");
  CHECK(NcclVersionText(20900) == "2.9.0");   // the first code of the new encoding
  CHECK(NcclVersionText(2804) == "2.8.4");    // NCCL_VERSION(2,8,4) = 2*1000+8*100+4
  CHECK(NcclVersionText(2708) == "2.7.8");
  CHECK(NcclVersionText(0) == "unknown");
  CHECK(NcclVersionText(-5) == "unknown");
  CHECK(CudaVersionText(13000) == "13.0");
  CHECK(CudaVersionText(12040) == "12.4");
  CHECK(CudaVersionText(11080) == "11.8");
  CHECK(CudaVersionText(0) == "unknown");
}

TEST_CASE("stream 0 is the default stream", "[format][names]") {
  CHECK(StreamText(0) == "default stream");
  CHECK(StreamText(0x7f00deadbeefull) == "stream 0x7f00deadbeef");
  CHECK(SyncObjectText("stream", 0) == "default stream");
  CHECK(SyncObjectText("event", 0x1f) == "event 0x1f");
  CHECK(SyncObjectText("device", 1) == "device 1");
  CHECK(SyncObjectText("other", 2) == "handle 0x2");
  CHECK(SyncCallName("stream", false) == "cudaStreamSynchronize");
  CHECK(SyncCallName("event", false) == "cudaEventSynchronize");
  CHECK(SyncCallName("device", false) == "cudaDeviceSynchronize");
  CHECK(SyncCallName("other", false) == "a other sync");
  CHECK(SyncCallName("stream", true) == "cuStreamSynchronize");
  CHECK(SyncCallName("event", true) == "cuEventSynchronize");
  CHECK(SyncCallName("device", true) == "cuCtxSynchronize");
  CHECK(SyncCallName("other", true) == "a other sync");
}
