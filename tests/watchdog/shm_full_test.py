#!/usr/bin/env python3
"""A full /dev/shm costs the watcher, never the job: pytest shm_full_test.py::test_scenario[NAME].

Runs in a private mount namespace whose /dev/shm is a small tmpfs (as Docker's 64 MiB default,
shared with DataLoader workers), 4 ranks of ddp_loop through scripts/launch, once without and
once with the preload, and compares exit statuses; the preload must log exactly one warning per
rank and nothing else goes wrong.

  mid_run       /dev/shm fills up 1 s into the run, leaving 1 MiB (what the sim itself needs to
                create communicators); then each rank creates 8 more communicators, for which
                the watcher cannot reserve a ring (NCCLWATCH_RING=65536: 4 MiB a communicator).
  before_start  /dev/shm is full before the job starts (2 MiB left for the sim): no rank can
                create its segment and each runs unwatched.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

import ncclwatch_test.sim_job as wd

SHM_MIB = 96  # room for 4 ranks' 16.8 MiB first reservations at NCCLWATCH_RING=65536
JOB = [wd.DDP_LOOP, "--tp", "1", "--steps", "150", "--step-ms", "20", "--extra-comms", "8",
       "--extra-comms-step", "75", "--quiet"]


def shm_free_kib():
    st = os.statvfs("/dev/shm")
    return st.f_bavail * st.f_frsize // 1024


def fill_leaving(kib):
    """Fills /dev/shm up to `kib` KiB free, as other users of the machine would."""
    with open("/dev/shm/filler-%d" % time.monotonic_ns(), "wb", buffering=0) as f:
        chunk = b"\0" * 65536
        while shm_free_kib() > kib + 64:
            f.write(chunk)
        while shm_free_kib() > kib:
            f.write(b"\0" * 4096)


def fresh_shm():
    subprocess.run(["umount", "/dev/shm"], check=False, stderr=subprocess.DEVNULL)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SHM_MIB}m,mode=1777", "tmpfs", "/dev/shm"], check=True)


def run_job(watcher, fill_at, leave_kib, tmp):
    """(exit status, output) of one 4-rank run; fills /dev/shm at fill_at s (None: before)."""
    fresh_shm()
    env = dict(os.environ, LD_LIBRARY_PATH=wd.SIM_LIB)
    env.pop("LD_PRELOAD", None)
    if watcher:
        env.update(LD_PRELOAD=wd.PRELOAD, NCCLWATCH_RING="65536", NCCLWATCH_JOB_ID=f"shmfull-{os.getpid()}",
                   NCCLWATCH_DUMP_DIR=os.path.join(tmp, "dumps"), NCCLWATCH_STALL_SEC="30")
    if fill_at is None:
        fill_leaving(leave_kib)
    log_path = os.path.join(tmp, f"job-{watcher}.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, wd.LAUNCH, "-n", "4", "--timeout", "60", "--"] + JOB,
                                stdout=log, stderr=subprocess.STDOUT, env=env)
        if fill_at is not None:
            time.sleep(fill_at)
            fill_leaving(leave_kib)
        rc = proc.wait(timeout=90)
    return rc, open(log_path, errors="replace").read()


def scenario(fill_at, leave_kib, expected_warning):
    tmp = tempfile.mkdtemp(prefix="ncclwatch-shmfull-")
    try:
        plain_rc, plain_out = run_job(False, fill_at, leave_kib, tmp)
        assert plain_rc == 0, \
            f"without the watcher the job survives this /dev/shm (rc {plain_rc}):\n{plain_out[-1500:]}"
        rc, out = run_job(True, fill_at, leave_kib, tmp)
        assert rc == plain_rc, f"with the watcher, the same exit status ({rc}, without: {plain_rc}):\n{out[-1500:]}"
        ours = [l for l in out.splitlines() if "ncclwatch" in l.lower()]
        matching = [l for l in ours if expected_warning in l]
        assert len(matching) == 4, \
            f"one warning per rank containing '{expected_warning}': {len(matching)} of {ours[:6]}"
        assert len(ours) == len(matching), \
            f"and nothing else from ncclwatch: {[l for l in ours if l not in matching][:4]}"
        assert all("No space left on device" in l for l in matching), f"the warning says why: {matching[:1]}"
        assert not os.path.exists(os.path.join(tmp, "dumps")), "no dump (the job is healthy)"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


SCENARIOS = {
    "mid_run": lambda: scenario(1.0, 1024, "cannot reserve"),
    "before_start": lambda: scenario(None, 2048, "cannot publish progress"),
}
INSIDE = "NCCLWATCH_SHM_FULL_INSIDE"  # set in the copy of this test that runs in the namespace


@pytest.mark.parametrize("name", SCENARIOS)
def test_shm_full(name, request):
    if os.environ.get(INSIDE) == "1":
        try:
            SCENARIOS[name]()
        finally:
            subprocess.run(["umount", "/dev/shm"], check=False)
        return
    # A private mount namespace: the small /dev/shm is this test's alone. The same test runs in
    # it under pytest; its failures are printed there and fail this one.
    r = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, "-m", "pytest",
                        "-p", "ncclwatch_test.pytest_plugin", "-p", "no:cacheprovider", "-q", "-rfEs",
                        f"{os.path.abspath(__file__)}::{request.node.name}"], env=dict(os.environ, **{INSIDE: "1"}))
    assert r.returncode == 0, f"{name} in a private mount namespace: exit {r.returncode} (its output above)"
