#include "core/format/nccl_names.h"

#include <array>

#include "core/format/hex.h"

namespace ncclwatch::format {
namespace {

// Indexed by ncclDataType_t (nccl.h 2.32.3: ncclNumTypes = 12).
constexpr std::array<const char*, 12> kDataTypes = {"int8",    "uint8",   "int32",    "uint32",
                                                    "int64",   "uint64",  "float16",  "float32",
                                                    "float64", "bfloat16", "float8e4m3", "float8e5m2"};
// Indexed by ncclRedOp_t; ncclNumOps = 5.
constexpr std::array<const char*, 5> kRedOps = {"sum", "prod", "max", "min", "avg"};
// Indexed by ncclResult_t; ncclNumResults = 9.
constexpr std::array<const char*, 9> kResults = {
    "ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError", "ncclInvalidArgument",
    "ncclInvalidUsage",    "ncclRemoteError",        "ncclInProgress",  "ncclTimeout"};

template <size_t N>
const char* Lookup(const std::array<const char*, N>& table, int value) {
  return value >= 0 && static_cast<size_t>(value) < N ? table[static_cast<size_t>(value)] : nullptr;
}

}  // namespace

std::string DataTypeName(int datatype) {
  if (datatype < 0) return "-";
  if (const char* name = Lookup(kDataTypes, datatype)) return name;
  return "datatype(" + std::to_string(datatype) + ")";
}

std::string RedOpName(int redop) {
  if (redop < 0) return "-";
  if (const char* name = Lookup(kRedOps, redop)) return name;
  return "custom(" + std::to_string(redop) + ")";
}

std::string RankOrNone(int rank) { return rank < 0 ? "-" : std::to_string(rank); }

std::string NcclResultName(int result) {
  if (const char* name = Lookup(kResults, result)) return name;
  return std::to_string(result);
}

std::string NcclVersionText(int code) {
  if (code <= 0) return "unknown";
  // NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z while X <= 2 and Y <= 8, X*10000+Y*100+Z after.
  const int major_unit = code < 10000 ? 1000 : 10000;
  return std::to_string(code / major_unit) + "." + std::to_string(code % major_unit / 100) + "." +
         std::to_string(code % 100);
}

std::string CudaVersionText(int version) {
  if (version <= 0) return "unknown";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string StreamText(uint64_t stream) { return stream == 0 ? "default stream" : "stream " + FormatHex(stream); }

std::string SyncObjectText(const std::string& target, uint64_t handle) {
  if (target == "stream") return StreamText(handle);
  if (target == "event") return "event " + FormatHex(handle);
  if (target == "device") return "device " + std::to_string(handle);
  return "handle " + FormatHex(handle);
}

std::string SyncCallName(const std::string& target, bool driver) {
  if (target == "stream") return driver ? "cuStreamSynchronize" : "cudaStreamSynchronize";
  if (target == "event") return driver ? "cuEventSynchronize" : "cudaEventSynchronize";
  if (target == "device") return driver ? "cuCtxSynchronize" : "cudaDeviceSynchronize";
  return "a " + target + " sync";
}

}  // namespace ncclwatch::format
