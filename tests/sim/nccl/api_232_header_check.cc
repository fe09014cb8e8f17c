// Compiled (never run) by api_232_header_check.sh against the real NCCL 2.32.3 headers:
// every declaration of sim/nccl/nccl_api_232.h must match them exactly.
#include <nccl.h>
#include <nccl_device/host.h>

#include <cstddef>
#include <type_traits>

#include "nccl_api_232.h"

static_assert(NCCL_VERSION_CODE == 23203, "compile this check against the nccl.h of NCCL 2.32.3");

namespace v232 = ncclsim::v232;

// Signatures: the list expanded here, at global scope, names the real 2.32.3 types.
#define CHECK_SIGNATURE(ret, name, params) \
  static_assert(std::is_same_v<decltype(&::name), ret(*) params>, #name " differs from nccl.h 2.32.3");
NCCLSIM_API_232_FUNCTIONS(CHECK_SIGNATURE)
#undef CHECK_SIGNATURE

// Layouts: same size, alignment and field offsets as the real type.
#define SAME_SHAPE(ours, theirs)                                                    \
  static_assert(sizeof(v232::ours) == sizeof(theirs), #ours ": size differs");      \
  static_assert(alignof(v232::ours) == alignof(theirs), #ours ": alignment differs")
#define SAME_FIELD(ours, theirs, field)                                             \
  static_assert(offsetof(v232::ours, field) == offsetof(theirs, field) &&          \
                    sizeof(v232::ours::field) == sizeof(theirs::field),             \
                #ours "::" #field " differs")

SAME_SHAPE(ncclConfig_v23100, ncclConfig_t);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, size);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, magic);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, version);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, blocking);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, netName);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, commName);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, nvlinkCentricSched);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, graphUsageMode);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, numRmaCtx);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, maxP2pPeers);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, graphStreamOrdering);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, launchOrderImplicit);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, numRmaSig);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, rmaEagerInit);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, hostCftMode);
SAME_FIELD(ncclConfig_v23100, ncclConfig_t, nvlsHostMode);

SAME_SHAPE(ncclConfigExt_t, ncclConfigExt_t);
SAME_FIELD(ncclConfigExt_t, ncclConfigExt_t, next);
SAME_FIELD(ncclConfigExt_t, ncclConfigExt_t, key);
SAME_FIELD(ncclConfigExt_t, ncclConfigExt_t, val);

SAME_SHAPE(ncclCollConfig_t, ncclCollConfig_t);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, size);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, magic);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, version);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, ext);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, minCTAs);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, maxCTAs);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, nvlsCTAs);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, cgaClusterSize);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, algSelection);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, forceAlgSelection);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, CTAPolicy);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, userProfilerTag);
SAME_FIELD(ncclCollConfig_t, ncclCollConfig_t, launchCompletionEvent);

SAME_SHAPE(ncclWaitSignalDesc_t, ncclWaitSignalDesc_t);
SAME_FIELD(ncclWaitSignalDesc_t, ncclWaitSignalDesc_t, opCnt);
SAME_FIELD(ncclWaitSignalDesc_t, ncclWaitSignalDesc_t, peer);
SAME_FIELD(ncclWaitSignalDesc_t, ncclWaitSignalDesc_t, sigIdx);
SAME_FIELD(ncclWaitSignalDesc_t, ncclWaitSignalDesc_t, ctx);

SAME_SHAPE(ncclEncryptionConfig_t, ncclEncryptionConfig_t);
SAME_FIELD(ncclEncryptionConfig_t, ncclEncryptionConfig_t, magic);
SAME_FIELD(ncclEncryptionConfig_t, ncclEncryptionConfig_t, version);
SAME_FIELD(ncclEncryptionConfig_t, ncclEncryptionConfig_t, mode);
SAME_FIELD(ncclEncryptionConfig_t, ncclEncryptionConfig_t, psk);

SAME_SHAPE(ncclTeam_t, ncclTeam_t);
SAME_FIELD(ncclTeam_t, ncclTeam_t, nRanks);
SAME_FIELD(ncclTeam_t, ncclTeam_t, rank);
SAME_FIELD(ncclTeam_t, ncclTeam_t, stride);
SAME_SHAPE(ncclMultimemHandle_t, ncclMultimemHandle_t);
SAME_SHAPE(ncclCftLeId, ncclCftLeId);

