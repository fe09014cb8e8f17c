// NCCL's and CUDA's numbers as people read them: datatypes, reduction ops, results, versions,
// streams. The one table of each, used by the dump text, the analyzer's text, JSON and trace.
//
// Values come from dumps, i.e. from another process or a file: every function accepts any int
// and prints an unknown value as a number in a form that cannot be taken for a name
// ("datatype(42)", "custom(7)", "ncclResult(12)").
#ifndef NCCLWATCH_CORE_FORMAT_NCCL_NAMES_H_
#define NCCLWATCH_CORE_FORMAT_NCCL_NAMES_H_

#include <cstdint>
#include <string>

namespace ncclwatch::format {

// ncclDataType_t as torch names the same type: 0 "int8" .. 7 "float32", 9 "bfloat16",
// 10 "float8e4m3", 11 "float8e5m2" (NCCL 2.24+); negative (none recorded) "-"; other values
// "datatype(N)".
std::string DataTypeName(int datatype);

// ncclRedOp_t: 0..4 "sum" "prod" "max" "min" "avg"; ncclNumOps (5) and above are the ops of
// ncclRedOpCreatePreMulSum, "custom(N)"; negative (the op has none) "-".
std::string RedOpName(int redop);

// A root or peer rank: the number, or "-" when the op has none (negative).
std::string RankOrNone(int rank);

// ncclResult_t by NCCL's own name: 0 "ncclSuccess" .. 8 "ncclTimeout"; anything else the number.
std::string NcclResultName(int result);

// ncclGetVersion's code as "2.28.9" (22809). NCCL_VERSION encodes X*10000+Y*100+Z since 2.9
// and X*1000+Y*100+Z before (2804 is 2.8.4); "unknown" for 0 or a negative code.
std::string NcclVersionText(int code);

// cudaRuntimeGetVersion / cudaDriverGetVersion's 1000*major + 10*minor as "13.0" (13000) or
// "12.4" (12040); "unknown" for 0 or a negative value.
std::string CudaVersionText(int version);

// A cudaStream_t: "default stream" for 0 (the legacy default stream), else "stream 0x7f..".
std::string StreamText(uint64_t stream);

// What a blocked host sync waits on, by its target ("stream", "event", "device") and handle:
// StreamText for a stream, "event 0x7f..", "device 1"; any other target "handle 0x..".
std::string SyncObjectText(const std::string& target, uint64_t handle);

// What a thread blocked in a host sync called: "cudaStreamSynchronize" for target "stream",
// "cudaEventSynchronize" for "event", "cudaDeviceSynchronize" for "device"; through the driver
// API (`driver`) "cuStreamSynchronize", "cuEventSynchronize", "cuCtxSynchronize"; any other
// target "a <target> sync" (the caller escapes it).
std::string SyncCallName(const std::string& target, bool driver);

}  // namespace ncclwatch::format

#endif  // NCCLWATCH_CORE_FORMAT_NCCL_NAMES_H_
