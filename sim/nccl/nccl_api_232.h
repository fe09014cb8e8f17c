// The NCCL API that nccl.h 2.32.3 (and its nccl_device/host.h) has and 2.28.9 lacks:
// the 2.29-2.32 additions, written for the sim, which is compiled against the 2.28.9 headers.
//
// Contract: every type here is ABI-identical to the 2.32.3 type of the same name (layout,
// enumerator values), and NCCLSIM_API_232_FUNCTIONS lists every new entry point with its
// 2.32.3 signature. tests/sim/nccl/api_232_header_check.sh compiles a translation unit that
// includes the real 2.32.3 headers next to this one and asserts both facts.
//
// The types live in ncclsim::v232 so that they never clash with a newer nccl.h. The entry
// points are declared (extern "C", in that namespace) only when the nccl.h in use predates
// 2.29; with a newer nccl.h the X-macro list is still available for comparison.
#ifndef NCCLWATCH_SIM_NCCL_NCCL_API_232_H_
#define NCCLWATCH_SIM_NCCL_NCCL_API_232_H_

#include <nccl.h>

#include <cstddef>
#include <cstdint>

namespace ncclsim::v232 {

// ---- nccl.h: results, flags, magic numbers -------------------------------------------------
inline constexpr ncclResult_t ncclTimeout = static_cast<ncclResult_t>(8);  // new in 2.29
inline constexpr int ncclNumResults = 9;
inline constexpr unsigned int kApiMagic = 0xcafebeef;     // NCCL_API_MAGIC
inline constexpr int kVersionCode = 23203;                // NCCL_VERSION_CODE of 2.32.3
inline constexpr int kWinStrictOrdering = 0x02;           // NCCL_WIN_STRICT_ORDERING
inline constexpr int kWinGinOnly = 0x04;                  // NCCL_WIN_GIN_ONLY
inline constexpr int kWinCftCounted = 0x08;               // NCCL_WIN_CFT_COUNTED
inline constexpr int kSuspendMem = 0x01;                  // NCCL_SUSPEND_MEM

typedef enum {
  ncclHostCftDefault = NCCL_CONFIG_UNDEF_INT,
  ncclHostCftEnable = 1,
  ncclHostCftDisable = 2,
  ncclHostCftFallback = 3
} ncclHostCftMode_t;

typedef enum {
  ncclNvlsHostModeDefault = NCCL_CONFIG_UNDEF_INT,
  ncclNvlsHostModeEnable = 0,
  ncclNvlsHostModeDisableTransport = 1 << 0,
  ncclNvlsHostModeDisableSymmetricMultimem = 1 << 1,
  ncclNvlsHostModeDisable = 0x7fffffff,
} ncclNvlsHostMode_t;

// ncclConfig_t as of 2.31: the 2.28 fields, then nine more. The `size` field tells which
// prefix a caller filled in.
struct ncclConfig_v23100 {
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
  int collnetEnable;
  int CTAPolicy;
  int shrinkShare;
  int nvlsCTAs;
  int nChannelsPerNetPeer;
  int nvlinkCentricSched;
  int graphUsageMode;
  int numRmaCtx;
  int maxP2pPeers;
  int graphStreamOrdering;
  int launchOrderImplicit;
  int numRmaSig;
  int rmaEagerInit;
  int hostCftMode;
  int nvlsHostMode;
};

// ---- nccl.h: per-collective configuration (2.31) -------------------------------------------
typedef struct ncclConfigExt {
  struct ncclConfigExt* next;
  struct {
    int vendorId;
    int optionId;
  } key;
  union {
    int i;
    const char* s;
    void* raw;
  } val;
} ncclConfigExt_t;

typedef struct ncclCollConfig_v23200 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  ncclConfigExt_t* ext;
  int minCTAs;
  int maxCTAs;
  int nvlsCTAs;
  int cgaClusterSize;
  const char* algSelection;
  int forceAlgSelection;
  int CTAPolicy;
  uint64_t userProfilerTag;
  cudaEvent_t launchCompletionEvent;
} ncclCollConfig_t;

