#!/usr/bin/env python3
"""Real PyTorch CUDA graphs with collectives on the sim, under the watcher: graph_watch_scenarios.py NAME.

A collective replayed from a CUDA graph is watched like any other op: each launch of a graph that
holds NCCL ops publishes a replay record per communicator, and the one classifier judges them.
The oracles are the sim's own (NCCLSIM_FAULT picks the replay that hangs; the sim's
NCCL_DEBUG=INFO lines give the communicators) and what the examples print.
  graph_watch_replays        graph_allreduce.py, 30 replays: exit 0, the same output with and
                             without the watcher, no dump, no shared memory left.
  graph_watch_callables      graphed_callables.py (make_graphed_callables), 20 steps: the same.
  graph_watch_straggler      rank 1 waits in Python before replay 6; rank 0 launches it: both dump
                             replay_straggler, the job is SIGTERMed as a scheduler ends it, and the
                             final `ncclwatch analyze` names rank 1, replay 6 and its Python frame.
  graph_watch_replay_hang    NCCLSIM_FAULT=hang:replay=5: replay_hang on replay 5, dumps from every
                             rank, and analyze says so after the SIGTERM.
  graph_watch_capture_mismatch  rank 1 captures an all_reduce of half the buffer: mismatch at capture.
  graph_watch_two_comms      graph_two_comms.py: one graph on two communicators, 20 replays; status
                             (text and --json) shows each communicator's replay number.
  graph_watch_vs_flight_recorder  the hung replay with torch's Flight Recorder on and an eager
                             stop-flag all_reduce after each replay: torch times out on the stop flag
                             and its trace records nothing of the replay; ncclwatch names replay 5
                             and the stop flag waiting behind it, with the Flight Recorder's number.
Run under pytest (tests/torch/CMakeLists.txt: one ctest entry per scenario).
"""

import glob
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import teardown_scenarios as teardown  # noqa: E402  sigterm_all
import torch_scenarios as ts  # noqa: E402  TorchJob

wd = ts.wd
EXAMPLES = os.path.join(ts.SOURCE, "examples", "torch")
GRAPH_ALLREDUCE = os.path.join(EXAMPLES, "graph_allreduce.py")
GRAPHED_CALLABLES = os.path.join(EXAMPLES, "graphed_callables.py")
TWO_COMMS = os.path.join(EXAMPLES, "graph_two_comms.py")


def ok_lines(out, what):
    """{rank: [k, ...]} of the "rank R <what> K ok" lines."""
    lines = {}
    for m in re.finditer(rf"^rank (\d+) {what} (\d+) ok$", out, re.M):
        lines.setdefault(int(m[1]), []).append(int(m[2]))
    return lines


def same_with_and_without(name, script, what, count):
    """Exit 0, no dump, no shared memory left, and the same lines with and without the watcher."""
    results = {}
    for watcher in (True, False):
        job = ts.TorchJob(f"{name}-{int(watcher)}", 2, [f"--{what}s", str(count)], watcher=watcher, script=script,
                          env={"NCCL_DEBUG": "WARN"})
        try:
            finished = job.wait(lambda: job.proc.poll() is not None, 150)
            assert finished, f"{name} (watcher={watcher}) ends within 150 s:\n{job.output()[-3000:]}"
            job.stop()
            out = job.output()
            lines = sorted(l for l in out.splitlines() if re.match(rf"rank \d+ ({what} \d+ ok|done: )", l))
            results[watcher] = (job.proc.returncode, lines)
            if watcher:
                assert not job.dump_files(), f"{name}: no dump, got {job.dump_files()}"
                left = glob.glob(f"/dev/shm/ncclwatch.*{job.job_id}*")
                assert not left, f"{name}: no shared memory left, got {left}"
                logged = [l for l in out.splitlines() if re.search(r"NCCLWATCH|\[ncclwatch \d+\]", l)]
                assert not logged, f"{name}: ncclwatch logged nothing: {logged[:3]}"
        finally:
            job.cleanup()
    assert results[True][0] == 0, f"{name}: exit 0 under the watcher, got {results[True][0]}"
    assert results[True] == results[False], (
        f"{name}: the same exit and lines with and without the watcher: "
        f"{results[True][0]} vs {results[False][0]}")
    want = {r: list(range(1, count + 1)) for r in (0, 1)}
    got = {r: sorted(v) for r, v in ok_lines("\n".join(results[True][1]), what).items()}
    assert got == want, f"{name}: every {what} of both ranks checked out"


def sigterm_all(job):
    """SIGTERM to every process of the job at once, as SLURM and Kubernetes end a job, and wait
    for it to end."""
    teardown.sigterm_all(job)
    job.wait(lambda: job.proc.poll() is not None, 60)


