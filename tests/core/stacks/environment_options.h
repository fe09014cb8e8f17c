// The capture options a ctest entry chose through the environment (NCCLWATCH_STACK_UNWINDER,
// NCCLWATCH_SYMBOLIZER, NCCLWATCH_PYTHON_STACKS, ...), read as the preload reads them:
// core/stacks itself reads no environment.
#ifndef NCCLWATCH_TESTS_CORE_STACKS_ENVIRONMENT_OPTIONS_H_
#define NCCLWATCH_TESTS_CORE_STACKS_ENVIRONMENT_OPTIONS_H_

#include "core/settings/settings.h"
#include "core/stacks/process_stacks.h"

namespace ncclwatch::testing {

inline const CaptureOptions& EnvironmentOptions() {
  static const CaptureOptions options = settings::CaptureOptionsOf(settings::ReadSettings());
  return options;
}

}  // namespace ncclwatch::testing

#endif  // NCCLWATCH_TESTS_CORE_STACKS_ENVIRONMENT_OPTIONS_H_
