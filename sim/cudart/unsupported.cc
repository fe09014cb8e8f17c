// Unsupported(): the one stderr line per unsupported call name (api_common.h).
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "api_common.h"

namespace ncclsim {

cudaError_t Unsupported(const char* call, const char* why) {
  static std::mutex mu;
  static auto* reported = new std::set<std::string>();  // never destroyed: callable during exit
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!reported->insert(call).second) return cudaErrorNotSupported;
  }
  std::fprintf(stderr, "ncclsim cudart: %s is not supported (%s); returning cudaErrorNotSupported\n", call, why);
  return cudaErrorNotSupported;
}

}  // namespace ncclsim