SAME_SHAPE(ncclCommProperties_t, ncclCommProperties_t);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, magic);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, rank);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, nRanks);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, cudaDev);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, nvmlDev);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, deviceApiSupport);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, multimemSupport);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, ginType);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, nLsaTeams);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, hostRmaSupport);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, railedGinType);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, commHash);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, ginMinStride);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, ginConnectionType);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, ginSupport);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, devCommRuntimeVersionSize);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, cftSupport);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, cftMulticastSupport);
SAME_FIELD(ncclCommProperties_t, ncclCommProperties_t, cftCountedSupport);

// Enumerators and constants: same values.
#define SAME_VALUE(ours, theirs) static_assert(static_cast<long long>(ours) == static_cast<long long>(theirs), #theirs)
SAME_VALUE(v232::ncclTimeout, ncclTimeout);
SAME_VALUE(v232::ncclNumResults, ncclNumResults);
SAME_VALUE(v232::kApiMagic, NCCL_API_MAGIC);
SAME_VALUE(v232::kVersionCode, NCCL_VERSION_CODE);
SAME_VALUE(v232::kWinStrictOrdering, NCCL_WIN_STRICT_ORDERING);
SAME_VALUE(v232::kWinGinOnly, NCCL_WIN_GIN_ONLY);
SAME_VALUE(v232::kWinCftCounted, NCCL_WIN_CFT_COUNTED);
SAME_VALUE(v232::kSuspendMem, NCCL_SUSPEND_MEM);
SAME_VALUE(v232::ncclHostCftDefault, ncclHostCftDefault);
SAME_VALUE(v232::ncclHostCftFallback, ncclHostCftFallback);
SAME_VALUE(v232::ncclNvlsHostModeDefault, ncclNvlsHostModeDefault);
SAME_VALUE(v232::ncclNvlsHostModeDisableTransport, ncclNvlsHostModeDisableTransport);
SAME_VALUE(v232::ncclNvlsHostModeDisableSymmetricMultimem, ncclNvlsHostModeDisableSymmetricMultimem);
SAME_VALUE(v232::ncclNvlsHostModeDisable, ncclNvlsHostModeDisable);
SAME_VALUE(v232::ncclStatGpuMemSuspend, ncclStatGpuMemSuspend);
SAME_VALUE(v232::ncclStatGpuMemSuspended, ncclStatGpuMemSuspended);
SAME_VALUE(v232::ncclStatGpuMemPersist, ncclStatGpuMemPersist);
SAME_VALUE(v232::ncclStatGpuMemTotal, ncclStatGpuMemTotal);
SAME_VALUE(v232::NCCL_ENCRYPTION_MODE_PSK, NCCL_ENCRYPTION_MODE_PSK);
SAME_VALUE(v232::NCCL_GIN_CONNECTION_CUSTOM_STRIDE, NCCL_GIN_CONNECTION_CUSTOM_STRIDE);
SAME_VALUE(v232::NCCL_GIN_TYPE_PROXY, NCCL_GIN_TYPE_PROXY);
SAME_VALUE(v232::NCCL_GIN_TYPE_GDAKI, NCCL_GIN_TYPE_GDAKI);
SAME_VALUE(v232::NCCL_GIN_TYPE_GPI, NCCL_GIN_TYPE_GPI);
SAME_VALUE(v232::NCCL_GIN_TYPE_EFA_GDA, NCCL_GIN_TYPE_EFA_GDA);
SAME_VALUE(v232::NCCL_GIN_MAX_TYPES, NCCL_GIN_MAX_TYPES);
SAME_VALUE(v232::NCCL_CFT_TEAM_HIER_LSA, NCCL_CFT_TEAM_HIER_LSA);
SAME_VALUE(v232::NCCL_CFT_MULTIMEM, NCCL_CFT_MULTIMEM);
static_assert(sizeof(v232::ncclGinType_t) == sizeof(ncclGinType_t) &&
              sizeof(v232::ncclCommMemStat_t) == sizeof(ncclCommMemStat_t) &&
              sizeof(v232::ncclCftTeamMode_t) == sizeof(ncclCftTeamMode_t) &&
              sizeof(v232::ncclHostCftMode_t) == sizeof(ncclHostCftMode_t) &&
              sizeof(v232::ncclNvlsHostMode_t) == sizeof(ncclNvlsHostMode_t),
              "an enum's size differs");
