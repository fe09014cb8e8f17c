"""ncclwatch's Python test library (tests/lib, on PYTHONPATH for every ctest entry).

Every Python test is a pytest module run through ctest (ncclwatch_add_pytest in
tests/CMakeLists.txt: one ctest entry per pytest test, so a failure is named), and checks with
plain `assert`.

paths          the build and source paths ctest passes, and the programs the tests start
procs          the process tree of a job, /proc scans by environment, a process's start time
sim_job        Job (a simulated job under the preload), its dumps, analyze, and the checks of an incident
exit_checks    the checks of the dump of a rank that left its job
pytest_plugin  loaded by every run (-p ncclwatch_test.pytest_plugin): a run whose tests all
               skipped exits 77, ctest's SKIP_RETURN_CODE
"""

import pytest

# The helpers assert too: let pytest show the values of their failed comparisons.
pytest.register_assert_rewrite("ncclwatch_test.sim_job", "ncclwatch_test.exit_checks", "ncclwatch_test.procs")
