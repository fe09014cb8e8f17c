"""Step-time impact, watchdog CPU and shm footprint: healthy ddp_loop runs with and without the
preload, alternated. One run of S steps minus one run of 1 step (startup, init, teardown) of the
same kind gives the time of S-1 steps; the ratio is paired within each round."""

import glob
import os
import threading
import time

import ranks
from stats import median, spread

SECTION = "step time"
CPU_SECTION = "watchdog CPU + shm"
NRANKS = 4
STEP_MS = 50
GOAL_RATIO = 1.01
GOAL_CPU_PCT = 0.1          # of one core, per rank: the watchdog thread
GOAL_ADDED_CPU_PCT = 0.15   # of one core, per rank: everything of ours, hooks and threads
THREADS = {"ncclwatch-wd": "watchdog thread", "ncclwatch": "tracker thread"}
GOAL_SHM_BYTES = 2 << 20    # reserved per rank (16 communicators: teardown.py)


# Per-thread CPU percentages gathered over the preload runs of one section run.
ctx_thread_cpu = {}


class ShmSampler:
    """Largest total size of the job's /dev/shm segments seen while the job runs."""

    def __init__(self, job_id):
        self.job_id, self.max_count, self.max_bytes, self.max_resident = job_id, 0, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        while not self._stop.wait(0.1):
            sizes = []
            for path in ranks.segments(self.job_id):
                try:
                    st = os.stat(path)
                    sizes.append((st.st_size, st.st_blocks * 512))
                except FileNotFoundError:
                    pass
            if len(sizes) >= self.max_count:
                self.max_count = len(sizes)
                self.max_bytes = max(self.max_bytes, sum(s for s, _ in sizes))
                self.max_resident = max(self.max_resident, sum(r for _, r in sizes))

    def stop(self):
        self._stop.set()
        self._thread.join()


class ThreadCpuSampler:
    """CPU time of ncclwatch's own threads in every rank, from /proc/<pid>/task/<tid>/schedstat
    (nanoseconds; utime/stime ticks are too coarse for a thread that polls twice a second).
    For each thread: the CPU it used between the first and the last sample, over that time."""

    def __init__(self, pids):
        self.pids, self.seen = pids, {}  # (pid, tid) -> [name, first_mono, first_ns, last_mono, last_ns]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        while not self._stop.wait(0.1):
            now = time.monotonic()
            for pid in self.pids:
                for task in glob.glob(f"/proc/{pid}/task/*"):
                    try:
                        name = open(f"{task}/comm").read().strip()
                        if name not in THREADS:
                            continue
                        on_cpu = int(open(f"{task}/schedstat").read().split()[0])
                    except (OSError, ValueError, IndexError):
                        continue
                    key = (pid, task)
                    if key not in self.seen:
                        self.seen[key] = [name, now, on_cpu, now, on_cpu]
                    else:
                        self.seen[key][3:] = [now, on_cpu]

    def stop(self):
        self._stop.set()
        self._thread.join()

    def percent_by_thread(self):
        """{thread name: [% of a core of each rank's thread]}, threads seen for at least 1 s."""
        out = {}
        for name, t0, ns0, t1, ns1 in self.seen.values():
            if t1 - t0 >= 1.0:
                out.setdefault(name, []).append(100 * (ns1 - ns0) / 1e9 / (t1 - t0))
        return out


def run_job(ctx, steps, preload, job_id, sample_shm=False, sample_threads=False):
    env = {"NCCLWATCH_JOB_ID": job_id}
    if preload:
        env["LD_PRELOAD"] = ctx.preload
    cmd = [ctx.example("ddp_loop"), "--steps", str(steps), "--step-ms", str(STEP_MS), "--quiet"]
    job = ranks.Job(cmd, NRANKS, env, job_id)
    sampler = ShmSampler(job_id) if sample_shm else None
    threads = ThreadCpuSampler([rk.pid for rk in job.ranks]) if sample_threads else None
    finished = job.wait(60 + steps * STEP_MS / 1000 * 3)
    if sampler:
        sampler.stop()
    if threads:
        threads.stop()
        for name, values in threads.percent_by_thread().items():
            ctx_thread_cpu.setdefault(name, []).extend(values)
    job.stop()
    if not finished or not job.ok():
        raise RuntimeError(f"ddp_loop {'with' if preload else 'without'} preload failed "
                           f"(exit codes {[rk.exit_code() for rk in job.ranks]})")
    cpu = sum(rk.cpu_sec for rk in job.ranks) / NRANKS
    return job.wall_sec(), cpu, sampler


