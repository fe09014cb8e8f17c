#!/usr/bin/env python3
"""End-to-end: the watcher names hangs of jobs that reach NCCL only by name lookup.

pytest reach_scenarios.py::test_scenario[NAME], over the sim, 2 ranks through scripts/launch, with the helpers of
tests/lib/ncclwatch_test (2 s stall threshold, 200 ms poll).
  ctypes_straggler   Python, ctypes.CDLL + attribute lookup only; rank 1 stalls in Python
  dlsym_straggler    C, dlopen(RTLD_LOCAL) + dlsym only; rank 1 stalls in a C function
  config_hang        C via dlsym, ncclAllReduceConfig, NCCLSIM_FAULT hangs collective #4
  signal_straggler   C via dlsym, rank 1 never sends its ncclSignal; rank 0 waits in
                     ncclWaitSignal, then issues the AllReduce rank 1 never reaches
  proc_sync_hang     C via dlsym, the stream sync is the driver's cuStreamSynchronize found
                     through cuGetProcAddress_v2 (as a static CUDA runtime finds it);
                     NCCLSIM_FAULT hangs collective #4 and both ranks block in that sync
  proc_ptds_sync_hang  the same with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                     (cuStreamSynchronize_ptsz)
  entry_point_sync_hang  the same through the runtime's cudaGetDriverEntryPoint
  driver_dlsym_sync_hang  the same with cuStreamSynchronize found by dlsym in libcuda.so.1
"""

import os
import shutil
import sys
import tempfile

import pytest

import ncclwatch_test.sim_job as st

CTYPES_RANK = os.path.join(st.SOURCE, "examples", "reach", "ctypes_rank.py")
DLSYM_RANK = os.path.join(st.BUILD, "examples", "dlsym_rank")
STALL = ["--straggler-rank", "1", "--straggler-step", "3", "--straggler-sec", "60"]


def run(name, cmd, expect_dumps, env=None):
    id_dir = tempfile.mkdtemp(prefix=f"ncclwatch-reach-{name}-")
    try:
        return st.run_scenario(name, 2, cmd + ["--lib-dir", st.SIM_LIB, "--id-dir", id_dir], expect_dumps,
                               env=env, ddp=False)
    finally:
        shutil.rmtree(id_dir, ignore_errors=True)


def world_comm(job, dumps):
    d0 = st.dump_of_rank(dumps, 0)
    return st.comm_of(job, d0["process"]["pid"], "ncclCommInitRank") if d0 else None


def check_named(job, kind, culprits):
    """Both ranks dumped one incident of `kind` at collective #4 (AllReduce) naming `culprits`.

    Without the dlsym hook these jobs publish nothing, so there would be no dump at all."""
    dumps = st.load_dumps(job)
    assert len(dumps) >= 1, f"dumps written ({len(dumps)}); job output:\n{job.output()[-1500:]}"
    comm = world_comm(job, dumps)
    st.check_incident(dumps, kind, comm, 4, "AllReduce", culprits, [0, 1])
    return dumps, comm


def ctypes_straggler():
    job = run("ctypes_straggler", [sys.executable, CTYPES_RANK, "--steps", "1000"] + STALL, expect_dumps=2)
    try:
        dumps, comm = check_named(job, "straggler", [1])
        culprit = st.dump_of_rank(dumps, 1)
        st.check_python_data_loader_stall(culprit)
        st.check_analysis(st.analyze(job), "straggler", comm, 4, "AllReduce", [1])
    finally:
        job.cleanup()


def dlsym_straggler():
    job = run("dlsym_straggler", [DLSYM_RANK, "--mode", "allreduce"] + STALL, expect_dumps=2)
    try:
        dumps, _ = check_named(job, "straggler", [1])
        culprit = st.dump_of_rank(dumps, 1)
        assert culprit is not None, "the straggler dumped"
        assert any("StallInCheckpointLoad" in n for n in st.frames_of(culprit)), \
            "the straggler's native stack shows where it stalls"
    finally:
        job.cleanup()


def config_hang():
    job = run("config_hang", [DLSYM_RANK, "--mode", "config"], expect_dumps=2,
              env={"NCCLSIM_FAULT": "hang:seq=4"})
    try:
        check_named(job, "collective_hang", [0, 1])
    finally:
        job.cleanup()


def signal_straggler():
    job = run("signal_straggler", [DLSYM_RANK, "--mode", "signal"] + STALL, expect_dumps=2)
    try:
        dumps, _ = check_named(job, "straggler", [1])
        waiter = st.dump_of_rank(dumps, 0)
        assert waiter is not None, "the waiting rank dumped"
        records = [r for c in waiter.get("comms", []) for r in c.get("records", [])]
        waits = [r for r in records if r.get("op") == "WaitSignal"]
        assert len(waits) == 4 and all(r.get("peer") == 1 for r in waits), \
            f"rank 0's ring holds its 4 ncclWaitSignal on peer 1: {waits[-2:]}"
    finally:
        job.cleanup()


def driver_sync_hang(name, how):
    """Both ranks block in the driver's cuStreamSynchronize behind hung collective #4: the final
    analysis says collective_hang, and its notes that the ranks are blocked in that very call.

    Without the driver hooks (or without the lookup handing them out) nothing publishes the
    blocked sync, and the notes say nothing of it."""
    job = run(name, [DLSYM_RANK, "--mode", "allreduce", "--sync", how], expect_dumps=2,
              env={"NCCLSIM_FAULT": "hang:seq=4"})
    try:
        dumps, comm = check_named(job, "collective_hang", [0, 1])
        for d in dumps:
            calls = [s.get("api") for s in d.get("host_syncs", [])]
            assert calls == ["driver"], f"rank {d['process']['global_rank']}: one blocked driver sync: {calls}"
        report = st.analyze(job)
        st.check_analysis(report, "collective_hang", comm, 4, "AllReduce", [0, 1])
        notes = report.get("notes", [])
        for rank in (0, 1):
            assert any(f"rank {rank} blocked in cuStreamSynchronize (stream 0x" in n for n in notes), \
                f"analyze notes rank {rank} blocked in cuStreamSynchronize: {notes}"
    finally:
        job.cleanup()


def proc_sync_hang():
    driver_sync_hang("proc_sync_hang", "proc")


def proc_ptds_sync_hang():
    driver_sync_hang("proc_ptds_sync_hang", "proc-ptds")


def entry_point_sync_hang():
    driver_sync_hang("entry_point_sync_hang", "entry-point")


def driver_dlsym_sync_hang():
    driver_sync_hang("driver_dlsym_sync_hang", "driver")


SCENARIOS = {f.__name__: f for f in (ctypes_straggler, dlsym_straggler, config_hang, signal_straggler, proc_sync_hang,
                                     proc_ptds_sync_hang, entry_point_sync_hang, driver_dlsym_sync_hang)}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
