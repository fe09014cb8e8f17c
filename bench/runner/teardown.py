"""Shared memory per rank after the reservation change, and what the last-gasp path costs.

shm: healthy ddp_loop jobs of 4 ranks under the preload, one with 2 communicators (world +
tensor-parallel), one with 16 (14 more split mid-run); each segment's size (address space) and
st_blocks (what tmpfs backs: every page we write was reserved first, so reserved = resident)
are sampled every 100 ms, and the largest per rank is reported.

teardown: (a) a clean exit: 2-rank, 5-step jobs with last gasps on (default) and off
(NCCLWATCH_LAST_GASP_SEC=0), alternated, median wall time; (b) an idle SIGTERM: a healthy job
stopped 2 s in, time from SIGTERM to every rank gone, on and off. Neither may write a dump."""

import os
import shutil
import signal
import tempfile
import time

import ranks
from stats import median, spread

SECTION = "shm + teardown"
GOAL_RESERVED = 2 << 20  # per rank with 16 communicators


class BlockSampler:
    """Largest (size, st_blocks bytes) of any one segment of the job, every 100 ms."""

    def __init__(self, job_id):
        import threading
        self.job_id, self.size, self.reserved, self.count = job_id, 0, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        while not self._stop.wait(0.1):
            paths = ranks.segments(self.job_id)
            self.count = max(self.count, len(paths))
            for path in paths:
                try:
                    st = os.stat(path)
                except FileNotFoundError:
                    continue
                self.size = max(self.size, st.st_size)
                self.reserved = max(self.reserved, st.st_blocks * 512)

    def stop(self):
        self._stop.set()
        self._thread.join()


def shm_case(ctx, results, name, extra):
    job_id = f"{ctx.tag}-shm-{name}"
    dumps = tempfile.mkdtemp(prefix="ncclwatch-bench-shm-")
    env = {"LD_PRELOAD": ctx.preload, "NCCLWATCH_DUMP_DIR": dumps}
    cmd = [ctx.example("ddp_loop"), "--tp", "2", "--steps", "60", "--step-ms", "20", "--quiet"]
    if extra:
        cmd += ["--extra-comms", str(extra), "--extra-comms-step", "20"]
    job = ranks.Job(cmd, 4, env, job_id)
    sampler = BlockSampler(job_id)
    ok = job.wait(120) and job.ok()
    sampler.stop()
    job.stop()
    shutil.rmtree(dumps, ignore_errors=True)
    comms = 2 + extra
    if not ok or sampler.count == 0:
        results.add(SECTION, f"shm per rank, {comms} communicators", "run failed or no segment seen",
                    f"<= {GOAL_RESERVED >> 20} MiB" if comms == 16 else "", False)
        return
    value = (f"{sampler.reserved / 1024:.0f} KiB reserved = resident; {sampler.size / 2**20:.1f} MiB of address "
             f"space ({sampler.count} segments)")
    print(f"  shm, {comms} communicators: {value}")
    goal = f"<= {GOAL_RESERVED >> 20} MiB reserved" if comms == 16 else ""
    results.add(SECTION, f"shm per rank, {comms} communicators", value, goal,
                sampler.reserved <= GOAL_RESERVED if comms == 16 else None)


def timed_job(ctx, tag, last_gasp, steps, sigterm_after=None):
    """(seconds, dumps written): the whole run, or from SIGTERM to every rank gone."""
    dumps = tempfile.mkdtemp(prefix="ncclwatch-bench-teardown-")
    env = {"LD_PRELOAD": ctx.preload, "NCCLWATCH_DUMP_DIR": dumps}
    if not last_gasp:
        env["NCCLWATCH_LAST_GASP_SEC"] = "0"
    cmd = [ctx.example("ddp_loop"), "--tp", "1", "--steps", str(steps), "--step-ms", "20", "--quiet"]
    job = ranks.Job(cmd, 2, env, tag)
    if sigterm_after is None:
        job.wait(60)
        took = job.wall_sec()
    else:
        time.sleep(sigterm_after)
        sent = time.monotonic()
        for rk in job.ranks:
            try:
                os.killpg(rk.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        job.wait(30)
        took = max(rk.end for rk in job.ranks if rk.end is not None) - sent
    job.stop()
    written = len([f for f in os.listdir(dumps) if f.endswith(".json")]) if os.path.isdir(dumps) else 0
    shutil.rmtree(dumps, ignore_errors=True)
    return took, written


def teardown_case(ctx, results, label, steps, sigterm_after):
    rounds = 3 if ctx.quick else 6
    times = {True: [], False: []}
    written = 0
    for i in range(rounds):
        for on in ((True, False) if i % 2 == 0 else (False, True)):
            took, n = timed_job(ctx, f"{ctx.tag}-td-{label[:4]}-{i}-{int(on)}", on, steps, sigterm_after)
            times[on].append(took * 1000)
            written += n
    on, off = median(times[True]), median(times[False])
    print(f"  {label}: last gasp on {spread(times[True])} ms, off {spread(times[False])} ms, {written} dumps")
    results.add(SECTION, f"{label}: last gasp on vs off (median of {rounds})",
                f"{on:.0f} vs {off:.0f} ms ({on - off:+.0f} ms); {written} dumps",
                "no dump" if sigterm_after is not None else "no dump, + <= 5 % ",
                written == 0 and (sigterm_after is not None or on <= off * 1.05))


def run(ctx, results):
    shm_case(ctx, results, "2", 0)
    shm_case(ctx, results, "16", 14)
    teardown_case(ctx, results, "clean exit, 2 ranks x 5 steps", 5, None)
    teardown_case(ctx, results, "idle SIGTERM to a healthy 2-rank job", 100000, 2.0)
