"""The main() of every test file that holds named scenarios: FILE.py NAME runs one of them.

ctest registers one entry per scenario (tests/*/CMakeLists.txt), so each file maps names to
functions and ends with `sys.exit(runner.run_named(SCENARIOS, sys.argv))`.
"""

import os
import subprocess
import sys
import time

from ncclwatch_test import checks

SKIP = 77  # ctest's SKIP_RETURN_CODE of the tests that may skip


class Failure(Exception):
    """Raised by a check that cannot let its scenario go on."""


def bad_usage(scenarios, argv):
    """2 after printing the usage when argv does not name exactly one scenario; else None."""
    if len(argv) == 2 and argv[1] in scenarios:
        return None
    print(f"usage: {os.path.basename(argv[0])} " + "|".join(scenarios), file=sys.stderr)
    return 2


def run_named(scenarios, argv):
    """Runs scenarios[argv[1]]: 0 passed, 1 failed, 2 usage, 77 skipped.

    A scenario fails when it returns False, raises Failure, or leaves a failed check
    (checks.failures); it skips by returning 77 after saying why."""
    usage = bad_usage(scenarios, argv)
    if usage is not None:
        return usage
    name = argv[1]
    t0 = time.monotonic()
    try:
        result = scenarios[name]()
    except Failure as e:
        print(f"FAIL: {e}")
        result = False
    if result == SKIP:
        return SKIP
    failed = result is False or bool(checks.failures)
    print(f"{name}: {'FAILED' if failed else 'passed'} in {time.monotonic() - t0:.1f} s")
    return 1 if failed else 0


def run_named_unshared(scenarios, argv, inside=None):
    """run_named in a private mount namespace, whose /dev/shm the scenario may mount as its own
    (inside(), if given, runs first there); /dev/shm is unmounted at the end."""
    if argv[2:] == ["--inside"]:
        try:
            if inside is not None:
                inside()
            return run_named(scenarios, argv[:2])
        finally:
            subprocess.run(["umount", "-l", "/dev/shm"], check=False, stderr=subprocess.DEVNULL)
    usage = bad_usage(scenarios, argv)
    if usage is not None:
        return usage
    return subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, os.path.abspath(argv[0]),
                           argv[1], "--inside"]).returncode
