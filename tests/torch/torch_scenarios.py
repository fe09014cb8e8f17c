#!/usr/bin/env python3
"""Real PyTorch on the sim, under the watcher: pytest torch_scenarios.py::test_scenario[NAME].

Each scenario runs examples/torch/train.py with torchrun (torch 2.15, the pinned venv of
`scripts/setup --torch`) through `scripts/sim-exec ncclwatch run`, with a private job id and dump
directory, then checks what ncclwatch said against an independent oracle: the sim's own
NCCL_DEBUG=INFO lines. "Init START" lines give each communicator's commId; with
NCCL_DEBUG_SUBSYS=COLL the sim prints one "<Op>: opCount N ... comm 0x..." line per collective a
rank issues, as real NCCL does, so the collective a straggler never issued and the one a fault
hung are known without asking ncclwatch.
"""

import glob
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

import pytest

import ncclwatch_test.sim_job as wd  # shared checks: check_incident, analyze, ...
from ncclwatch_test import exit_checks as ex  # checks of a rank that left: split_dumps, check_gone_rank
from ncclwatch_test import procs

BUILD, SOURCE = wd.BUILD, wd.SOURCE
PYTHON = sys.executable  # the torch venv's python: run.sh starts this script with it
TRAIN = os.path.join(SOURCE, "examples", "torch", "train.py")
SIM_EXEC = os.path.join(SOURCE, "scripts", "sim-exec")
STALL_SEC = 3.0
POLL_MS = 200
NS = wd.NS
# Onset -> last rank's detection: threshold + 2 polls, plus 2 s of slack. torch ranks are
# heavier than ddp_loop (an interpreter and 4 threads each) on 2 shared cores.
LATENCY_BOUND_NS = int((STALL_SEC + 2 * POLL_MS / 1000 + 2.0) * NS)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TorchJob(wd.Job):
    """A torchrun job under `sim-exec ncclwatch run`; waiting, stopping and cleanup are wd.Job's.

    defaults=True runs it as torchrun's defaults leave it: no job id (TORCHELASTIC_RUN_ID=none)
    and the default dump directory, ncclwatch-dumps/none under `cwd` (give two jobs one cwd to
    share it, as two jobs started from one directory do)."""

    def __init__(self, name, nranks, train_args=(), env=None, watcher=True, defaults=False, cwd=None,
                 port=None, stall=STALL_SEC, script=TRAIN, torchrun_args=()):
        self.tmp = tempfile.mkdtemp(prefix=f"ncclwatch-torch-{name}-")
        self.cwd = cwd or self.tmp
        self.job_id = "none" if defaults else f"torchtest-{name}-{os.getpid()}"
        self.extra_job_ids = []
        self.dump_dir = os.path.join(self.cwd, "ncclwatch-dumps", "none") if defaults else os.path.join(self.tmp, "dumps")
        self.log_path = os.path.join(self.tmp, "job.log")
        torchrun = [PYTHON, "-m", "torch.distributed.run", "--nproc-per-node", str(nranks), *torchrun_args,
                    "--master-addr", "127.0.0.1", "--master-port", str(port or free_port()), script] + list(train_args)
        watch = [wd.CLI, "run", "--stall", str(stall), "--poll-ms", str(POLL_MS)]
        if not defaults:
            watch += ["--dump-dir", self.dump_dir, "--job-id", self.job_id]
        cmd = [SIM_EXEC] + (watch + ["--"] if watcher else []) + torchrun
        full_env = dict(os.environ, BUILD_DIR=BUILD, NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,COLL",
                        OMP_NUM_THREADS="1", TORCH_NCCL_ASYNC_ERROR_HANDLING="0", PYTHONUNBUFFERED="1")
        full_env.pop("LD_PRELOAD", None)
        for k in ["NCCLWATCH_JOB_ID", "NCCLWATCH_DUMP_DIR", "NCCLWATCH_TRIGGER_JOB_ID", "TORCHELASTIC_RUN_ID"]:
            full_env.pop(k, None)
        full_env.update(env or {})
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=full_env,
                                     start_new_session=True, cwd=self.cwd)
        self.start = time.monotonic()

    def rank_pids(self):
        """Every descendant: torchrun's agent, its workers, and whatever they started."""
        return procs.descendants(self.proc.pid)


