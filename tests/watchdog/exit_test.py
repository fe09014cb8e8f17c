#!/usr/bin/env python3
"""Exit evidence and several ranks per process, end to end over the sim: pytest exit_test.py::test_scenario[NAME].

A rank that leaves (cleanly, by abort, or killed) keeps its shared memory as evidence: the
waiting peers' watchdogs say rank_exited naming it, write a dump on its behalf (process.alive
false, process.exit, written_by), and `ncclwatch analyze` reaches rank_exited from the dumps
alone, with the hint that tells the cause apart. A healthy job leaves no shared memory behind.
One process driving 4 ranks (ncclCommInitAll) shows as 4 ranks. Jobs run as in
scenario_test.py (tests/lib/ncclwatch_test: Job and checks).
"""

import glob
import json
import os
import subprocess
import sys
import tempfile
import time
import shutil
import signal
import socket

import pytest

import ncclwatch_test.sim_job as wd  # Job, check_incident, analyze, ...
from ncclwatch_test.exit_checks import check_gone_rank, split_dumps

NS = wd.NS
RANK_BIN = os.path.join(wd.BUILD, "bin", "preload_rank")


def shm_entries(job_id):
    return glob.glob(f"/dev/shm/ncclwatch.{os.getuid()}.{job_id}.*")


def check_log_names(job, rank):
    lines = [line for line in job.output().splitlines() if "NCCLWATCH WARN rank_exited" in line]
    assert lines and all(f"culprit ranks [{rank}]" in line for line in lines), \
        f"the live log says rank_exited culprit ranks [{rank}]: {lines[:2]}"


def run_ddp(name, nranks, args, expect_dumps, gone_state, env=None, cmd=None):
    """Runs ddp_loop (or `cmd`) until the dumps are in; `ncclwatch status` must show rank 1 as
    gone_state (EXITED(status 0), EXITED(signal 6), DEAD) while the others still wait."""
    cmd = cmd or [wd.DDP_LOOP, "--quiet", "--steps", "1000", "--step-ms", "20", "--tp", "1"] + args
    job = wd.Job(name, nranks, cmd, env=env)
    try:
        job.wait(lambda: len(job.dump_files()) >= expect_dumps, 25)
        status = subprocess.run([wd.CLI, "status", "--job", job.job_id], capture_output=True, text=True, timeout=30)
        rows = [line + "," for line in status.stdout.splitlines() if line.split()[:1] == ["1"]]
        assert len(rows) == 1 and f",{gone_state}," in rows[0], f"status shows rank 1 as {gone_state}: {status.stdout}"
        time.sleep(2 * wd.POLL_MS / 1000)  # a later dump would be a duplicate: give it the chance to show
    finally:
        job.stop()
    return job


def rank_1_leaves(name, args, seq, gone_state, hint, env=None, cmd=None, **gone):
    """3 ranks; rank 1 leaves while ranks 0 and 2 wait in #seq (an AllReduce): their dumps and
    log say rank_exited naming rank 1, status shows it as gone_state, its one dump carries `gone`
    (check_gone_rank), and analyze agrees, with `hint`."""
    job = run_ddp(name, 3, args, expect_dumps=3, gone_state=gone_state, env=env, cmd=cmd)
    try:
        dumps = wd.load_dumps(job)
        waiters, gone_dump = split_dumps(dumps, 1)
        comm = wd.ddp_world_comm(job, dumps)
        wd.check_incident(waiters, "rank_exited", comm, seq, "AllReduce", [1], [0, 2], bound_ns=wd.EXITED_BOUND_NS)
        check_gone_rank(gone_dump, 1, [0, 2], **gone)
        check_log_names(job, 1)
        report = wd.analyze(job)
        wd.check_analysis(report, "rank_exited", comm, seq, "AllReduce", [1])
        assert hint in wd.hint_ids(report), f"analyze hints {wd.hint_ids(report)} include {hint}"
    finally:
        job.cleanup()


def clean_exit():
    # Uneven inputs: rank 1's data runs out after step 3; it destroys its communicator and exits
    # 0, while ranks 0 and 2 issue step 4's gradient AllReduce and wait for it.
    rank_1_leaves("clean_exit", ["--exit-rank", "1", "--exit-step", "3"], wd.grad_allreduce_seq(4),
                  "EXITED(status 0)", "uneven_inputs", recorded=True, status=0, left=True,
                  completed=wd.grad_allreduce_seq(3), may_dump_itself=True)