def analyze_text(job):
    r = subprocess.run([wd.CLI, "analyze", job.dump_dir], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout


def live_dumps(job, kind):
    """The dumps of incident `kind` the watchdogs wrote at the threshold (not the last gasps)."""
    return [d for d in wd.load_dumps(job) if d["verdict"]["kind"] == kind and d["incident"]["trigger"] != "last-gasp"]


def check_replay_incident(dumps, kind, comm, replay, culprits, ranks):
    by_rank = {d["process"]["global_rank"]: d for d in dumps}
    assert sorted(by_rank) == sorted(ranks), f"{kind}: dumps from ranks {sorted(by_rank)}, expected {sorted(ranks)}"
    for r, d in by_rank.items():
        v = d["verdict"]
        assert v["comm"] == comm and v["seq"] == replay, (
            f"rank {r}: {kind} on {v['comm']} replay {v['seq']}, "
            f"expected {comm} replay {replay}")
        assert sorted(v["culprit_ranks"]) == sorted(culprits), (
            f"rank {r}: culprits {v['culprit_ranks']}, "
            f"expected {culprits}")
        assert v.get("graph_label", "").startswith("graph [AllReduce from #") and comm in v.get("graph_label", ""), (
            f"rank {r}: the verdict names the graph by its ops and communicator: {v.get('graph_label')!r}")
        assert f"-{replay}" in d["incident"]["id"] and d["incident"]["id"].startswith(f"{kind}-{comm}-0x"), (
            f"rank {r}: incident id names the communicator, the graph and the replay: {d['incident']['id']}")
    assert len({d["incident"]["id"] for d in dumps}) == 1, "one incident id across ranks"


def graph_watch_straggler():
    stall_replay = 6
    job = ts.TorchJob("graph_straggler", 2, ["--replays", "30", "--stall-rank", "1", "--stall-replay",
                                             str(stall_replay)], script=GRAPH_ALLREDUCE)
    try:
        got = job.wait(lambda: len(live_dumps(job, "replay_straggler")) >= 2, 90)
        assert got, f"both ranks dumped a replay_straggler:\n{job.output()[-3000:]}"
        assert ok_lines(job.output(), "replay") == {0: [1, 2, 3, 4, 5], 1: [1, 2, 3, 4, 5]}, (
            "replays 1-5 of both ranks checked out, none after")
        comm = ts.world_comm(job)
        check_replay_incident(live_dumps(job, "replay_straggler"), "replay_straggler", comm, stall_replay, [1], [0, 1])
        sigterm_all(job)
        code, text = analyze_text(job)
        assert code == 3, f"analyze exits 3 (a hang), got {code}"
        lines = text.splitlines()
        assert lines[:1] == ["VERDICT: replay_straggler"], f"analyze's verdict: {lines[:1]}"
        head = "\n".join(lines[:8])
        assert f"replay {stall_replay} of graph [AllReduce from #" in head and "culprit: rank 1" in head, (
            f"analyze's first lines name replay {stall_replay}, the graph and rank 1:\n{head}")
        assert f"rank 1 has not launched replay {stall_replay} of graph" in head and "rank 0 launched it" in head, (
            f"the summary says who launched it:\n{head}")
        stacks = text[text.find("EVIDENCE: culprit stacks"):]
        assert re.search(r"wait_for_next_request \(\S*graph_allreduce\.py:\d+\)", stacks) is not None, (
            f"rank 1's Python frame (wait_for_next_request) is in analyze's culprit stacks:\n{stacks[:1500]}")
        report = wd.analyze(job)
        v = report.get("verdict", {})
        assert v.get("kind") == "replay_straggler" and v.get("seq") == stall_replay and v.get("culprit_ranks") == [1], (
            f"analyze --json: {v}")
        assert v.get("graph", "").startswith("0x") and v.get("framework_seq") is None, (
            f"analyze --json: the graph's key; no framework seq (torch numbers no captured op): {v}")
    finally:
        job.stop()
        job.cleanup()


def graph_watch_replay_hang():
    job = ts.TorchJob("graph_replay_hang", 2, ["--replays", "30"], env={"NCCLSIM_FAULT": "hang:replay=5"},
                      script=GRAPH_ALLREDUCE)
    try:
        got = job.wait(lambda: len(live_dumps(job, "replay_hang")) >= 2, 90)
        assert got, f"both ranks dumped a replay_hang:\n{job.output()[-3000:]}"
        assert ok_lines(job.output(), "replay") == {0: [1, 2, 3, 4], 1: [1, 2, 3, 4]}, "replays 1-4 checked out"
        comm = ts.world_comm(job)
        check_replay_incident(live_dumps(job, "replay_hang"), "replay_hang", comm, 5, [0, 1], [0, 1])
        # A rank logs its line once its dump is written: the second line may follow the second dump.
        def warn_lines():
            return [l for l in job.output().splitlines() if "NCCLWATCH WARN replay_hang" in l]
        job.wait(lambda: len(warn_lines()) >= 2, 10)
        lines = warn_lines()
        assert len(lines) == 2 and all(f"replay 5 of graph [AllReduce from #" in l for l in lines), (
            f"each rank logs the replay and its graph: {lines}")
        sigterm_all(job)
        code, text = analyze_text(job)
        assert code == 3 and text.startswith("VERDICT: replay_hang\n"), f"analyze: exit {code}\n{text[:800]}"
        assert "ranks 0-1 launched replay 5" in text, f"analyze says both ranks launched replay 5:\n{text[:1200]}"
        wd.check_analysis(wd.analyze(job), "replay_hang", comm, 5, "AllReduce", [0, 1])
    finally:
        job.stop()
        job.cleanup()


def graph_watch_capture_mismatch():
    job = ts.TorchJob("graph_capture_mismatch", 2, ["--replays", "30", "--mismatch-rank", "1"], script=GRAPH_ALLREDUCE)
    try:
        got = job.wait(lambda: len(live_dumps(job, "mismatch")) >= 2, 90)
        assert got, f"both ranks dumped a mismatch:\n{job.output()[-3000:]}"
        comm = ts.world_comm(job)
        for d in live_dumps(job, "mismatch"):
            v = d["verdict"]
            assert v["comm"] == comm and v["summary"].startswith(f"mismatch at capture on comm {comm} at #"), (
                f"rank {d['process']['global_rank']}: a mismatch at capture: {v['summary']}")
            assert "count=4096" in v["summary"] and "count=2048" in v["summary"], (
                f"both counts named: {v['summary']}")
        sigterm_all(job)
        code, text = analyze_text(job)
        assert code == 3 and text.startswith("VERDICT: mismatch\n") and "mismatch at capture" in text, (
            f"analyze: exit {code}\n{text[:800]}")
        assert "captured into a CUDA graph" in text, "analyze notes that the ops were captured"
    finally:
        job.stop()
        job.cleanup()


def graph_watch_two_comms():
    replays = 20
    tmp = tempfile.mkdtemp(prefix="ncclwatch-two-comms-")
    hold = os.path.join(tmp, "hold")
    job = ts.TorchJob("graph_two_comms", 2, ["--replays", str(replays), "--hold-file", hold], script=TWO_COMMS)
    try:
        held = job.wait(lambda: job.output().count(" holding") == 2, 120)
        assert held, f"both ranks replayed and hold:\n{job.output()[-3000:]}"
        assert ok_lines(job.output(), "replay") == {0: list(range(1, replays + 1)), 1: list(range(1, replays + 1))}, (
            "every replay of both ranks checked out")
        comms = sorted({c for _, _, _, _, c, _ in ts.init_lines(job)})
        assert len(comms) == 2, f"two communicators: {comms}"
        # A completion is published at the tracker's next poll (50 ms busy): the last replay may
        # still read in flight just after the ranks said they hold. Asked again until both
        # communicators' rows are idle, for at most 2 s (40 polls).
        deadline = time.monotonic() + 2
        while True:
            table = subprocess.run([wd.CLI, "status", "--job", job.job_id], capture_output=True, text=True,
                                   timeout=60).stdout
            rows_of = [l for l in table.splitlines() if l.split()[2:3] and l.split()[2] in comms]
            if (len(rows_of) == 4 and all(" idle" in l for l in rows_of)) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        header = next((l for l in table.splitlines() if l.startswith("RANK")), "")
        assert "REPLAY" in header.split(), f"status has a REPLAY column: {header}"
        for comm in comms:
            rows = [l for l in table.splitlines() if l.split()[2:3] == [comm]]
            assert len(rows) == 2 and all(re.search(rf" {replays} \[\S", row) for row in rows), (
                f"status: both ranks' rows of {comm} show replay {replays}:\n{table}")
            assert all(" idle" in row for row in rows), (
                f"status: replays complete, captured ops not in flight: {rows}")
        world = ts.world_comm(job)
        world_rows = [l for l in table.splitlines() if l.split()[2:3] == [world]]
        assert all("[AllReduce, Broadcast from #" in row for row in world_rows), (
            f"status: the world rows name its two captured ops: {world_rows}")
        status_json = json.loads(subprocess.run([wd.CLI, "status", "--job", job.job_id, "--json"], capture_output=True,
                                                text=True, timeout=60).stdout)
        got = {(c["comm"], c["rank"]): (c.get("replay") or {}).get("replay") for j in status_json["jobs"]
               for p in j["processes"] for c in p["comms"]}
        assert got == {(c, r): replays for c in comms for r in (0, 1)}, (
            f"status --json: replay per communicator: {got}")
        open(hold, "w").close()
        finished = job.wait(lambda: job.proc.poll() is not None, 60)
        assert finished and job.proc.returncode == 0, (
            f"the job ends well: {job.proc.returncode}\n{job.output()[-2000:]}")
        assert not job.dump_files(), f"no dump: {job.dump_files()}"
    finally:
        job.stop()
        job.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


def flight_recorder_entries(path):
    try:
        with open(path, "rb") as f:
            return pickle.load(f).get("entries", [])
    except (OSError, pickle.UnpicklingError, EOFError):
        return None


def graph_watch_vs_flight_recorder():
    """The same stuck replay seen by torch's Flight Recorder (dump on timeout, as
    teardown_scenarios.pg_timeout drives it) and by ncclwatch. torch neither records nor watches
    a collective issued while its stream captures, so the replay is invisible to it: it times out
    on the eager stop-flag all_reduce queued behind the replay, and that is all its trace holds."""
    fr_dir = tempfile.mkdtemp(prefix="ncclwatch-fr-")
    fr_prefix = os.path.join(fr_dir, "nccl_trace_rank_")
    job = ts.TorchJob("graph_vs_fr", 2, ["--replays", "30", "--stop-flag", "--pg-timeout-sec", "8"],
                      env={"NCCLSIM_FAULT": "hang:replay=5", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "3",
                           "TORCH_NCCL_TRACE_BUFFER_SIZE": "2000", "TORCH_FR_BUFFER_SIZE": "2000",
                           "TORCH_NCCL_DUMP_ON_TIMEOUT": "1", "TORCH_FR_DUMP_TEMP_FILE": fr_prefix,
                           "TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC": "2000"},
                      stall=ts.STALL_SEC, script=GRAPH_ALLREDUCE)
    try:
        started = time.monotonic()
        ended = job.wait(lambda: job.proc.poll() is not None, 120)
        assert ended, "torch's timeout ends the job"
        took = time.monotonic() - started
        entries = flight_recorder_entries(fr_prefix + "0")
        assert entries is not None, f"torch dumped its Flight Recorder on the timeout: {os.listdir(fr_dir)}"
        sizes = [e.get("input_sizes") for e in entries]
        assert all(s == [[1]] for s in sizes[1:]), f"after the warm-up, the trace holds only the stop flags: {sizes}"
        pending = [e for e in entries if e.get("state") != "completed"]
        assert len(pending) == 1 and pending[0].get("input_sizes") == [[1]], (
            f"the Flight Recorder's one pending entry is a stop flag, not the replay: "
            f"{[(e.get('collective_seq_id'), e.get('state'), e.get('input_sizes')) for e in pending]}")
        fr_seq = pending[0].get("collective_seq_id")
        comm = ts.world_comm(job)
        check_replay_incident(live_dumps(job, "replay_hang"), "replay_hang", comm, 5, [0, 1], [0, 1])
        code, text = analyze_text(job)
        assert code == 3 and text.startswith("VERDICT: replay_hang\n"), f"analyze: exit {code}\n{text[:800]}"
        behind = re.search(r"#(\d+) AllReduce \(framework seq (\d+)\) waits behind replay 5 of graph", text)
        assert behind is not None, f"analyze notes the stop flag waiting behind the replay:\n{text[:2500]}"
        assert int(behind[2]) == fr_seq, (
            f"its framework seq {behind[2]} is the Flight Recorder's collective_seq_id {fr_seq}")
        print("flight recorder: %d entries, pending %s (collective_seq_id %s, input sizes %s); replay 5: not in it" %
              (len(entries), [e.get("profiling_name") for e in pending], fr_seq,
               [e.get("input_sizes") for e in pending]))
        print(f"ncclwatch: {text.splitlines()[0]}; {behind[0]}; job ended {took:.1f} s after start")
    finally:
        job.stop()
        job.cleanup()
        shutil.rmtree(fr_dir, ignore_errors=True)


SCENARIOS = {
    "graph_watch_replays": lambda: same_with_and_without("graph_watch_replays", GRAPH_ALLREDUCE, "replay", 30),
    "graph_watch_callables": lambda: same_with_and_without("graph_watch_callables", GRAPHED_CALLABLES, "step", 20),
    "graph_watch_straggler": graph_watch_straggler,
    "graph_watch_replay_hang": graph_watch_replay_hang,
    "graph_watch_capture_mismatch": graph_watch_capture_mismatch,
    "graph_watch_two_comms": graph_watch_two_comms,
    "graph_watch_vs_flight_recorder": graph_watch_vs_flight_recorder,
}

@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