def init_lines(job):
    """(pid, api, rank, nranks, commId, comm pointer) of every sim 'Init START' line."""
    pat = re.compile(r"^[^:\s]+:(\d+):\d+ \[\d+\] NCCL INFO (\w+) comm (\S+) rank (\d+) nranks (\d+) .*"
                     r"commId (0x[0-9a-f]+) - Init START")
    return [(int(m[1]), m[2], int(m[4]), int(m[5]), m[6], m[3])
            for m in map(pat.match, job.output().splitlines()) if m]


def world_comm(job):
    """commId of the default process group: the first communicator ranks initialise."""
    first = [line for line in init_lines(job) if line[2] == 0]
    return first[0][4] if first else None


def issued_collectives(job, comm_id):
    """{pid: [op, ...]} in issue order on comm_id, from the sim's NCCL_DEBUG_SUBSYS=COLL lines."""
    pointers = {(pid, ptr): cid for pid, _, _, _, cid, ptr in init_lines(job)}
    pat = re.compile(r"^[^:\s]+:(\d+):\d+ \[\d+\] NCCL INFO (\w+): opCount \S+ .* comm (\S+) ")
    out = {}
    for m in map(pat.match, job.output().splitlines()):
        if m and m[2] not in ("Send", "Recv") and pointers.get((int(m[1]), m[3])) == comm_id:
            out.setdefault(int(m[1]), []).append(m[2])
    return out


def rank_pids(job, comm_id):
    """{rank: pid} for comm_id."""
    return {rank: pid for pid, _, rank, _, cid, _ in init_lines(job) if cid == comm_id}


def run(name, nranks, train_args, expect_dumps, env=None, timeout=90, while_live=None):
    """while_live(job), if given, runs once the dumps are in and before the job is stopped."""
    job = TorchJob(name, nranks, train_args, env=env)
    job.wait(lambda: len(job.dump_files()) >= expect_dumps, timeout)
    time.sleep(2 * POLL_MS / 1000)  # a duplicate dump would show up now
    if while_live is not None:
        while_live(job)
    job.stop()
    return job


def status_of(job):
    r = subprocess.run([wd.CLI, "status", "--job", job.job_id], capture_output=True, text=True, timeout=60)
    return r.stdout


def check_comm_name(job, comm, dumps, status_text):
    """The name torch gave the default group's communicator (ncclConfig_t.commName) is in every
    output a person reads, next to the hash. Oracle: train.py prints the group's name as torch
    reports it (dist.group.WORLD.group_name; torch 2.15 passes it as commName: "0" for the
    default group, whose description is "default_pg")."""
    pat = re.compile(r"rank (\d+) process group: name (\S+) desc (\S+)")
    printed = {m[2] for m in map(pat.search, job.output().splitlines()) if m}
    assert len(printed) == 1, f"train.py printed one process-group name: {printed}"
    name = next(iter(printed)) if printed else None
    names = {c.get("comm_name") for d in dumps for c in d["comms"] if c["comm"] == comm}
    assert names == {name}, f"every rank's dump names the default group's communicator {name!r}: {names}"
    label = f'{comm} "{name}"'
    texts = [open(f).read() for f in glob.glob(os.path.join(job.dump_dir, "*.txt"))]
    assert texts and all(f"comm {label} rank " in t for t in texts), f"dump text: `comm {label} rank ...`"
    text = subprocess.run([wd.CLI, "analyze", job.dump_dir], capture_output=True, text=True, timeout=60).stdout
    assert f"communicator {label} (" in text, f"analyze text names the communicator as {label}"
    rows = [line for line in status_text.splitlines() if line.split()[2:3] == [comm]]
    assert len(rows) == 2 and all(label in row for row in rows), f"status: both ranks' rows show {label}: {rows}"


# --- healthy -------------------------------------------------------------------------------