def abort():
    # Rank 1 crashes (abort(), SIGABRT) in backward, before its gradient AllReduce of step 3.
    # Dying within a tracker poll (50 ms) of its last completion, it may not have published it:
    # only what it issued is exact.
    seq = wd.grad_allreduce_seq(3)
    rank_1_leaves("abort", ["--abort-rank", "1", "--abort-step", "3"], seq, "EXITED(signal 6)", "crash",
                  recorded=True, signal=6, left=False, enqueued=seq - 1)


def killed():
    # Rank 1 is killed (SIGKILL, the sim's die fault) inside its gradient AllReduce of step 3:
    # nothing is recorded, its segment stays with a dead pid.
    seq = wd.grad_allreduce_seq(3)
    rank_1_leaves("killed", [], seq, "DEAD", "crash", env={"NCCLSIM_FAULT": f"die:comm=0,seq={seq},rank=1"},
                  recorded=False, left=False, enqueued=seq)


def os_exit():
    # A Python rank leaves with os._exit(7) at step 3 (no atexit or on_exit handler runs): the
    # preload's _exit hook records the status.
    id_dir = tempfile.mkdtemp(prefix="ncclwatch-wd-os_exit-id-")
    try:
        cmd = [sys.executable, wd.PY_RANK, "--lib-dir", wd.SIM_LIB, "--id-dir", id_dir, "--steps", "1000",
               "--os-exit-rank", "1", "--os-exit-step", "3"]
        rank_1_leaves("os_exit", [], 4, "EXITED(status 7)", "crash", cmd=cmd, recorded=True, status=7,
                      left=False, enqueued=3)
    finally:
        shutil.rmtree(id_dir, ignore_errors=True)


def healthy_no_leftovers():
    # Ranks that finish together: whichever leaves last removes every segment of the job, so a
    # healthy job leaves nothing in /dev/shm, and says nothing. Three rounds, as the ranks race.
    for round_ in range(3):
        job = wd.Job(f"healthy_exit{round_}", 3, [wd.DDP_LOOP, "--quiet", "--steps", "8", "--step-ms", "5",
                                                  "--tp", "1"])
        try:
            assert job.wait(lambda: job.proc.poll() is not None, 40), "the healthy job finished"
            assert job.proc.returncode == 0, f"launcher exit {job.proc.returncode}"
            left = shm_entries(job.job_id)
            assert not left, f"round {round_}: no shared memory left behind: {left}"
            assert not job.dump_files(), f"round {round_}: a healthy job dumps nothing"
        finally:
            job.stop()
            job.cleanup()


