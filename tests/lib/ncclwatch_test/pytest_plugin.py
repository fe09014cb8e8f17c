"""Loaded into every Python test run (tests/CMakeLists.txt passes -p ncclwatch_test.pytest_plugin).

ctest runs one pytest test per entry and reads a skip from the exit status: a run in which every
selected test skipped exits 77 (SKIP_RETURN_CODE) instead of pytest's 0, so a missing
precondition shows as skipped, never as passed. Nothing selected stays a failure (pytest's 5:
the entry names a test that does not exist).
"""

SKIPPED = 77


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus != 0:
        return
    stats = reporter.stats
    ran = [r for key in ("passed", "failed", "error", "xfailed", "xpassed") for r in stats.get(key, [])]
    if stats.get("skipped") and not ran:
        session.exitstatus = SKIPPED