def healthy(mode, nranks):
    """Exit 0, no dump, no shared memory left, and the same output with and without the watcher."""
    args = ["--mode", mode, "--steps", "8"]
    env = {"NCCL_DEBUG": "WARN"}
    results = {}
    for watcher in (True, False):
        job = TorchJob(f"healthy-{mode}", nranks, args, env=env, watcher=watcher)
        try:
            job.proc.wait(timeout=150)
        except subprocess.TimeoutExpired:
            job.stop()
            pytest.fail(f"{mode} job (watcher={watcher}) did not finish in 150 s")
        job.log.close()
        out = job.output()
        results[watcher] = (job.proc.returncode, sorted(l for l in out.splitlines() if " done: " in l))
        if watcher:
            assert not job.dump_files(), f"healthy {mode}: no dump, got {job.dump_files()}"
            left = glob.glob(f"/dev/shm/ncclwatch.*{job.job_id}*")
            assert not left, f"healthy {mode}: no shared memory left, got {left}"
        assert job.proc.returncode == 0, f"{mode} (watcher={watcher}) exit {job.proc.returncode}:\n{out[-3000:]}"
        job.cleanup()
    assert results[True] == results[False], f"same exit and output with and without the watcher: {results}"
    expected = [f"rank {r} done: 8 steps" for r in range(nranks)]
    assert results[True][1] == expected, f"every rank finished: {results[True][1]}"


# --- faults --------------------------------------------------------------------------------

def straggler_oracle(job):
    """(comm, seq, op): the collective the straggler (rank 1) never joined, from the sim's lines."""
    comm = world_comm(job)
    assert comm is not None, "the sim printed the world communicator's Init START"
    issued = issued_collectives(job, comm)
    pids = rank_pids(job, comm)
    culprit_ops = issued.get(pids.get(1), [])
    waiting_ops = issued.get(pids.get(0), [])
    # Oracle: rank 1 issued k collectives, so #k+1 is the one it never joined; rank 0 did.
    seq = len(culprit_ops) + 1
    assert len(waiting_ops) >= seq, f"rank 0 issued #{seq} (issued {len(waiting_ops)})"
    op = waiting_ops[seq - 1] if len(waiting_ops) >= seq else None
    return comm, seq, op


def check_ddp_framework_seq(report, seq):
    """DDP with 2 ranks: torch's start-up all_gather of a tensor list is one NCCL group of 2
    broadcasts (#1, #2) and one torch collective, so torch's SeqNum of #N is N - 1 after it
    (tools/README.md, "Matching Flight Recorder")."""
    framework_seq = report.get("verdict", {}).get("framework_seq")
    assert framework_seq == seq - 1, f"analyze --json: verdict.framework_seq {framework_seq}, expected #{seq} - 1"
    return framework_seq


def call_sites_in(dumps):
    return [r["call_site"] for d in dumps for c in d.get("comms", []) for r in c.get("records", []) if "call_site" in r]


def straggler():
    step = 3
    live = {}
    job = run("straggler", 2, ["--steps", "1000", "--straggler-rank", "1", "--straggler-step", str(step),
                               "--straggler-sec", "120"], expect_dumps=2,
              while_live=lambda j: live.update(status=status_of(j)))
    try:
        comm, seq, op = straggler_oracle(job)
        dumps = wd.load_dumps(job)
        # NCCLWATCH_CALL_SITES is off by default: no record carries a call site.
        assert not call_sites_in(dumps), f"no call_site without NCCLWATCH_CALL_SITES: {call_sites_in(dumps)[:3]}"
        wd.check_incident(dumps, "straggler", comm, seq, op, [1], [0, 1], bound_ns=LATENCY_BOUND_NS)
        report = wd.analyze(job)
        wd.check_analysis(report, "straggler", comm, seq, op, [1])
        culprit = wd.dump_of_rank(dumps, 1)
        assert culprit is not None, "the straggler dumped"
        frames = [f.get("function") for t in culprit["python_stacks"].get("threads", []) for f in t["frames"]]
        assert "skip_samples_to_resume_position" in frames and "RestoreDataLoaderState" in frames, \
            f"the culprit's Python stack shows the data loader: {frames[:12]}"
        assert "data_loading" in wd.hint_ids(report), f"analyze hints data_loading: {wd.hint_ids(report)}"
        assert report.get("verdict", {}).get("comm_name") is not None, "analyze --json: verdict.comm_name"
        check_ddp_framework_seq(report, seq)
        check_comm_name(job, comm, dumps, live.get("status", ""))
    finally:
        job.cleanup()


