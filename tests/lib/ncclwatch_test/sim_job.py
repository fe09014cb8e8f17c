"""A simulated job under the preload, and checks of what it dumped: what the scenario files share.

Job starts scripts/launch with LD_PRELOAD=libncclwatch.so, a private job id and dump directory, a
2 s stall threshold and a 200 ms poll; the functions below read its dumps, its log and
`ncclwatch analyze --json`, and assert what must hold. Paths are paths.py's; Job.stop collects
the job's shared memory with NCCLWATCH_GC (tests/watchdog/job_gc.cc).
"""

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from ncclwatch_test import procs
from ncclwatch_test.paths import BUILD, CLI, DDP_LOOP, LAUNCH, PRELOAD, PY_RANK, SIM_LIB, SOURCE, gc_tool  # noqa: F401

STALL_SEC = 2.0
POLL_MS = 200
NS = 1_000_000_000
# Detection is due at the first poll after onset + threshold, i.e. within threshold + 1 poll;
# the bound is threshold + 2 polls. On top of that we allow 1 s of scheduling slack: the
# suite runs two scenarios at once on 2 shared cores, so a poll can start late. Nothing else
# is tolerated (both timestamps are CLOCK_MONOTONIC of this host, taken by the watchdog).
SLACK_SEC = 1.0
LATENCY_BOUND_NS = int((STALL_SEC + 2 * POLL_MS / 1000 + SLACK_SEC) * NS)
# Mismatches have no threshold: they are reported at the first poll that sees them.
MISMATCH_BOUND_NS = int((2 * POLL_MS / 1000 + SLACK_SEC) * NS)
# A dead rank is blamed once its peers have waited 2 polls on it: due at the 3rd poll.
EXITED_BOUND_NS = int((3 * POLL_MS / 1000 + SLACK_SEC) * NS)


def grad_allreduce_seq(step, bcast_every=10):
    """World collective number of ddp_loop's gradient AllReduce at `step` (tp communicator apart)."""
    return sum((1 if s % bcast_every == 0 else 0) + 1 for s in range(step + 1))


