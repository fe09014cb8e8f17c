#include "core/detect/comm_lifecycle.h"

#include <array>
#include <utility>

namespace ncclwatch::detect {
namespace {

constexpr std::array<std::pair<CommLifecycle, std::string_view>, 8> kNames{{
    {CommLifecycle::kInitializing, "initializing"},
    {CommLifecycle::kReady, "ready"},
    {CommLifecycle::kSuspended, "suspended"},
    {CommLifecycle::kInitFailed, "init-failed"},
    {CommLifecycle::kFinalized, "finalized"},
    {CommLifecycle::kDestroyed, "destroyed"},
    {CommLifecycle::kAborted, "aborted"},
    {CommLifecycle::kRevoked, "revoked"},
}};

}  // namespace

std::string_view ToString(CommLifecycle lifecycle) {
  for (const auto& [value, name] : kNames) {
    if (value == lifecycle) return name;
  }
  return "unknown";
}

std::optional<CommLifecycle> ParseCommLifecycle(std::string_view name) {
  for (const auto& [value, text] : kNames) {
    if (text == name) return value;
  }
  return std::nullopt;
}

}  // namespace ncclwatch::detect
