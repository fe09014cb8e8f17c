// Compiled (never run) by abi_232_check.sh against the real NCCL 2.32.3 headers: every row of
// preload/hooks/nccl_api_table.h has exactly nccl.h's signature, and the types the preload
// declares itself (preload/hooks/nccl_abi_232.h) have the real layout.
#include <nccl.h>
#include <nccl_device/host.h>

#include <cstddef>
#include <type_traits>

#include "preload/hooks/nccl_api_table.h"

static_assert(NCCL_VERSION_CODE >= 23203, "compile against the 2.32.3 headers");

#define NCCLWATCH_CHECK_ROW(kind, name, params, args, track) \
  static_assert(std::is_same_v<decltype(name), ncclResult_t params>, #name ": the table's signature differs from nccl.h");
NCCLWATCH_NCCL_API(NCCLWATCH_CHECK_ROW)

namespace abi = ncclwatch::nccl_abi;

#define NCCLWATCH_SAME_FIELD(Ours, Real, field)                                          \
  static_assert(offsetof(Ours, field) == offsetof(Real, field), #field ": offset differs"); \
  static_assert(sizeof(Ours::field) == sizeof(Real::field), #field ": size differs")

NCCLWATCH_SAME_FIELD(abi::WaitSignalDesc, ncclWaitSignalDesc_t, opCnt);
NCCLWATCH_SAME_FIELD(abi::WaitSignalDesc, ncclWaitSignalDesc_t, peer);
NCCLWATCH_SAME_FIELD(abi::WaitSignalDesc, ncclWaitSignalDesc_t, sigIdx);
NCCLWATCH_SAME_FIELD(abi::WaitSignalDesc, ncclWaitSignalDesc_t, ctx);
static_assert(sizeof(abi::WaitSignalDesc) == sizeof(ncclWaitSignalDesc_t));

NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, size);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, magic);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, version);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, rank);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, nRanks);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, cudaDev);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, nvmlDev);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, deviceApiSupport);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, multimemSupport);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, ginType);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, nLsaTeams);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, hostRmaSupport);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, railedGinType);
NCCLWATCH_SAME_FIELD(abi::CommPropertiesPrefix, ncclCommProperties_t, commHash);
static_assert(sizeof(abi::CommPropertiesPrefix) <= sizeof(ncclCommProperties_t));
static_assert(abi::kApiMagic == NCCL_API_MAGIC);

NCCLWATCH_SAME_FIELD(abi::ConfigPrefix, ncclConfig_t, size);
NCCLWATCH_SAME_FIELD(abi::ConfigPrefix, ncclConfig_t, magic);
NCCLWATCH_SAME_FIELD(abi::ConfigPrefix, ncclConfig_t, version);
NCCLWATCH_SAME_FIELD(abi::ConfigPrefix, ncclConfig_t, netName);
NCCLWATCH_SAME_FIELD(abi::ConfigPrefix, ncclConfig_t, splitShare);
NCCLWATCH_SAME_FIELD(abi::ConfigPrefix, ncclConfig_t, trafficClass);
NCCLWATCH_SAME_FIELD(abi::ConfigPrefix, ncclConfig_t, commName);
