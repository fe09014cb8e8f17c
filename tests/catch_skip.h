// Skipping a Catch2 case visibly. Catch2 v2 has no skip: a case whose precondition may be missing
// (root, a mount) carries a hidden tag ([.root]) so that its binary's default run leaves it out,
// and runs alone in its own ctest entry (ncclwatch_add_test ... SKIP_RETURN_CODE 77, selected by
// the tag). Without the precondition it ends the binary with status 77, which ctest shows as
// skipped with the reason printed, never as passed.
#ifndef NCCLWATCH_TESTS_CATCH_SKIP_H_
#define NCCLWATCH_TESTS_CATCH_SKIP_H_

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace ncclwatch::testing {

inline constexpr int kSkipExitStatus = 77;

inline void SkipUnless(bool precondition, const char* why) {
  if (precondition) return;
  std::printf("SKIPPED: %s\n", why);
  std::fflush(stdout);
  std::_Exit(kSkipExitStatus);
}

inline void SkipUnlessRoot(const char* what) { SkipUnless(geteuid() == 0, what); }

}  // namespace ncclwatch::testing

#endif  // NCCLWATCH_TESTS_CATCH_SKIP_H_