def straggler_call_sites():
    """NCCLWATCH_CALL_SITES=1: the waiters' record of the collective the straggler never joined
    names the line of train.py that issued it, and analyze shows it where they wait."""
    job = run("straggler-call-sites", 2, ["--steps", "1000", "--straggler-rank", "1", "--straggler-step", "3",
                                          "--straggler-sec", "120"], expect_dumps=2,
              env={"NCCLWATCH_CALL_SITES": "1"})
    try:
        comm, seq, op = straggler_oracle(job)
        waiter = wd.dump_of_rank(wd.load_dumps(job), 0)
        assert waiter is not None, "the waiting rank dumped"
        records = [r for c in waiter["comms"] if c["comm"] == comm for r in c["records"] if r["seq"] == seq]
        site = records[0].get("call_site", "") if records else ""
        # Oracle: the call site is a line of train.py's main() (torch's own frames and the standard
        # library skipped) whose source issues the op: the forward (DDP's buffer Broadcast) or
        # backward (its gradient AllReduce).
        m = re.fullmatch(r"(.*):(\d+) in (\S+)", site)
        assert m is not None, f"rank 0's #{seq} {op} has a call site: {records[:1]}"
        path, line, func = m[1], int(m[2]), m[3]
        assert os.path.realpath(path) == os.path.realpath(TRAIN), f"call site in train.py: {site}"
        assert func == "main", f"call site in main(): {site}"
        source = open(TRAIN).read().splitlines()
        text = source[line - 1] if 0 < line <= len(source) else ""
        assert ("model(" in text) if op == "Broadcast" else ("backward" in text or "model(" in text), \
            f"train.py:{line} issues {op}: {text.strip()!r}"
        r = subprocess.run([wd.CLI, "analyze", job.dump_dir], capture_output=True, text=True, timeout=60)
        assert f"waiting in #{seq} issued at {site}" in r.stdout, \
            f"analyze names where the waiters issued #{seq} (exit {r.returncode}):\n{r.stdout[:3000]}{r.stderr[:500]}"
    finally:
        job.cleanup()


def transport_hang():
    """NCCLSIM_FAULT hangs the 12th collective of the world communicator in transport.

    The sim numbers Send/Recv too, but DDP issues none on the world communicator, so #12 of the
    fault is the 12th collective, ncclwatch's #12 (the oracle below checks what was issued)."""
    seq = 12
    job = run("transport_hang", 2, ["--steps", "1000"], expect_dumps=2,
              env={"NCCLSIM_FAULT": f"hang:seq={seq},comm=0"})
    try:
        comm = world_comm(job)
        issued = issued_collectives(job, comm)
        ops = {tuple(v[seq - 1:seq]) for v in issued.values()}
        assert len(issued) == 2 and len(ops) == 1 and all(ops), f"both ranks issued #{seq}: {ops}"
        op = next(iter(ops))[0] if len(ops) == 1 and all(ops) else None
        dumps = wd.load_dumps(job)
        wd.check_incident(dumps, "collective_hang", comm, seq, op, [0, 1], [0, 1], bound_ns=LATENCY_BOUND_NS)
        report = wd.analyze(job)
        wd.check_analysis(report, "collective_hang", comm, seq, op, [0, 1])
        assert "p2p_transport" in wd.hint_ids(report), f"analyze hints p2p_transport: {wd.hint_ids(report)}"
    finally:
        job.cleanup()


def first_broadcast_hang():
    """Field report 3: 3 ranks, the parameter-sync Broadcast at start never completes."""
    job = run("first_broadcast", 3, ["--steps", "1000"], expect_dumps=3,
              env={"NCCLSIM_FAULT": "hang:seq=1,comm=0"})
    try:
        comm = world_comm(job)
        issued = issued_collectives(job, comm)
        firsts = {v[0] for v in issued.values() if v}
        assert len(issued) == 3 and len(firsts) == 1, f"all 3 ranks issued the same #1: {firsts}"
        dumps = wd.load_dumps(job)
        op = next(iter(firsts)) if len(firsts) == 1 else None
        wd.check_incident(dumps, "collective_hang", comm, 1, op, [0, 1, 2], [0, 1, 2], bound_ns=LATENCY_BOUND_NS)
        wd.check_analysis(wd.analyze(job), "collective_hang", comm, 1, op, [0, 1, 2])
    finally:
        job.cleanup()