def run(ctx, results):
    rounds, steps = (3, 40) if ctx.quick else (6, 100)
    ratios, plain_steps, hooked_steps, cpu_added_pct = [], [], [], []
    shm = None
    for i in range(rounds):
        per_step, cpu = {}, {}
        for preload in ((False, True) if i % 2 == 0 else (True, False)):
            tag = f"{ctx.tag}-step-{i}-{int(preload)}"
            wall, cpu_long, sampler = run_job(ctx, steps, preload, tag + "L", sample_shm=preload and shm is None,
                                              sample_threads=preload)
            wall_short, cpu_short, _ = run_job(ctx, 1, preload, tag + "S")
            per_step[preload] = (wall - wall_short) / (steps - 1)
            cpu[preload] = ((cpu_long - cpu_short), (wall - wall_short))
            if sampler:
                shm = sampler
        ratios.append(per_step[True] / per_step[False])
        plain_steps.append(per_step[False] * 1000)
        hooked_steps.append(per_step[True] * 1000)
        cpu_added_pct.append(100 * (cpu[True][0] - cpu[False][0]) / cpu[True][1])
    print(f"  {NRANKS} ranks, --step-ms {STEP_MS}, {steps} steps, {rounds} alternating rounds")
    print(f"  ms/step without preload (min/median/max): {spread(plain_steps)}")
    print(f"  ms/step with preload:                     {spread(hooked_steps)}")
    print(f"  paired ratios: {' '.join(f'{r:.4f}' for r in ratios)}")
    results.add(SECTION, "step time ratio with/without preload (median of pairs)",
                f"{median(ratios):.4f} (min {min(ratios):.4f}, max {max(ratios):.4f}; "
                f"{median(plain_steps):.2f} vs {median(hooked_steps):.2f} ms/step)",
                f"<= {GOAL_RATIO}", median(ratios) <= GOAL_RATIO)
    print(f"  added CPU per rank, % of a core: {spread(cpu_added_pct)}")
    results.add(CPU_SECTION, "added CPU per rank (tracker + watchdog + hooks)",
                f"{median(cpu_added_pct):.2f} % of a core (min/med/max {spread(cpu_added_pct)})",
                f"<= {GOAL_ADDED_CPU_PCT} %", median(cpu_added_pct) <= GOAL_ADDED_CPU_PCT)
    for name, label in THREADS.items():
        values = ctx_thread_cpu.get(name, [])
        if not values:
            results.add(CPU_SECTION, f"{label} CPU per rank", "thread not seen",
                        f"<= {GOAL_CPU_PCT} %" if name == "ncclwatch-wd" else "", False if name == "ncclwatch-wd" else None)
            continue
        value = f"{median(values):.3f} % of a core (min/med/max {spread(values)}, {len(values)} rank threads)"
        print(f"  {label}: {value}")
        if name == "ncclwatch-wd":
            results.add(CPU_SECTION, f"{label} CPU per rank (default poll)", value, f"<= {GOAL_CPU_PCT} %",
                        median(values) <= GOAL_CPU_PCT)
        else:
            results.add(CPU_SECTION, f"{label} CPU per rank", value)
    if shm is None or shm.max_count == 0:
        results.add(CPU_SECTION, "shm per rank", "no segment seen", f"<= {GOAL_SHM_BYTES >> 10} KiB", False)
        return
    reserved = shm.max_resident / shm.max_count  # tmpfs backs exactly what was reserved
    print(f"  shm: {shm.max_count} segments, {shm.max_bytes} bytes of address space, {shm.max_resident} reserved")
    results.add(CPU_SECTION, "shm per rank (reserved = resident / address space)",
                f"{reserved / 1024:.0f} KiB / {shm.max_bytes / shm.max_count / 2**20:.1f} MiB "
                f"({shm.max_count} segments, 2 communicators)", f"<= {GOAL_SHM_BYTES >> 10} KiB reserved",
                reserved <= GOAL_SHM_BYTES)
