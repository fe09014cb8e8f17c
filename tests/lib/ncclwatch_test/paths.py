"""The paths ctest passes to every test (tests/CMakeLists.txt) and the programs tests start."""

import os

BUILD = os.environ["NCCLWATCH_BUILD_DIR"]
SOURCE = os.environ["NCCLWATCH_SOURCE_DIR"]
PRELOAD = os.path.join(BUILD, "lib", "libncclwatch.so")
CLI = os.path.join(BUILD, "bin", "ncclwatch")
DDP_LOOP = os.path.join(BUILD, "examples", "ddp_loop")
SIM_LIB = os.path.join(BUILD, "sim", "lib")
LAUNCH = os.path.join(SOURCE, "scripts", "launch")
SIM_CLUSTER = os.path.join(SOURCE, "scripts", "sim-cluster")
SIM_EXEC = os.path.join(SOURCE, "scripts", "sim-exec")
PY_RANK = os.path.join(SOURCE, "examples", "python", "ddp_rank.py")
TRAIN = os.path.join(SOURCE, "examples", "torch", "train.py")


def gc_tool():
    """tests/watchdog/job_gc.cc, which removes a job's shared memory: NCCLWATCH_GC, set by the
    entries whose jobs leave some."""
    return os.environ["NCCLWATCH_GC"]