def fsdp2_init_hang():
    """Field report 4: FSDP2 job whose communicator init never finishes."""
    job = run("fsdp2_init_hang", 2, ["--mode", "fsdp2", "--steps", "1000"], expect_dumps=2,
              env={"NCCLSIM_FAULT": "hang:seq=init,comm=0"})
    try:
        comm = world_comm(job)
        assert comm is not None, "the sim printed Init START"
        dumps = wd.load_dumps(job)
        wd.check_incident(dumps, "init_hang", comm, 0, "init", [0, 1], [0, 1], bound_ns=LATENCY_BOUND_NS,
                          culprits_accrue=True)
        wd.check_analysis(wd.analyze(job), "init_hang", comm, 0, "init", [0, 1])
    finally:
        job.cleanup()


# --- ranks that leave ----------------------------------------------------------------------

def rank_leaves(name, args, gone_rank, hint):
    """gone_rank destroys its process group and exits 0 while the other rank trains on.

    Oracle: the sim's COLL lines. The gone rank issued k collectives on the world communicator,
    so the survivor waits in #k+1 (its own (k+1)-th op). Checked: the survivor's dump and log say
    rank_exited naming gone_rank at #k+1; the gone rank's one dump (on its behalf once it is gone,
    with its exit status 0; its own while it still shuts down) shows its communicator left after
    #k; analyze says the same, with `hint`."""
    live_rank = 1 - gone_rank
    job = run(name, 2, ["--steps", "1000"] + args, expect_dumps=2)
    try:
        comm = world_comm(job)
        issued = issued_collectives(job, comm)
        pids = rank_pids(job, comm)
        gone_ops = issued.get(pids.get(gone_rank), [])
        live_ops = issued.get(pids.get(live_rank), [])
        seq = len(gone_ops) + 1
        assert gone_ops and len(live_ops) >= seq, f"rank {live_rank} issued #{seq} (issued {len(live_ops)})"
        op = live_ops[seq - 1] if len(live_ops) >= seq else None
        dumps = wd.load_dumps(job)
        waiters, gone = ex.split_dumps(dumps, gone_rank)
        wd.check_incident(waiters, "rank_exited", comm, seq, op, [gone_rank], [live_rank], bound_ns=LATENCY_BOUND_NS)
        assert f"rank {gone_rank} leaves after" in job.output(), "the gone rank left by itself"
        ex.check_gone_rank(gone, gone_rank, [live_rank], recorded=True, status=0, left=True, may_dump_itself=True)
        if gone is not None:
            world = [c for c in gone["comms"] if c["comm"] == comm]
            assert len(world) == 1 and world[0]["last_enqueued_seq"] == seq - 1, \
                f"its world communicator, left after #{seq - 1}: {world}"
        lines = [line for line in job.output().splitlines() if "NCCLWATCH WARN rank_exited" in line]
        assert lines and all(f"culprit ranks [{gone_rank}]" in line for line in lines), \
            f"the live log names rank {gone_rank}: {lines[:2]}"
        report = wd.analyze(job)
        wd.check_analysis(report, "rank_exited", comm, seq, op, [gone_rank])
        assert hint in wd.hint_ids(report), f"analyze hints {hint}: {wd.hint_ids(report)}"
    finally:
        job.cleanup()


def uneven_inputs():
    """DDP with uneven inputs: rank 1's data runs out after 3 steps."""
    rank_leaves("uneven_inputs", ["--uneven-rank", "1", "--uneven-steps", "3"], 1, "uneven_inputs")


def extra_forward_exit():
    """Rank 0 alone runs a validation forward after step 3 (broadcast_buffers), then exits."""
    rank_leaves("extra_forward_exit", ["--extra-forward-rank", "0", "--extra-forward-step", "3"], 0,
                "partial_collective")


SCENARIOS = {
    "healthy_ddp": lambda: healthy("ddp", 2),
    "healthy_fsdp2": lambda: healthy("fsdp2", 2),
    "straggler": straggler,
    "straggler_call_sites": straggler_call_sites,
    "transport_hang": transport_hang,
    "first_broadcast_hang": first_broadcast_hang,
    "fsdp2_init_hang": fsdp2_init_hang,
    "uneven_inputs": uneven_inputs,
    "extra_forward_exit": extra_forward_exit,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