// ---- nccl.h: suspend, memory statistics --------------------------------------------------
typedef enum {
  ncclStatGpuMemSuspend = 0,
  ncclStatGpuMemSuspended = 1,
  ncclStatGpuMemPersist = 2,
  ncclStatGpuMemTotal = 3
} ncclCommMemStat_t;

// ---- nccl.h: one-sided signals ------------------------------------------------------------
typedef struct {
  int opCnt;
  int peer;
  int sigIdx;
  int ctx;
} ncclWaitSignalDesc_t;

// ---- nccl.h: encryption (2.32) -------------------------------------------------------------
typedef enum {
  NCCL_ENCRYPTION_MODE_NONE = 0,
  NCCL_ENCRYPTION_MODE_PSK = 1
} ncclEncryptionMode_t;

typedef struct ncclEncryptionConfig_v23200 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int mode;
  const char* psk;
} ncclEncryptionConfig_t;

// ---- nccl.h: parameters (2.30) -------------------------------------------------------------
typedef struct ncclParamHandle* ncclParamHandle_t;

// ---- nccl_device/host.h: what the new host-side device entry points take -------------------
struct ncclTeam {
  int nRanks, rank, stride;
};
typedef struct ncclTeam ncclTeam_t;

struct ncclMultimemHandle {
  void* mcBasePtr;
};
typedef struct ncclMultimemHandle ncclMultimemHandle_t;

typedef uint32_t ncclCftLeId;
typedef ncclCftLeId ncclCftLeId_t;

struct ncclCftBarrierHandle;
typedef struct ncclCftBarrierHandle ncclCftBarrierHandle_t;
struct ncclDevResourceRequirements;
typedef struct ncclDevResourceRequirements ncclDevResourceRequirements_t;
struct ncclGinOutboxHandle;
struct ncclGinInboxA2AHandle;

typedef enum {
  NCCL_GIN_CONNECTION_NONE,
  NCCL_GIN_CONNECTION_FULL,
  NCCL_GIN_CONNECTION_RAIL,
  NCCL_GIN_CONNECTION_CUSTOM_STRIDE,
} ncclGinConnectionType_t;

typedef enum {
  NCCL_GIN_TYPE_NONE = 0,
  NCCL_GIN_TYPE_PROXY = 2,
  NCCL_GIN_TYPE_GDAKI = 3,
  NCCL_GIN_TYPE_GPI = 4,
  NCCL_GIN_TYPE_EFA_GDA = 5,
  NCCL_GIN_MAX_TYPES = 6,
} ncclGinType_t;

typedef enum {
  NCCL_CFT_TEAM_FLAT,
  NCCL_CFT_TEAM_HIER_MULTIMEM,
  NCCL_CFT_TEAM_HIER_LSA,
} ncclCftTeamMode_t;

typedef enum {
  NCCL_CFT_NONE = 0x0,
  NCCL_CFT = 0x1,
  NCCL_CFT_MULTIMEM = 0x2,
} ncclCftCap_t;

typedef struct ncclCommProperties {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int rank;
  int nRanks;
  int cudaDev;
  int nvmlDev;
  bool deviceApiSupport;
  bool multimemSupport;
  ncclGinType_t ginType;
  int nLsaTeams;
  bool hostRmaSupport;
  ncclGinType_t railedGinType;
  uint64_t commHash;
  int ginMinStride;
  ncclGinConnectionType_t ginConnectionType;
  bool ginSupport[64];  // indexed by ncclGinType_t
  size_t devCommRuntimeVersionSize;
  bool cftSupport;
  bool cftMulticastSupport;
  bool cftCountedSupport;
} ncclCommProperties_t;

}  // namespace ncclsim::v232

