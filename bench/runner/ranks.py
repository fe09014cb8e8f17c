"""Starts the N ranks of a local job the way torchrun does, and waits for them exactly.

scripts/launch polls its ranks every 50 ms, which would blur run times by as much as the
effect being measured; here every rank is reaped with a blocking wait4, which also gives
each rank's own CPU time. Each rank leads its own session, so stop() reaches its children.
"""

import glob
import os
import signal
import socket
import subprocess
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Rank:
    def __init__(self, popen):
        self.popen = popen
        self.pid = popen.pid
        self.status = None      # raw wait status
        self.cpu_sec = 0.0      # utime + stime of the rank and its reaped children
        self.end = None         # time.monotonic() at exit

    def exit_code(self):
        if self.status is None:
            return None
        if os.WIFSIGNALED(self.status):
            return 128 + os.WTERMSIG(self.status)
        return os.WEXITSTATUS(self.status)


class Job:
    """A running job: `nranks` copies of `cmd` with torchrun's environment plus `env`."""

    def __init__(self, cmd, nranks, env, job_id, rank_env=None):
        self.job_id = job_id
        port = free_port()
        self.start = time.monotonic()
        self.ranks = []
        for r in range(nranks):
            e = dict(os.environ)
            e.update(env)
            e.update(RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(nranks), LOCAL_WORLD_SIZE=str(nranks),
                     GROUP_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                     TORCHELASTIC_RUN_ID=job_id, NCCLWATCH_JOB_ID=job_id)
            e.update((rank_env or {}).get(r, {}))
            try:
                p = subprocess.Popen(cmd, env=e, start_new_session=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            except OSError:
                for rk in self.ranks:  # no half-started job is left behind
                    os.killpg(rk.pid, signal.SIGKILL)
                    os.waitpid(rk.pid, 0)
                    rk.popen.returncode = -signal.SIGKILL
                raise
            self.ranks.append(Rank(p))
        self._reapers = [threading.Thread(target=self._reap, args=(rk,), daemon=True) for rk in self.ranks]
        for t in self._reapers:
            t.start()

    def _reap(self, rank):
        _, status, usage = os.wait4(rank.pid, 0)
        rank.end = time.monotonic()
        rank.cpu_sec = usage.ru_utime + usage.ru_stime
        rank.status = status
        rank.popen.returncode = 0  # reaped here; keeps Popen from waiting on a recycled pid

    def running(self):
        return any(rk.status is None for rk in self.ranks)

    def wait(self, timeout):
        """True when every rank exited within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        for t in self._reapers:
            t.join(max(0.0, deadline - time.monotonic()))
        return not self.running()

    def stop(self, grace=3.0):
        """SIGTERM then SIGKILL every rank's session; removes this job's shm segments."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for rk in self.ranks:
                if rk.status is None:
                    try:
                        os.killpg(rk.pid, sig)
                    except ProcessLookupError:
                        pass
            if self.wait(grace):
                break
        self.wait(5.0)
        remove_segments(self.job_id)

    def wall_sec(self):
        ends = [rk.end for rk in self.ranks if rk.end is not None]
        return max(ends) - self.start if ends else None

    def ok(self):
        return all(rk.exit_code() == 0 for rk in self.ranks)


def segments(job_id):
    """The preload's /dev/shm segments of this job (see preload/README.md for the name)."""
    return glob.glob(f"/dev/shm/ncclwatch.{os.getuid()}.{job_id}.*")


def remove_segments(job_id):
    for path in segments(job_id):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
