#!/usr/bin/env python3
"""End-to-end watchdog scenarios over the sim: pytest scenario_test.py::test_scenario[NAME].

Each scenario starts a job with scripts/launch under LD_PRELOAD=libncclwatch.so, a private job
id and dump directory, a 2 s stall threshold and a 200 ms poll; waits until every expected rank
has dumped (or the job ends), kills what is left, removes the job's shared memory, and then
checks the dumps (verdict, ranks, communicator, collective number, op, detection latency,
stacks) and `ncclwatch analyze --json`. Job and the checks of
an incident are the test library's (tests/lib/ncclwatch_test/sim_job.py).
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

from ncclwatch_test.sim_job import (CLI, DDP_LOOP, EXITED_BOUND_NS, LATENCY_BOUND_NS, MISMATCH_BOUND_NS,
                                    POLL_MS, PY_RANK, SIM_LIB, Job, analyze, check_analysis, check_incident,
                                    check_python_data_loader_stall,
                                    comm_of, ddp_world_comm, dump_of_rank, dumps_of_incident, frames_of,
                                    grad_allreduce_seq, init_lines, load_dumps, run_scenario)


# --- scenarios ----------------------------------------------------------------------------

def straggler():
    step, seq = 3, grad_allreduce_seq(3)
    job = run_scenario("straggler", 4, ["--tp", "1", "--straggler-rank", "2", "--straggler-step", str(step),
                                        "--straggler-sec", "60"], expect_dumps=4)
    try:
        dumps = load_dumps(job)
        comm = ddp_world_comm(job, dumps)
        assert comm is not None, "world commId printed by the sim"
        check_incident(dumps, "straggler", comm, seq, "AllReduce", [2], [0, 1, 2, 3])
        culprit = dump_of_rank(dumps, 2)
        assert culprit is not None, "the straggler dumped"
        names = frames_of(culprit)
        assert (any("SkipSamplesToResumePosition" in n for n in names) and
                any("RestoreDataLoaderState" in n for n in names)), \
            "straggler's stack shows RestoreDataLoaderState -> SkipSamplesToResumePosition"
        check_analysis(analyze(job), "straggler", comm, seq, "AllReduce", [2])
        # The log line names the incident the dumps (JSON) describe: kind, commId, #seq, op, dir.
        incident_lines = [line for line in job.output().splitlines()
                          if f"NCCLWATCH WARN straggler comm {comm} #{seq} AllReduce " in line]
        assert incident_lines and all(job.dump_dir in line for line in incident_lines), \
            "one concise incident line on stderr naming kind, comm, seq, op and dump dir"
        assert len(glob.glob(os.path.join(job.dump_dir, "*.trigger"))) == 1, "one trigger file for the incident"
        assert len(glob.glob(os.path.join(job.dump_dir, "*.txt"))) == 4, "a .txt next to every .json"
    finally:
        job.cleanup()


def extra_broadcast():
    # Rank 1 issues an extra Broadcast at step 2, where the others issue the gradient AllReduce.
    seq = grad_allreduce_seq(2)
    job = run_scenario("extra_broadcast", 4, ["--tp", "1", "--extra-bcast-rank", "1", "--extra-bcast-step", "2"],
                       expect_dumps=4)
    try:
        dumps = load_dumps(job)
        comm = ddp_world_comm(job, dumps)
        # The watchdog and analyze both name what the culprit issued: the extra Broadcast.
        check_incident(dumps, "mismatch", comm, seq, "Broadcast", [1], [0, 1, 2, 3], bound_ns=MISMATCH_BOUND_NS)
        report = analyze(job)
        check_analysis(report, "mismatch", comm, seq, "Broadcast", [1])
        at_seq = [f for f in report.get("fingerprints", []) if f.get("seq") == seq]
        assert len(at_seq) == 1 and at_seq[0]["differs"], f"analyze: fingerprints differ at #{seq}"
        ops = {e["rank"]: e["op"] for e in at_seq[0]["by_rank"]}
        assert ops == {0: "AllReduce", 1: "Broadcast", 2: "AllReduce", 3: "AllReduce"}, \
            f"analyze: ops at #{seq} by rank {ops}"
    finally:
        job.cleanup()


def mismatch(kind):
    seq = grad_allreduce_seq(2)
    job = run_scenario("mismatch_" + kind, 4, ["--tp", "1", "--mismatch-rank", "3", "--mismatch-step", "2",
                                               "--mismatch-kind", kind], expect_dumps=4)
    try:
        dumps = load_dumps(job)
        comm = ddp_world_comm(job, dumps)
        check_incident(dumps, "mismatch", comm, seq, "AllReduce", [3], [0, 1, 2, 3], bound_ns=MISMATCH_BOUND_NS)
        check_analysis(analyze(job), "mismatch", comm, seq, "AllReduce", [3])
    finally:
        job.cleanup()


def init_hang():
    job = run_scenario("init_hang", 3, ["--tp", "1", "--transport-hang", "init"], expect_dumps=3)
    try:
        dumps = load_dumps(job)
        comm = ddp_world_comm(job, dumps)
        check_incident(dumps, "init_hang", comm, 0, "init", [0, 1, 2], [0, 1, 2], culprits_accrue=True)
        check_analysis(analyze(job), "init_hang", comm, 0, "init", [0, 1, 2])
    finally:
        job.cleanup()


def collective_hang():
    seq = grad_allreduce_seq(3)
    job = run_scenario("collective_hang", 4, ["--tp", "1", "--transport-hang", "3"], expect_dumps=4)
    try:
        dumps = load_dumps(job)
        comm = ddp_world_comm(job, dumps)
        check_incident(dumps, "collective_hang", comm, seq, "AllReduce", [0, 1, 2, 3], [0, 1, 2, 3])
        check_analysis(analyze(job), "collective_hang", comm, seq, "AllReduce", [0, 1, 2, 3])
    finally:
        job.cleanup()


def two_runs_apart():
    """Two unrelated jobs, each killed while hung, their dump directories given to one analyze:
    reported apart, each with its own verdict, the most recent first, and said so."""
    first = run_scenario("apart_straggler", 2, ["--tp", "1", "--straggler-rank", "1", "--straggler-step", "3",
                                                "--straggler-sec", "60"], expect_dumps=2)
    second = run_scenario("apart_hang", 2, ["--tp", "1", "--transport-hang", "3"], expect_dumps=2)
    try:
        assert len(first.dump_files()) >= 2 and len(second.dump_files()) >= 2, "both jobs dumped"
        r = subprocess.run([CLI, "analyze", first.dump_dir, second.dump_dir, "--json"], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 3, f"analyze exit {r.returncode}: {r.stderr[:300]}"
        report = json.loads(r.stdout)
        assert report["verdict"]["kind"] == "collective_hang" and report["run"]["job_ids"] == [second.job_id], \
            f"the most recent job leads, alone: {report['verdict']['kind']} {report['run']['job_ids']}"
        others = report.get("other_runs", [])
        assert len(others) == 1 and others[0]["verdict"]["kind"] == "straggler" and \
            others[0]["verdict"]["culprit_ranks"] == [1] and others[0]["run"]["job_ids"] == [first.job_id], \
            f"the other job is reported apart: {[(o['verdict']['kind'], o['run']['job_ids']) for o in others]}"
        assert report["dumps_read"] == len(second.dump_files()), "no dump of one job is judged with the other's"
        text = subprocess.run([CLI, "analyze", first.dump_dir, second.dump_dir], capture_output=True, text=True,
                              timeout=60)
        print(text.stdout)
        lines = text.stdout.splitlines()
        assert text.returncode == 3 and lines[:1] and lines[0].startswith("2 unrelated runs"), \
            f"the first line says two runs are reported apart: {lines[:2]}"
        runs = [i for i, line in enumerate(lines) if line.startswith("RUN ")]
        assert len(runs) == 2 and second.job_id in lines[runs[0]] and first.job_id in lines[runs[1]], \
            f"one heading per run, naming its job: {[lines[i] for i in runs]}"
        assert lines[runs[0] + 1] == "VERDICT: collective_hang" and lines[runs[1] + 1] == "VERDICT: straggler", \
            f"each heading leads its own verdict: {[lines[i + 1] for i in runs]}"
    finally:
        first.cleanup()
        second.cleanup()


def own_sigterm_handler():
    """A hung job whose ranks have their own SIGTERM handler (exit 7), stopped with SIGTERM: with
    the watcher, each rank dumps first (last gasp), then its own handler runs; the job exits 7
    with and without the watcher."""
    seq = grad_allreduce_seq(3)
    statuses = {}
    for watcher in (True, False):
        env = {"NCCLWATCH_STALL_SEC": "60"} if watcher else {"LD_PRELOAD": ""}
        job = Job(f"own_sigterm_{int(watcher)}", 2,
                  [DDP_LOOP, "--tp", "1", "--transport-hang", "3", "--own-sigterm-handler"], env=env)
        try:
            time.sleep(4)  # the hang starts within about 1.5 s: pending past the 1 s floor
            os.kill(job.proc.pid, signal.SIGTERM)  # scripts/launch forwards it to every rank
            job.proc.wait(30)
            statuses[watcher] = job.proc.returncode
            out = job.output()
            assert out.count("own SIGTERM handler ran") == 2, f"each rank's own handler ran (watcher={watcher})"
            if watcher:
                dumps = load_dumps(job)
                assert sorted(d["process"]["global_rank"] for d in dumps) == [0, 1], "both ranks dumped first"
                assert all(d["incident"]["trigger"] in ("last-gasp", "trigger-file") for d in dumps), \
                    f"as last gasps: {[d['incident']['trigger'] for d in dumps]}"
                if dumps:
                    check_analysis(analyze(job), "collective_hang", ddp_world_comm(job, dumps), seq, "AllReduce", [0, 1])
        finally:
            job.stop()
            job.cleanup()
    assert statuses.get(True) == statuses.get(False) == 7, f"the job exits 7 with and without the watcher: {statuses}"


def rank_killed():
    seq = grad_allreduce_seq(3)
    job = run_scenario("rank_killed", 4, ["--tp", "1"], expect_dumps=4,
                       env={"NCCLSIM_FAULT": f"die:comm=0,seq={seq},rank=1"})
    try:
        dumps = load_dumps(job)
        comm = ddp_world_comm(job, dumps)
        # The live ranks' own dumps; the killed rank's is written on its behalf (exit_test.py).
        own = [d for d in dumps if "written_by" not in d]
        assert len(dumps) - len(own) == 1, "one dump written on behalf of the killed rank"
        # rank_exited has no threshold of its own: the peers' wait of 2 polls, then the next poll.
        check_incident(own, "rank_exited", comm, seq, "AllReduce", [1], [0, 2, 3], bound_ns=EXITED_BOUND_NS)
        check_analysis(analyze(job), "rank_exited", comm, seq, "AllReduce", [1])
    finally:
        job.cleanup()


def split_comm():
    # 4 ranks, tensor-parallel groups {0,1} {2,3}; global rank 3 (tp rank 1 of the second
    # group) stalls at step 2, before the step's tp AllReduce (#3 on the tp communicator).
    # Collectives are asynchronous: rank 2 enqueued its tp AllReduce and went on to the
    # gradient AllReduce, so both the tp and the world communicator wait for rank 3. That is
    # one stall, hence one incident and one dump per rank (core/watch/incident_grouping.h).
    # Each rank's primary verdict is whichever of the two it saw first, or the world one when
    # it saw both in one poll; analyze merges the dumps and names the world communicator.
    job = run_scenario("split_comm", 4, ["--tp", "2", "--straggler-rank", "3", "--straggler-step", "2",
                                         "--straggler-sec", "60"], expect_dumps=4)
    try:
        dumps = load_dumps(job)
        d2 = dump_of_rank(dumps, 2)
        tp_comm = comm_of(job, d2["process"]["pid"], "ncclCommSplit") if d2 else None
        assert tp_comm is not None, "split commId printed by the sim"
        world = ddp_world_comm(job, dumps)
        assert len(dumps) == 4, f"one dump per rank for the one stall, got {len(dumps)}"
        on_tp = dumps_of_incident(dumps, "straggler", tp_comm)
        on_world = dumps_of_incident(dumps, "straggler", world)
        assert len(on_tp) + len(on_world) == len(dumps), \
            "every dump names the straggler on the tp or the world communicator"
        for mine, comm, seq, culprits in ((on_tp, tp_comm, 3, [1]), (on_world, world, grad_allreduce_seq(2), [3])):
            if mine:
                check_incident(mine, "straggler", comm, seq, "AllReduce", culprits,
                               [d["process"]["global_rank"] for d in mine])
        assert (any("SkipSamplesToResumePosition" in n for n in frames_of(dump_of_rank(dumps, 3) or {
                "native_stacks": {"threads": []}}))), "the culprit's dump shows where it is stuck"
        check_analysis(analyze(job), "straggler", world, grad_allreduce_seq(2), "AllReduce", [3])
        assert job.output().count("NCCLWATCH WARN") == 4, "one incident line per rank, not one per communicator"
    finally:
        job.cleanup()


def multi_host():
    # Each rank gets its own job id, so neither sees the other's shared memory: two "hosts"
    # sharing only the dump directory (as through a shared file system). Rank 1 stalls in
    # data loading; rank 0, alone on its host, waits in #N and declares a collective_hang by
    # the lone-rank rule; its trigger file makes rank 1, which sees nothing wrong locally,
    # dump its stack.
    step, seq = 12, grad_allreduce_seq(12)
    base = f"wdtest-multi_host-{os.getpid()}"
    job = Job("multi_host", 2, [DDP_LOOP, "--quiet", "--tp", "1", "--steps", "1000", "--step-ms", "20",
                                "--straggler-rank", "1", "--straggler-step", str(step), "--straggler-sec", "60"],
              rank_env=[(0, f"NCCLWATCH_JOB_ID={base}-h0"), (1, f"NCCLWATCH_JOB_ID={base}-h1")],
              env={"NCCLWATCH_TRIGGER_JOB_ID": base},  # one job to the trigger files, as on real hosts
              extra_job_ids=[f"{base}-h0", f"{base}-h1"])
    try:
        job.wait(lambda: len(job.dump_files()) >= 2, 25)
        time.sleep(2 * POLL_MS / 1000)
    finally:
        job.stop()
    try:
        dumps = load_dumps(job)
        assert len(dumps) == 2, f"one dump per rank ({len(dumps)})"
        d0, d1 = dump_of_rank(dumps, 0), dump_of_rank(dumps, 1)
        assert d0 is not None and d1 is not None, "both hosts' ranks dumped"
        comm = comm_of(job, d0["process"]["pid"], "ncclCommInitRank")
        v0 = d0["verdict"]
        assert d0["incident"]["trigger"] == "lone-rank", f"rank 0 decided alone ({d0['incident']['trigger']})"
        assert (v0["kind"] == "collective_hang" and v0["partial"] and v0["comm"] == comm and v0["seq"] == seq and
                v0["op"] == "AllReduce"), f"rank 0's lone-rank verdict: {v0}"
        assert d1["incident"]["trigger"] == "trigger-file", (f"rank 1 dumped on the trigger file "
              f"({d1['incident']['trigger']})")
        assert d1["incident"]["id"] == d0["incident"]["id"], "same incident id on both hosts"
        assert (d1["verdict"]["kind"] == "collective_hang" and d1["verdict"]["seq"] == seq and
                d1["verdict"]["culprit_ranks"] == v0["culprit_ranks"] and d1["verdict"]["comm"] == comm), \
            f"rank 1's dump carries the declaring rank's verdict: {d1['verdict']}"
        assert any("SkipSamplesToResumePosition" in n for n in frames_of(d1)), \
            "the remote laggard's stack shows where it is stuck"
    finally:
        job.cleanup()


def python_rank():
    id_dir = tempfile.mkdtemp(prefix="ncclwatch-wd-pyid-")
    try:
        cmd = [sys.executable, PY_RANK, "--lib-dir", SIM_LIB, "--id-dir", id_dir, "--steps", "1000",
               "--straggler-rank", "1", "--straggler-step", "3", "--straggler-sec", "60"]
        job = run_scenario("python_rank", 2, cmd, expect_dumps=2, ddp=False)
    finally:
        shutil.rmtree(id_dir, ignore_errors=True)
    try:
        dumps = load_dumps(job)
        d0 = dump_of_rank(dumps, 0)
        comm = comm_of(job, d0["process"]["pid"], "ncclCommInitRank") if d0 else None
        check_incident(dumps, "straggler", comm, 4, "AllReduce", [1], [0, 1])
        culprit = dump_of_rank(dumps, 1)
        check_python_data_loader_stall(culprit)
        check_analysis(analyze(job), "straggler", comm, 4, "AllReduce", [1])
    finally:
        job.cleanup()


def healthy_jitter():
    # Jitter 0.66: a step takes 0.34x..1.66x its mean, so up to ~5x between two ranks' steps,
    # all far below the 2 s threshold: no verdict, no dump, no trigger.
    job = Job("healthy_jitter", 4, [DDP_LOOP, "--quiet", "--steps", "25", "--step-ms", "100", "--jitter", "0.66",
                                    "--tp", "2"])
    try:
        job.wait(lambda: False, 45)
        rc = job.proc.returncode
    finally:
        job.stop()
    try:
        assert rc == 0, f"healthy job exits 0 (got {rc})"
        assert not os.path.exists(job.dump_dir), "no dump directory created"
        assert "NCCLWATCH WARN" not in job.output(), "no incident logged"
    finally:
        job.cleanup()


def robustness(name, dump_dir_of, expect_written, extra_args=(), extra_check=None):
    """A straggler of 4 s in a 8-step job: the job must finish normally whatever the dump does."""
    tmp = tempfile.mkdtemp(prefix=f"ncclwatch-wd-{name}-dir-")
    try:
        dump_dir = dump_dir_of(tmp)
        job = Job(name, 2, [DDP_LOOP, "--quiet", "--tp", "1", "--steps", "8", "--step-ms", "20",
                            "--straggler-rank", "1", "--straggler-step", "2", "--straggler-sec", "4"] +
                  list(extra_args), dump_dir=dump_dir)
        try:
            job.wait(lambda: False, 40)
            rc = job.proc.returncode
        finally:
            job.stop()
        out = job.output()
        assert rc == 0, f"job finished normally despite the dump problem (exit {rc})"
        assert "NCCLWATCH WARN straggler" in out, "the incident was still detected and logged"
        if expect_written:
            dumps = [json.load(open(p)) for p in glob.glob(os.path.join(dump_dir, "*.json"))]
            assert len(dumps) == 2, f"both ranks dumped ({len(dumps)})"
            if extra_check:
                extra_check(dumps)
        else:
            assert out.count("hang dump not written") == 2, "each rank reports the failure exactly once"
        job.cleanup()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def unwritable_dir():
    def under_a_file(tmp):
        open(os.path.join(tmp, "plain-file"), "w").close()
        return os.path.join(tmp, "plain-file", "dumps")
    robustness("unwritable_dir", under_a_file, expect_written=False)


def full_disk():
    mnt = tempfile.mkdtemp(prefix="ncclwatch-wd-tinyfs-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt], capture_output=True, text=True)
    if r.returncode != 0:
        os.rmdir(mnt)
        pytest.skip(f"cannot mount a tmpfs: {r.stderr.strip()}")
    try:
        # Fill the disk first, so every dump hits ENOSPC.
        try:
            with open(os.path.join(mnt, "filler"), "wb", buffering=0) as f:
                while True:
                    f.write(b"\0" * 4096)
        except OSError:
            pass
        robustness("full_disk", lambda tmp: mnt, expect_written=False)
        leftovers = [n for n in os.listdir(mnt) if n != "filler"]
        assert not leftovers, f"no partial dump or temporary left on the full disk: {leftovers}"
    finally:
        subprocess.run(["umount", mnt], check=False)
        os.rmdir(mnt)


def blocked_thread():
    def deaf_thread_reported(dumps):
        for d in dumps:
            threads = d["native_stacks"]["threads"]
            deaf = [t for t in threads if t["name"] == "signal-deaf"]
            assert len(deaf) == 1 and not deaf[0]["answered"], \
                f"rank {d['process']['global_rank']}: the all-signals-blocked thread is reported not answering"
            assert any(t["answered"] and t["frames"] for t in threads), \
                f"rank {d['process']['global_rank']}: the other threads' stacks are still there"
    robustness("blocked_thread", lambda tmp: os.path.join(tmp, "dumps"), expect_written=True,
               extra_args=["--blocked-thread"], extra_check=deaf_thread_reported)


def sync_stuck():
    # One rank (so no peer turns this into a straggler) whose stream stops in a GPU op that is
    # not NCCL's, right before the loss read-back: every collective completed, yet the host
    # is blocked in cudaStreamSynchronize. Verdict sync_stuck, naming the stream it waits on.
    job = run_scenario("sync_stuck", 1, ["--tp", "1", "--stuck-sync-rank", "0", "--stuck-sync-step", "3"],
                       expect_dumps=1)
    try:
        dumps = load_dumps(job)
        assert len(dumps) == 1, f"one dump, got {len(dumps)}"
        if dumps:
            d = dumps[0]
            v = d["verdict"]
            assert v["kind"] == "sync_stuck", f"verdict {v['kind']}, expected sync_stuck"
            assert v["culprit_ranks"] == [0], f"culprits {v['culprit_ranks']} (global ranks), expected [0]"
            assert v["op"] == "stream", f"waits on {v['op']!r}, expected 'stream'"
            syncs = d.get("host_syncs", [])
            assert len(syncs) == 1 and syncs[0]["target"] == "stream" and syncs[0]["handle"] != "0x0", \
                f"the dump shows the host blocked on a stream: {syncs}"
            since = v["since_mono_ns"]
            assert since > 0 and 0 <= d["incident"]["detected_mono_ns"] - since <= LATENCY_BOUND_NS, \
                "detected within threshold + 2 polls of the sync's start"
            for c in d["comms"]:
                assert c["last_completed_seq"] == c["last_enqueued_seq"], "every collective completed"
            assert any("cudaStreamSynchronize" in n for n in frames_of(d)), \
                "the main thread's stack shows it inside cudaStreamSynchronize"
        report = analyze(job)
        assert report.get("verdict", {}).get("kind") == "sync_stuck", "analyze: sync_stuck"
    finally:
        job.cleanup()


def run_on_terminal(cmd, timeout=30):
    """stdout of cmd run with a pseudo-terminal as its standard output."""
    import pty
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    proc.wait(timeout=5)
    return b"".join(chunks).decode(errors="replace")


def comm_name():
    # The world communicator made by ncclCommInitRankConfig with a commName holding an escape
    # sequence and quotes (as a hostile or careless framework might), the tp split without a name
    # of its own; rank 3 straggles at step 2 as in split_comm. The name must reach every output
    # next to the hash: exact in JSON, escaped in text; the split child must stay unnamed.
    name = 'world\x1b[2J"pg"'
    shown = '"world\\x1b[2J\\"pg\\""'  # format::QuotedCommName: ESC as \x1b, " as \"
    job = Job("comm_name", 4, [DDP_LOOP, "--quiet", "--steps", "1000", "--step-ms", "20", "--tp", "2",
                               "--comm-name", name, "--straggler-rank", "3", "--straggler-step", "2",
                               "--straggler-sec", "60"])
    try:
        assert job.wait(lambda: len(job.dump_files()) >= 4, 25), "every rank dumped"
        world = next((c for _, api, _, _, c in init_lines(job) if api == "ncclCommInitRankConfig"), None)
        assert world is not None, "the sim printed the named world communicator's commId"
        status = subprocess.run([CLI, "status", "--job", job.job_id], capture_output=True, text=True, timeout=30)
        rows = [line for line in status.stdout.splitlines() if world and line.split()[2:3] == [world]]
        assert len(rows) == 4 and all(f"{world} {shown} " in row for row in rows), \
            f"status: every world row shows the escaped name next to the hash: {rows}"
        assert "\x1b" not in status.stdout, "status prints no raw escape"
        status_json = subprocess.run([CLI, "status", "--job", job.job_id, "--json"], capture_output=True, text=True,
                                     timeout=30)
        comms = [c for j in json.loads(status_json.stdout or '{"jobs": []}')["jobs"] for p in j["processes"]
                 for c in p["comms"]]
        assert len(comms) == 8 and all(c["comm_name"] == (name if c["comm"] == world else None) for c in comms), \
            "status --json: comm_name exact on the world communicator, null on the unnamed split"
    finally:
        job.stop()
    try:
        dumps = load_dumps(job)
        entries = [c for d in dumps for c in d["comms"]]
        assert len(entries) == 8 and all(c["comm_name"] == (name if c["comm"] == world else "") for c in entries), \
            "dump JSON: comm_name exact on the world communicator, empty on the split child (none invented)"
        texts = [open(f).read() for f in glob.glob(os.path.join(job.dump_dir, "*.txt"))]
        assert len(texts) == 4 and all(f"comm {world} {shown} rank " in t and "\x1b" not in t for t in texts), \
            "dump text: `comm HASH \"NAME\"`, escaped, in every dump"
        report = analyze(job)
        assert report.get("verdict", {}).get("comm_name") == name, "analyze --json: verdict.comm_name exact"
        text = subprocess.run([CLI, "analyze", job.dump_dir], capture_output=True, text=True, timeout=60).stdout
        assert f"communicator {world} {shown} (4 ranks)" in text and "\x1b" not in text, \
            "analyze text names the communicator by hash and escaped name"
        warns = [line for line in job.output().splitlines() if "NCCLWATCH WARN" in line and world in line]
        logged = '"world\\x1b[2J"pg""'  # the log escapes the whole line once: ESC as \x1b, quotes as they are
        assert warns and all(f"comm {world} {logged} #" in line for line in warns), \
            f"a WARN line on the world communicator names it: {warns[:1]}"
    finally:
        job.cleanup()


def status_live():
    # `ncclwatch status` against a live simulated job: 4 healthy ranks under the preload, read
    # from shared memory alone while they train.
    job = Job("status_live", 4, [DDP_LOOP, "--quiet", "--steps", "100000", "--step-ms", "20", "--tp", "2"])
    try:
        def table():
            r = subprocess.run([CLI, "status", "--job", job.job_id], capture_output=True, text=True, timeout=30)
            return r.stdout if r.returncode == 0 else ""
        def comm_rows(text):
            return [line for line in text.splitlines() if re.match(r"^\d+\s+\d+\s+0x", line)]
        # 4 ranks x (world + tp) communicators once every rank has initialised both.
        assert job.wait(lambda: len(comm_rows(table())) == 8, 20), "status shows every rank's 2 communicators"
        out = table()
        world = next((c for _, api, _, _, c in init_lines(job) if api == "ncclCommInitRank"), None)
        assert world is not None and world in out, f"status names the world communicator {world}"
        rows = [line for line in comm_rows(out) if world and world in line]
        assert len(rows) == 4, f"one row per rank for the world communicator, got {len(rows)}"
        pids = set(job.rank_pids())
        assert {int(row.split()[1]) for row in rows} == pids, f"the rows' pids are the ranks' pids {sorted(pids)}"
        assert not any("DEAD" in row for row in rows), "no rank reads as dead"
        # ENQ and DONE move on while the job runs.
        first = out
        time.sleep(1.0)
        assert table() != first, "the table changes as collectives complete"
        cmd = [CLI, "status", "--job", job.job_id, "--watch", "--interval", "0.2", "--iterations", "3"]
        watch = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        assert watch.returncode == 0 and "\033" not in watch.stdout and watch.stdout.count("RANK ") == 3, \
            "--watch into a pipe: three plain snapshots, no terminal escapes"
        on_terminal = run_on_terminal(cmd)
        assert on_terminal.count("\033[H\033[2J") == 3, "--watch on a terminal refreshes in place"
    finally:
        job.stop()
        job.cleanup()


SCENARIOS = {
    "straggler": straggler,
    "two_runs_apart": two_runs_apart,
    "comm_name": comm_name,
    "extra_broadcast": extra_broadcast,
    "mismatch_count": lambda: mismatch("count"),
    "mismatch_dtype": lambda: mismatch("dtype"),
    "init_hang": init_hang,
    "collective_hang": collective_hang,
    "rank_killed": rank_killed,
    "own_sigterm_handler": own_sigterm_handler,
    "split_comm": split_comm,
    "python_rank": python_rank,
    "multi_host": multi_host,
    "healthy_jitter": healthy_jitter,
    "unwritable_dir": unwritable_dir,
    "full_disk": full_disk,
    "blocked_thread": blocked_thread,
    "status_live": status_live,
    "sync_stuck": sync_stuck,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