class Job:
    def __init__(self, name, nranks, cmd, env=None, rank_env=None, dump_dir=None, extra_job_ids=()):
        self.tmp = tempfile.mkdtemp(prefix=f"ncclwatch-wd-{name}-")
        self.job_id = f"wdtest-{name}-{os.getpid()}"
        self.extra_job_ids = list(extra_job_ids)  # per-rank job ids set through rank_env
        self.dump_dir = dump_dir or os.path.join(self.tmp, "dumps")
        self.nranks = nranks
        self.log_path = os.path.join(self.tmp, "job.log")
        full_env = {
            "LD_PRELOAD": PRELOAD,
            "NCCLWATCH_JOB_ID": self.job_id,
            "NCCLWATCH_DUMP_DIR": self.dump_dir,
            "NCCLWATCH_STALL_SEC": str(STALL_SEC),
            "NCCLWATCH_POLL_MS": str(POLL_MS),
            "NCCL_DEBUG": "INFO",
        }
        full_env.update(env or {})
        args = [sys.executable, LAUNCH, "-n", str(nranks), "--timeout", "60"]
        for k, v in full_env.items():
            args += ["--env", f"{k}={v}"]
        for r, kv in rank_env or []:
            args += ["--rank-env", f"{r}:{kv}"]
        args += ["--"] + cmd
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.start = time.monotonic()

    def dump_files(self):
        return sorted(glob.glob(os.path.join(self.dump_dir, "*.json")))

    def wait(self, until, timeout):
        """Sleeps (blocking) until until() is true, the job ends, or timeout; returns until()."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if until():
                return True
            if self.proc.poll() is not None:
                return until()
            time.sleep(0.2)
        return until()

    def rank_pids(self):
        """The ranks: scripts/launch's children."""
        return procs.children(self.proc.pid)

    def stop(self):
        """Kills every rank (each runs in its own session) and the launcher, then cleans up."""
        for pid in self.rank_pids():
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:  # a rank that is not a group leader (torchrun's workers)
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        self.log.close()
        time.sleep(0.1)  # let the kernel reap the ranks so their segments read as stale
        comms = sorted({line[4] for line in init_lines(self)})
        for job_id in [self.job_id] + self.extra_job_ids:
            subprocess.run([gc_tool(), job_id] + comms, check=False, stdout=subprocess.DEVNULL)

    def output(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def cleanup(self):
        """Removes the job's files; NCCLWATCH_TEST_KEEP=1 keeps them when called (from a finally)
        while a failed assertion propagates."""
        if sys.exc_info()[0] is not None and os.environ.get("NCCLWATCH_TEST_KEEP"):
            print("kept for inspection:", self.tmp)
            return
        shutil.rmtree(self.tmp, ignore_errors=True)


def load_dumps(job):
    return [json.load(open(p)) for p in job.dump_files()]


def init_lines(job):
    """(pid, api, rank, nranks, commId) of every sim 'Init START' line (NCCL_DEBUG=INFO)."""
    pat = re.compile(r"^[^:]+:(\d+):\d+ \[\d+\] NCCL INFO (\w+) comm \S+ rank (\d+) nranks (\d+) .*"
                     r"commId (0x[0-9a-f]+) - Init START")
    out = []
    for line in job.output().splitlines():
        m = pat.match(line)
        if m:
            out.append((int(m[1]), m[2], int(m[3]), int(m[4]), m[5]))
    return out


def comm_of(job, pid, api):
    for p, a, _, _, comm in init_lines(job):
        if p == pid and a == api:
            return comm
    return None


def dumps_of_incident(dumps, kind, comm=None):
    return [d for d in dumps if d["verdict"]["kind"] == kind and (comm is None or d["verdict"]["comm"] == comm)]


def check_incident(dumps, kind, comm, seq, op, culprits, dumping_ranks, bound_ns=LATENCY_BOUND_NS,
                   culprits_accrue=False):
    """The incident (kind, comm) was dumped once by each of dumping_ranks with the expected facts.

    culprits_accrue: the culprit set may grow while ranks dump (init_hang blames a rank once its
    own init is older than the threshold, and inits start up to a few hundred ms apart), so
    each dump names a non-empty subset and together they name every expected culprit."""
    mine = dumps_of_incident(dumps, kind, comm)
    by_rank = {}
    for d in mine:
        by_rank.setdefault(d["process"]["global_rank"], []).append(d)
    assert sorted(by_rank) == sorted(dumping_ranks), \
        f"{kind} on {comm}: dumps from ranks {sorted(by_rank)}, expected {sorted(dumping_ranks)}"
    assert all(len(v) == 1 for v in by_rank.values()), (f"{kind}: one dump per rank per incident: "
          f"{ {r: len(v) for r, v in by_rank.items()} }")
    assert len({d["incident"]["id"] for d in mine}) <= 1, f"{kind}: one incident id across ranks"
    for d in mine:
        v = d["verdict"]
        r = d["process"]["global_rank"]
        assert v["seq"] == seq, f"rank {r}: seq {v['seq']}, expected {seq}"
        assert v["op"] == op, f"rank {r}: op {v['op']}, expected {op}"
        if culprits_accrue:
            assert v["culprit_ranks"] and set(v["culprit_ranks"]) <= set(culprits), \
                f"rank {r}: culprits {v['culprit_ranks']}, expected a subset of {sorted(culprits)}"
        else:
            assert sorted(v["culprit_ranks"]) == sorted(culprits), \
                f"rank {r}: culprits {v['culprit_ranks']}, expected {sorted(culprits)}"
        assert d["native_stacks"]["threads"], f"rank {r}: native stacks present"
    if culprits_accrue:
        named = set(r for d in mine for r in d["verdict"]["culprit_ranks"])
        assert named == set(culprits), (f"{kind}: the dumps together name culprits {sorted(named)}, "
              f"expected {sorted(culprits)}")
    if mine:
        since = mine[0]["verdict"]["since_mono_ns"]
        assert since > 0, f"{kind}: onset set"
        detections = [d["incident"]["detected_mono_ns"] for d in mine]
        first, last = min(detections) - since, max(detections) - since
        assert last <= bound_ns, f"{kind}: onset -> last rank's detection {last / NS:.2f} s > {bound_ns / NS:.2f} s"
        assert first >= 0, f"{kind}: detected before its onset ({first} ns)"
        print(f"LATENCY {kind}: onset->verdict {first / NS:.3f} s, onset->all dumps {last / NS:.3f} s")
    return mine


def analyze(job):
    r = subprocess.run([CLI, "analyze", job.dump_dir, "--json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 3, f"analyze exit {r.returncode} (expected 3 = hang): {r.stderr.strip()[:300]}"
    try:
        return json.loads(r.stdout)
    except ValueError:
        pytest.fail(f"analyze --json output is not JSON: {r.stdout[:200]}")


def hint_ids(report):
    return [h.get("id") for h in report.get("hints", [])]


def check_analysis(report, kind, comm, seq, op, culprits):
    v = report.get("verdict", {})
    assert v.get("kind") == kind, f"analyze kind {v.get('kind')}, expected {kind}"
    if comm is not None:
        assert v.get("comm") == comm, f"analyze comm {v.get('comm')}, expected {comm}"
    assert v.get("seq") == seq, f"analyze seq {v.get('seq')}, expected {seq}"
    if op is not None:
        assert v.get("op") == op, f"analyze op {v.get('op')}, expected {op}"
    assert sorted(v.get("culprit_ranks", [])) == sorted(culprits), f"analyze culprits {v.get('culprit_ranks')}, expected {culprits}"


def check_python_data_loader_stall(culprit):
    """The dump of a Python rank that stalls in its data loader (the examples' planted stall:
    skip_samples_to_resume_position in restore_data_loader_state) shows both frames."""
    assert culprit is not None, "the Python straggler dumped"
    py = culprit["python_stacks"]
    assert py.get("available"), f"Python stacks available ({py.get('reason')})"
    funcs = [f["function"] for t in py.get("threads", []) for f in t["frames"]]
    assert "skip_samples_to_resume_position" in funcs and "restore_data_loader_state" in funcs, \
        f"Python frames of the stall shown: {funcs[:8]}"


def frames_of(dump, pid_filter=None):
    names = []
    for t in dump["native_stacks"]["threads"]:
        names += [f.get("function", "") for f in t["frames"]]
    return names


def dump_of_rank(dumps, rank):
    return next((d for d in dumps if d["process"]["global_rank"] == rank), None)


def run_scenario(name, nranks, args, expect_dumps, env=None, dump_timeout=25, ddp=True):
    cmd = ([DDP_LOOP, "--quiet", "--steps", "1000", "--step-ms", "20"] + args) if ddp else args
    job = Job(name, nranks, cmd, env=env)
    try:
        job.wait(lambda: len(job.dump_files()) >= expect_dumps, dump_timeout)
        time.sleep(2 * POLL_MS / 1000)  # a later dump would be a duplicate: give it the chance to show
    finally:
        job.stop()
    return job


def ddp_world_comm(job, dumps):
    d = dump_of_rank(dumps, 0)
    return comm_of(job, d["process"]["pid"], "ncclCommInitRank") if d else None
