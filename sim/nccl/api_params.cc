// Runtime parameters (NCCL 2.30: ncclParam*) and ncclSetEncryption (2.32). The sim's
// parameters are the variables it reads; a value is the environment's, else the default.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "export.h"
#include "last_error.h"
#include "nccl_api_232.h"

using ncclsim::SetLastError;
namespace v232 = ncclsim::v232;

struct ncclsim::v232::ncclParamHandle {
  const char* key;
  const char* default_value;
};

namespace {

v232::ncclParamHandle g_params[] = {
    {"NCCL_DEBUG", ""},       {"NCCL_DEBUG_SUBSYS", "INIT,BOOTSTRAP,ENV"},
    {"NCCL_SOCKET_IFNAME", ""}, {"NCCLSIM_FAULT", ""},
    {"NCCLSIM_NOOP", "0"},    {"NCCLSIM_VERSION", "2.32.3"},
};

const v232::ncclParamHandle* Find(const char* key) {
  if (key == nullptr) return nullptr;
  for (const auto& p : g_params)
    if (std::strcmp(p.key, key) == 0) return &p;
  return nullptr;
}

const char* Value(const v232::ncclParamHandle* h) {
  const char* env = std::getenv(h->key);
  return env != nullptr ? env : h->default_value;
}

ncclResult_t Fail(const std::string& message) {
  SetLastError(message);
  return ncclInvalidArgument;
}

template <typename T>
ncclResult_t GetInteger(v232::ncclParamHandle_t h, T* out, const char* api) {
  if (h == nullptr || out == nullptr) return Fail(std::string(api) + ": NULL handle or out argument");
  const char* text = Value(h);
  char* end = nullptr;
  errno = 0;
  bool ok;
  if constexpr (std::is_signed_v<T>) {
    const long long v = std::strtoll(text, &end, 0);
    ok = v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
    *out = static_cast<T>(v);
  } else {
    const unsigned long long v = std::strtoull(text, &end, 0);
    ok = text[0] != '-' && v <= std::numeric_limits<T>::max();
    *out = static_cast<T>(v);
  }
  if (errno != 0 || end == text || *end != '\0' || !ok)
    return Fail(std::string(api) + ": " + h->key + "='" + text + "' is not a value of that type");
  return ncclSuccess;
}

}  // namespace

NCCLSIM_API(ncclResult_t, ncclParamBind, v232::ncclParamHandle_t* out, const char* key) {
  if (out == nullptr) return Fail("ncclParamBind: out argument is NULL");
  const v232::ncclParamHandle* h = Find(key);
  if (h == nullptr) return Fail(std::string("ncclParamBind: unknown parameter ") + (key ? key : "(null)"));
  *out = const_cast<v232::ncclParamHandle_t>(h);
  return ncclSuccess;
}

#define NCCLSIM_PARAM_GETTER(suffix, type)                                   \
  NCCLSIM_API(ncclResult_t, ncclParamGet##suffix, v232::ncclParamHandle_t h, type* out) { \
    return GetInteger(h, out, "ncclParamGet" #suffix);                       \
  }
NCCLSIM_PARAM_GETTER(I8, int8_t)
NCCLSIM_PARAM_GETTER(I16, int16_t)
NCCLSIM_PARAM_GETTER(I32, int32_t)
NCCLSIM_PARAM_GETTER(I64, int64_t)
NCCLSIM_PARAM_GETTER(U8, uint8_t)
NCCLSIM_PARAM_GETTER(U16, uint16_t)
NCCLSIM_PARAM_GETTER(U32, uint32_t)
NCCLSIM_PARAM_GETTER(U64, uint64_t)
#undef NCCLSIM_PARAM_GETTER

NCCLSIM_API(ncclResult_t, ncclParamGetStr, v232::ncclParamHandle_t h, const char** out) {
  if (h == nullptr || out == nullptr) return Fail("ncclParamGetStr: NULL handle or out argument");
  thread_local std::string value;  // valid until this thread's next call, as documented
  value = Value(h);
  *out = value.c_str();
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclParamGet, v232::ncclParamHandle_t h, void* out, int maxLen, int* len) {
  if (h == nullptr || out == nullptr || len == nullptr || maxLen < 0)
    return Fail("ncclParamGet: NULL argument or negative maxLen");
  const char* value = Value(h);
  const int size = static_cast<int>(std::strlen(value)) + 1;
  if (size > maxLen) return Fail("ncclParamGet: value of " + std::string(h->key) + " needs " + std::to_string(size) + " bytes");
  std::memcpy(out, value, static_cast<size_t>(size));
  *len = size;
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclParamGetParameter, const char* key, const char** value, int* valueLen) {
  const v232::ncclParamHandle* h = Find(key);
  if (h == nullptr || value == nullptr || valueLen == nullptr)
    return Fail(std::string("ncclParamGetParameter: unknown parameter or NULL argument"));
  thread_local std::string copy;
  copy = Value(h);
  *value = copy.c_str();
  *valueLen = static_cast<int>(copy.size());
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclParamGetAllParameterKeys, const char*** table, int* tableLen) {
  if (table == nullptr || tableLen == nullptr) return Fail("ncclParamGetAllParameterKeys: NULL argument");
  thread_local const char* keys[std::size(g_params)];
  for (size_t i = 0; i < std::size(g_params); ++i) keys[i] = g_params[i].key;
  *table = keys;
  *tableLen = static_cast<int>(std::size(g_params));
  return ncclSuccess;
}

NCCLSIM_API(void, ncclParamDumpAll, void) {
  for (const auto& p : g_params) std::printf("NCCL INFO %s=%s\n", p.key, Value(&p));
  std::fflush(stdout);
}

NCCLSIM_API(ncclResult_t, ncclSetEncryption, const v232::ncclEncryptionConfig_t* config) {
  // The sim opens no sockets, so a valid request is accepted and has nothing to protect.
  if (config == nullptr) return Fail("ncclSetEncryption: config argument is NULL");
  if (config->magic != v232::kApiMagic || config->size < sizeof(v232::ncclEncryptionConfig_t))
    return Fail("ncclSetEncryption: config not initialized with NCCL_ENCRYPTION_CONFIG_INITIALIZER");
  if (config->mode != v232::NCCL_ENCRYPTION_MODE_NONE && config->mode != v232::NCCL_ENCRYPTION_MODE_PSK)
    return Fail("ncclSetEncryption: invalid mode " + std::to_string(config->mode));
  if (config->mode == v232::NCCL_ENCRYPTION_MODE_PSK && (config->psk == nullptr || config->psk[0] == '\0'))
    return Fail("ncclSetEncryption: PSK mode needs a non-empty psk");
  return ncclSuccess;
}