// X(return type, name, (parameters)) for every entry point new since 2.28.9. Unqualified type
// names resolve where the list is expanded: to ncclsim::v232 in the sim, to the real 2.32.3
// types in the header check.
#define NCCLSIM_API_232_FUNCTIONS(X)                                                                   \
  /* communicator growth, suspension, statistics (2.29-2.30) */                                         \
  X(ncclResult_t, ncclCommGetUniqueId, (ncclComm_t comm, ncclUniqueId* uniqueId))                      \
  X(ncclResult_t, ncclCommGrow, (ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank,  \
                                 ncclComm_t* newcomm, ncclConfig_t* config))                           \
  X(ncclResult_t, ncclCommSuspend, (ncclComm_t comm, int flags))                                       \
  X(ncclResult_t, ncclCommResume, (ncclComm_t comm))                                                   \
  X(ncclResult_t, ncclCommMemStats, (ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value))        \
  X(ncclResult_t, ncclWinGetUserPtr, (ncclComm_t comm, ncclWindow_t win, void** outUserPtr))           \
  /* per-collective configuration (2.31) */                                                             \
  X(ncclResult_t, ncclAllReduceConfig, (const void* sendbuff, void* recvbuff, size_t count,            \
      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,                   \
      const ncclCollConfig_t* config))                                                                 \
  X(ncclResult_t, ncclBroadcastConfig, (const void* sendbuff, void* recvbuff, size_t count,            \
      ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream,                         \
      const ncclCollConfig_t* config))                                                                 \
  X(ncclResult_t, ncclReduceConfig, (const void* sendbuff, void* recvbuff, size_t count,               \
      ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream,         \
      const ncclCollConfig_t* config))                                                                 \
  X(ncclResult_t, ncclAllGatherConfig, (const void* sendbuff, void* recvbuff, size_t sendcount,        \
      ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config))  \
  X(ncclResult_t, ncclReduceScatterConfig, (const void* sendbuff, void* recvbuff, size_t recvcount,    \
      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,                   \
      const ncclCollConfig_t* config))                                                                 \
  X(ncclResult_t, ncclAlltoAllConfig, (const void* sendbuff, void* recvbuff, size_t count,             \
      ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config))  \
  X(ncclResult_t, ncclGatherConfig, (const void* sendbuff, void* recvbuff, size_t count,               \
      ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream,                         \
      const ncclCollConfig_t* config))                                                                 \
  X(ncclResult_t, ncclScatterConfig, (const void* sendbuff, void* recvbuff, size_t count,              \
      ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream,                         \
      const ncclCollConfig_t* config))                                                                 \
  /* one-sided (2.29) */                                                                                \
  X(ncclResult_t, ncclPutSignal, (const void* localbuff, size_t count, ncclDataType_t datatype,        \
      int peer, ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags,   \
      ncclComm_t comm, cudaStream_t stream))                                                           \
  X(ncclResult_t, ncclSignal, (int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,     \
                               cudaStream_t stream))                                                   \
  X(ncclResult_t, ncclWaitSignal, (int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm,      \
                                   cudaStream_t stream))                                               \
  /* encryption (2.32), parameters (2.30) */                                                            \
  X(ncclResult_t, ncclSetEncryption, (const ncclEncryptionConfig_t* config))                           \
  X(ncclResult_t, ncclParamBind, (ncclParamHandle_t* out, const char* key))                            \
  X(ncclResult_t, ncclParamGetI8, (ncclParamHandle_t h, int8_t* out))                                  \
  X(ncclResult_t, ncclParamGetI16, (ncclParamHandle_t h, int16_t* out))                                \
  X(ncclResult_t, ncclParamGetI32, (ncclParamHandle_t h, int32_t* out))                                \
  X(ncclResult_t, ncclParamGetI64, (ncclParamHandle_t h, int64_t* out))                                \
  X(ncclResult_t, ncclParamGetU8, (ncclParamHandle_t h, uint8_t* out))                                 \
  X(ncclResult_t, ncclParamGetU16, (ncclParamHandle_t h, uint16_t* out))                               \
  X(ncclResult_t, ncclParamGetU32, (ncclParamHandle_t h, uint32_t* out))                               \
  X(ncclResult_t, ncclParamGetU64, (ncclParamHandle_t h, uint64_t* out))                               \
  X(ncclResult_t, ncclParamGetStr, (ncclParamHandle_t h, const char** out))                            \
  X(ncclResult_t, ncclParamGet, (ncclParamHandle_t h, void* out, int maxLen, int* len))                \
  X(ncclResult_t, ncclParamGetParameter, (const char* key, const char** value, int* valueLen))         \
  X(ncclResult_t, ncclParamGetAllParameterKeys, (const char*** table, int* tableLen))                  \
  X(void, ncclParamDumpAll, (void))                                                                    \
  /* nccl_device/host.h */                                                                              \
  X(ncclResult_t, ncclCommQueryProperties, (ncclComm_t comm, ncclCommProperties_t* props))             \
  X(ncclResult_t, ncclGetLsaMultimemDevicePointer, (ncclWindow_t window, size_t offset, void** outPtr)) \
  X(ncclResult_t, ncclGetMultimemDevicePointer, (ncclWindow_t window, size_t offset,                   \
                                                 ncclMultimemHandle_t multimem, void** outPtr))        \
  X(ncclResult_t, ncclGetLsaDevicePointer, (ncclWindow_t window, size_t offset, int lsaRank,           \
                                            void** outPtr))                                            \
  X(ncclResult_t, ncclGetPeerDevicePointer, (ncclWindow_t window, size_t offset, int peer,             \
                                             void** outPtr))                                           \
  X(ncclResult_t, ncclGetMultimemDeviceLeInfo, (ncclWindow_t window, size_t offset, ncclCftLeId* leId, \
                                                size_t* leOffset))                                     \
  X(ncclResult_t, ncclGetCftDeviceLeInfo, (ncclWindow_t window, size_t offset, int peerCft,            \
                                           ncclTeam_t cftTeam, ncclCftLeId* leId, size_t* leOffset))   \
  X(ncclResult_t, ncclGetPeerDeviceLeInfo, (ncclWindow_t window, size_t offset, int peerWorld,         \
                                            ncclCftLeId* leId, size_t* leOffset))                      \
  X(ncclTeam_t, ncclTeamCft, (ncclComm_t comm, ncclCftTeamMode_t mode))                                \
  X(ncclTeam_t, ncclTeamCftMultimem, (ncclComm_t comm))                                                \
  X(ncclResult_t, ncclCftBarrierCreateRequirement, (ncclTeam_t team, int nBarriers,                    \
      ncclCftBarrierHandle_t* outHandle, ncclDevResourceRequirements_t* outReq))

// Declared by 2.32.3's host.h only under NCCL_OS_WINDOWS, yet exported by the Linux library.
#define NCCLSIM_API_232_WINDOWS_ONLY_FUNCTIONS(X)                                                      \
  X(ncclResult_t, ncclGinOutboxCreateRequirement, (int nBlocks, int size_log2,                         \
      ncclGinOutboxHandle* outHandle, ncclDevResourceRequirements* outReq))                            \
  X(ncclResult_t, ncclGinInboxA2ACreateRequirement, (ncclTeam peers, int nBlocks, int size_log2,       \
      ncclGinInboxA2AHandle* outHandle, ncclDevResourceRequirements* outReq))

#if NCCL_VERSION_CODE < 22900
#define NCCLSIM_DECLARE_232(ret, name, params) extern "C" ret name params;
namespace ncclsim::v232 {
NCCLSIM_API_232_FUNCTIONS(NCCLSIM_DECLARE_232)
NCCLSIM_API_232_WINDOWS_ONLY_FUNCTIONS(NCCLSIM_DECLARE_232)
}  // namespace ncclsim::v232
#undef NCCLSIM_DECLARE_232
#endif

#endif  // NCCLWATCH_SIM_NCCL_NCCL_API_232_H_