class InitAllProcess:
    """One process driving 4 ranks (preload_rank MODE: ncclCommInitAll over 4 devices, one thread
    per rank), under the preload with its own job id and dump directory. Leaving the with-block
    releases its stragglers and waits for it to exit."""

    def __init__(self, mode):
        self.tmp = tempfile.mkdtemp(prefix=f"ncclwatch-wd-{mode}-")
        self.job_id = f"wdtest-{mode}-{os.getpid()}"
        self.dump_dir = os.path.join(self.tmp, "dumps")
        env = dict(os.environ, LD_PRELOAD=wd.PRELOAD, NCCLWATCH_JOB_ID=self.job_id, NCCLWATCH_DUMP_DIR=self.dump_dir,
                   NCCLWATCH_STALL_SEC=str(wd.STALL_SEC), NCCLWATCH_POLL_MS=str(wd.POLL_MS),
                   LD_LIBRARY_PATH=wd.SIM_LIB, NCCLSIM_DEVICES="4")
        for var in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"):
            env.pop(var, None)
        self.log = open(os.path.join(self.tmp, "rank.log"), "w")
        self.proc = subprocess.Popen([RANK_BIN, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     env=env, text=True)

    def __enter__(self):
        return self

    def wait_for_dump(self):
        lines = iter(self.proc.stdout.readline, "")  # STREAM lines, then READY
        assert any(line.strip() == "READY" for line in lines), "the 4-rank process is ready"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not glob.glob(os.path.join(self.dump_dir, "*.json")):
            time.sleep(0.2)

    def __exit__(self, *exc):
        self.proc.stdin.close()  # releases the stragglers
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        return False


def init_all_4_pair():
    """One process drives 4 ranks (ncclCommInitAll) and the threads of ranks 2 and 3 straggle:
    analyze (run while it hangs, as the WARN line says) names the process once in its first
    lines, with the comm ranks and devices it drives and its culprit ranks, never "and others
    with the same stacks" nor a "= global" mapping."""
    with InitAllProcess("initall4_pair") as p:
        p.wait_for_dump()
        r = subprocess.run([wd.CLI, "analyze", p.dump_dir], capture_output=True, text=True, timeout=60)
        print(r.stdout)
        head = r.stdout.split("\n\n", 1)[0].splitlines()
        said = "\n".join(head)
        assert r.returncode == 3 and head[:1] == ["VERDICT: straggler"], f"exit {r.returncode}:\n{said}"
        named = [line for line in head if f":{p.proc.pid}" in line]
        assert len(named) == 1 and named[0].strip().startswith(
            f"process {socket.gethostname()}:{p.proc.pid} drives comm ranks 0-3, devices 0-3; culprit ranks 2-3"), \
            f"one line names the process, its comm ranks, devices and culprits:\n{said}"
        assert "  culprits: ranks 2-3" in head, f"the culprits line maps to no global rank:\n{said}"
        assert "others with the same stacks" not in r.stdout, "one process is not 'others'"
    shutil.rmtree(p.tmp, ignore_errors=True)


def init_all_4():
    # One process drives 4 ranks (ncclCommInitAll, one thread per rank); the thread of rank 3
    # straggles before AllReduce #2. The watchdog names communicator rank 3; the one dump of the
    # process lists 4 ranks; `ncclwatch status` shows 4 distinct ranks.
    with InitAllProcess("initall4") as p:
        p.wait_for_dump()
        proc, job_id, dump_dir = p.proc, p.job_id, p.dump_dir
        status = subprocess.run([wd.CLI, "status", "--job", job_id], capture_output=True, text=True, timeout=30)
        rows = [line.split() for line in status.stdout.splitlines() if line.split()[:2] == ["-1", str(proc.pid)]]
        assert sorted(r[3] for r in rows) == ["0/4", "1/4", "2/4", "3/4"], \
            f"status shows 4 distinct ranks of one process: {status.stdout}"
        dumps = [json.load(open(f)) for f in glob.glob(os.path.join(dump_dir, "*.json"))]
        assert len(dumps) == 1, f"one dump for the one process, got {len(dumps)}"
        d = dumps[0]
        v = d["verdict"]
        assert (v["kind"] == "straggler" and v["culprit_ranks"] == [3] and v["seq"] == 2 and
                sorted(v["other_ranks"]) == [0, 1, 2]), f"live verdict {v}"
        assert (sorted(c["rank"] for c in d["comms"]) == [0, 1, 2, 3] and
                all(c["nranks"] == 4 for c in d["comms"])), "the dump lists the process's 4 ranks"
        report = subprocess.run([wd.CLI, "analyze", dump_dir, "--json"], capture_output=True, text=True, timeout=60)
        try:
            a = json.loads(report.stdout).get("verdict", {})
        except ValueError:
            a = {}
        assert a.get("kind") == "straggler" and a.get("culprit_ranks") == [3] and a.get("seq") == 2, \
            f"analyze names the straggler rank 3 at #2: {a}"
    assert proc.returncode == 0, f"the 4-rank process exits 0 once released ({proc.returncode})"
    assert not shm_entries(job_id), "no shared memory left after the process ended"
    shutil.rmtree(p.tmp, ignore_errors=True)


def pid_of_rank(job, rank):
    """The rank process of `job` whose RANK is `rank` (scripts/launch sets it)."""
    for pid in job.rank_pids():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"RANK={rank}".encode() in f.read().split(b"\0"):
                    return pid
        except OSError:
            pass
    return None


def check_frozen_analysis(job, victim):
    """analyze, as the WARN line tells the user to run it: the culprit is the stopped process,
    with its pid, its state and the command that lets it run again."""
    report = wd.analyze(job)  # exit 3
    procs = report.get("culprit_processes", [])
    assert procs and procs[0].get("pid") == victim and procs[0].get("state") == "stopped", \
        f"the culprit process is pid {victim}, stopped: {procs}"
    r = subprocess.run([wd.CLI, "analyze", job.dump_dir], capture_output=True, text=True, timeout=60)
    print(r.stdout)
    head = r.stdout.split("\n\n", 1)[0].splitlines()
    said = "\n".join(head)
    assert r.returncode == 3 and head[:1] == ["VERDICT: straggler"], f"exit {r.returncode}:\n{said}"
    who = [line for line in head if line.strip().startswith(f"rank 1 (") and f":{victim})" in line]
    assert who and "stopped" in who[0], f"a first line gives rank 1's pid {victim} and 'stopped':\n{said}"
    nxt = [line for line in head if line.strip().startswith("next:")]
    assert nxt and f"kill -CONT {victim} on host " in nxt[0], f"the next command lets it run again:\n{said}"


def frozen():
    """Rank 1 is stopped (SIGSTOP: the twin of a rank stuck in a driver, in D state). Its peers
    wait on it: their dumps name it the straggler, and the rank 0 or 2 watchdog writes its dump
    on its behalf with what the kernel says (process.os.state T, written_by), since its own
    threads cannot answer. `ncclwatch status` shows it STOPPED, never idle; `ncclwatch analyze`
    gives its pid, "stopped" and `kill -CONT <pid>` in its first lines."""
    # Rank 1 is stopped while it restores its data loader at step 20 (between two collectives),
    # so its peers wait on it whatever instant the stop lands.
    cmd = [wd.DDP_LOOP, "--quiet", "--steps", "100000", "--step-ms", "20", "--tp", "1",
           "--straggler-rank", "1", "--straggler-step", "20", "--straggler-sec", "600"]
    job = wd.Job("frozen", 3, cmd)
    try:
        assert job.wait(lambda: len(wd.init_lines(job)) >= 3, 20), "the 3 ranks initialised"
        time.sleep(1.0)  # step 20 is 0.4 s in: rank 1 restores its data loader, 2 s before the verdict
        victim = pid_of_rank(job, 1)
        assert victim is not None, f"rank 1's pid among {job.rank_pids()}"
        os.kill(victim, signal.SIGSTOP)
        assert job.wait(lambda: any(d["process"]["pid"] == victim for d in wd.load_dumps(job)), 25), \
            f"a dump of the stopped rank 1 (pid {victim}), written by a peer:\n{job.output()[-2000:]}"
        on_behalf = [d for d in wd.load_dumps(job) if d["process"]["pid"] == victim]
        assert len(on_behalf) == 1, f"one dump of pid {victim}: {[d['incident']['id'] for d in on_behalf]}"
        d = on_behalf[0]
        assert d["process"]["alive"] is True, "the stopped rank is alive"
        assert d["process"].get("os", {}).get("state") == "T", f"its state from /proc: {d['process'].get('os')}"
        assert d.get("written_by", {}).get("pid") not in (None, 0, victim), f"written by a peer: {d.get('written_by')}"
        assert d["verdict"]["kind"] == "straggler" and d["verdict"]["culprit_ranks"] == [1], \
            f"the incident names rank 1 the straggler: {d['verdict']}"
        status = subprocess.run([wd.CLI, "status", "--job", job.job_id], capture_output=True, text=True, timeout=30)
        rows = [line for line in status.stdout.splitlines() if line.split()[:2] == ["1", str(victim)]]
        assert rows and all("STOPPED" in row for row in rows), f"status shows rank 1 STOPPED:\n{status.stdout}"
        doc = json.loads(subprocess.run([wd.CLI, "status", "--job", job.job_id, "--json"], capture_output=True,
                                        text=True, timeout=30).stdout)
        states = {p["pid"]: p["os_state"] for job_doc in doc["jobs"] for p in job_doc["processes"]}
        assert states.get(victim) == "T", f"status --json: os_state of pid {victim}: {states}"
        check_frozen_analysis(job, victim)
    finally:
        job.stop()
        job.cleanup()


SCENARIOS = {
    "clean_exit": clean_exit,
    "abort": abort,
    "killed": killed,
    "os_exit": os_exit,
    "healthy_no_leftovers": healthy_no_leftovers,
    "init_all_4": init_all_4,
    "init_all_4_pair": init_all_4_pair,
    "frozen": frozen,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
