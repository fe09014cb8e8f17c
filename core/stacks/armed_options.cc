#include "core/stacks/armed_options.h"

#include <mutex>

namespace ncclwatch::stacks_internal {
namespace {

std::once_flag g_fixed;
// Never destroyed: the watchdog thread may still arm or symbolize during exit.
CaptureOptions* g_options = nullptr;

}  // namespace

void FixArmedOptions(const CaptureOptions& options) {
  std::call_once(g_fixed, [&] { g_options = new CaptureOptions(options); });
}

const CaptureOptions& ArmedOptions() {
  FixArmedOptions(CaptureOptions{});
  return *g_options;
}

}  // namespace ncclwatch::stacks_internal
