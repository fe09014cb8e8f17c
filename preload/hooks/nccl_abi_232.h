// The few NCCL 2.29-2.32 types the preload's hooks name, for builds against an older nccl.h
// (this image has 2.28.9). The hooks only pass configs through, so those stay opaque; the
// one-sided wait descriptor is read (peer, opCnt), so its layout is spelled out, and so is
// the prefix of ncclCommProperties_t up to commHash, which a grown communicator is asked for.
//
// Contract: WaitSignalDesc and CommPropertiesPrefix match 2.32.3's ncclWaitSignalDesc_t and
// the start of ncclCommProperties_t field by field; tests/preload/abi_232_check.sh compiles
// this header next to the real 2.32.3 headers and asserts that, and that every row of
// nccl_api_table.h has exactly the real signature.
#ifndef NCCLWATCH_PRELOAD_HOOKS_NCCL_ABI_232_H_
#define NCCLWATCH_PRELOAD_HOOKS_NCCL_ABI_232_H_

#include <nccl.h>

#include <cstddef>
#include <cstdint>

namespace ncclwatch::nccl_abi {

struct WaitSignalDesc {
  int opCnt;   // signals to wait for from `peer`
  int peer;
  int sigIdx;
  int ctx;
};

struct CollConfig;        // ncclCollConfig_t, only passed through
struct EncryptionConfig;  // ncclEncryptionConfig_t, only passed through

// The fields of ncclCommProperties_t up to commHash; `size` tells NCCL how much we have.
struct CommPropertiesPrefix {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int rank;
  int nRanks;
  int cudaDev;
  int nvmlDev;
  bool deviceApiSupport;
  bool multimemSupport;
  int ginType;
  int nLsaTeams;
  bool hostRmaSupport;
  int railedGinType;
  uint64_t commHash;
};
inline constexpr unsigned int kApiMagic = 0xcafebeef;  // NCCL_API_MAGIC
inline constexpr unsigned int kFirstVersionWithGrow = 22900;

// The fields of ncclConfig_t up to commName, the same in every header that has commName
// (2.27 on). A caller built against an older nccl.h (2.18: up to splitShare, 44 bytes) passes
// a shorter struct: `size` and `version` (both set by NCCL_CONFIG_INITIALIZER) say which.
struct ConfigPrefix {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
  int splitShare;
  int trafficClass;
  const char* commName;
};
inline constexpr unsigned int kFirstVersionWithCommName = 22700;

}  // namespace ncclwatch::nccl_abi

#if NCCL_VERSION_CODE < 22900
typedef ncclwatch::nccl_abi::WaitSignalDesc ncclWaitSignalDesc_t;
typedef ncclwatch::nccl_abi::CollConfig ncclCollConfig_t;
typedef ncclwatch::nccl_abi::EncryptionConfig ncclEncryptionConfig_t;
#endif

#endif  // NCCLWATCH_PRELOAD_HOOKS_NCCL_ABI_232_H_
