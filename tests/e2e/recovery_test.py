#!/usr/bin/env python3
"""End-to-end: incidents that end, and one that does not, over the sim: pytest recovery_test.py::test_scenario[NAME].

With the helpers of tests/lib/ncclwatch_test (scripts/launch, LD_PRELOAD, a private job
id and dump directory, 200 ms poll), 2 ranks, a 3 s stall threshold.
  slow_resolves       collective #4 is 7 s slow (NCCLSIM_FAULT slow), then the job finishes:
                      dumps, a resolution note next to each, "resolved after" in the live log,
                      analyze --json verdict.resolved true and exit 4
  hang_unresolved     collective #4 never completes (NCCLSIM_FAULT hang): no note, no
                      "resolved" line, analyze exit 3 with verdict.resolved false
  mismatch_completes  op sequences diverge at #2 (AllReduce vs Broadcast), the sim lets the pair
                      complete (NCCLSIM_FAULT mismatch_completes), #3 completes, #4 hangs: the
                      watchdog and analyze both say mismatch at #2; a mismatch never resolves
"""

import glob
import json
import os
import stat
import subprocess
import sys
import time

import pytest

import ncclwatch_test.sim_job as st

RANK = os.environ.get("NCCLWATCH_RANK", os.path.join(st.BUILD, "bin", "preload_rank"))
STALL_SEC = 3
SLOW_MS = 7000
# ddp_loop --tp 1: step 0 is Broadcast #1 + AllReduce #2, step s > 0 the AllReduce #(s + 2).
SLOW_SEQ = st.grad_allreduce_seq(2)


def env_with(fault):
    return {"NCCLWATCH_STALL_SEC": str(STALL_SEC), "NCCLSIM_FAULT": fault}


def notes_of(job):
    return sorted(glob.glob(os.path.join(job.dump_dir, "*.resolved")))


def analyze(job, *extra):
    r = subprocess.run([st.CLI, "analyze", job.dump_dir, *extra], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def analyze_json(job):
    rc, out, err = analyze(job, "--json")
    try:
        return rc, json.loads(out)
    except ValueError:
        pytest.fail(f"analyze --json output is not JSON (exit {rc}): {out[:200]} {err[:200]}")


def resolved_lines(job):
    return [line for line in job.output().splitlines() if "NCCLWATCH INFO resolved after" in line]


def slow_resolves():
    job = st.Job("slow_resolves", 2, [st.DDP_LOOP, "--quiet", "--tp", "1", "--steps", "5", "--step-ms", "20"],
                 env=env_with(f"slow:comm=0,seq={SLOW_SEQ},ms={SLOW_MS}"))
    try:
        finished = job.wait(lambda: job.proc.poll() is not None, 30)
        rc = job.proc.returncode
    finally:
        job.stop()
    try:
        assert finished and rc == 0, f"the job finished well after the slow collective (exit {rc})"
        dumps = st.load_dumps(job)
        comm = st.ddp_world_comm(job, dumps)
        mine = st.check_incident(dumps, "collective_hang", comm, SLOW_SEQ, "AllReduce", [0, 1], [0, 1],
                                 bound_ns=int((STALL_SEC + 2 * st.POLL_MS / 1000 + st.SLACK_SEC) * st.NS))
        by_dump = {p[:-len(".json")]: json.load(open(p)) for p in job.dump_files()}
        notes = notes_of(job)
        assert sorted(n[:-len(".resolved")] for n in notes) == sorted(by_dump), \
            f"one resolution note next to each dump: {[os.path.basename(n) for n in notes]}"
        for path in notes:
            mode = os.lstat(path).st_mode
            assert stat.S_ISREG(mode) and stat.S_IMODE(mode) == 0o600, f"{path}: a regular 0600 file"
            note = json.load(open(path))
            d = by_dump.get(path[:-len(".resolved")])
            assert d is not None, f"{path}: has its dump"
            assert note.get("schema") == "ncclwatch.resolution" and note.get("version") == 1, f"note schema: {note}"
            assert note.get("incident") == d["incident"]["id"] and note.get("pid") == d["process"]["pid"], \
                f"the note names its dump's incident and pid: {note}"
            # The sim sleeps 7 s after every rank joined #4, which is after both issued it (the
            # onset); the watchdog sees the completion within a tracker poll and its own poll.
            since = d["verdict"]["since_mono_ns"]
            waited = note.get("resolved_mono_ns", 0) - since
            assert SLOW_MS / 1000 * st.NS <= waited <= (SLOW_MS / 1000 + 2 * st.POLL_MS / 1000 + st.SLACK_SEC) * st.NS, \
                f"resolved {waited / st.NS:.2f} s after the onset, expected the {SLOW_MS} ms of the fault"
            assert note.get("resolved_mono_ns", 0) > d["incident"]["detected_mono_ns"], "resolved after detected"
            print(f"RESOLVED rank {d['process']['global_rank']}: {waited / st.NS:.3f} s after onset, "
                  f"{(note['resolved_mono_ns'] - d['incident']['detected_mono_ns']) / st.NS:.3f} s after detection")
        lines = resolved_lines(job)
        assert len(lines) == 2, f"one 'resolved after' line per rank: {lines}"
        assert all(f"collective_hang comm {comm} #{SLOW_SEQ} AllReduce" in line for line in lines), \
            f"the lines name the incident: {lines}"
        rc, report = analyze_json(job)
        v = report.get("verdict", {})
        # A hang all the same, slow not stuck: non-zero, and apart from 3 (a hang still open).
        assert rc == 4, f"analyze exits 4 when every incident resolved (got {rc})"
        assert v.get("kind") == "collective_hang" and v.get("seq") == SLOW_SEQ, f"analyze verdict {v}"
        assert v.get("resolved") is True, f"analyze verdict.resolved {v.get('resolved')}"
        assert v.get("resolved_after_ns", 0) > 0, f"analyze verdict.resolved_after_ns {v.get('resolved_after_ns')}"
        rc, text, _ = analyze(job)
        assert rc == 4 and "\n  resolved after " in text, f"analyze text says resolved (exit {rc}):\n{text[:600]}"
        assert len(mine) == 2, "both ranks dumped"
    finally:
        job.cleanup()


def hang_unresolved():
    job = st.Job("hang_unresolved", 2, [st.DDP_LOOP, "--quiet", "--tp", "1", "--steps", "5", "--step-ms", "20"],
                 env=env_with(f"hang:comm=0,seq={SLOW_SEQ}"))
    try:
        job.wait(lambda: len(job.dump_files()) >= 2, 20)
        time.sleep(5 * st.POLL_MS / 1000)  # a wrong resolution would show within a few polls
    finally:
        job.stop()
    try:
        dumps = st.load_dumps(job)
        comm = st.ddp_world_comm(job, dumps)
        st.check_incident(dumps, "collective_hang", comm, SLOW_SEQ, "AllReduce", [0, 1], [0, 1],
                          bound_ns=int((STALL_SEC + 2 * st.POLL_MS / 1000 + st.SLACK_SEC) * st.NS))
        assert not notes_of(job), f"no resolution note for a real hang: {notes_of(job)}"
        assert not resolved_lines(job), "no 'resolved' line for a real hang"
        rc, report = analyze_json(job)
        assert rc == 3, f"analyze exits 3 for a hang that never resolved (got {rc})"
        assert report.get("verdict", {}).get("resolved") is False, f"verdict.resolved {report.get('verdict')}"
    finally:
        job.cleanup()


def mismatch_completes():
    unique_id = os.urandom(128).hex()
    job = st.Job("mismatch_completes", 2, [RANK, "diverge"],
                 env={"NCCLSIM_FAULT": "mismatch_completes:seq=2;hang:seq=4", "NCCLWATCH_TEST_ID0": unique_id})
    try:
        job.wait(lambda: len(job.dump_files()) >= 2, 20)
        time.sleep(2 * st.POLL_MS / 1000)  # a later dump would be a duplicate: give it the chance to show
    finally:
        job.stop()
    try:
        out = job.output()
        assert out.count("COMPLETED 3") == 2, "both ranks saw the mismatched #2 and #3 complete"
        dumps = st.load_dumps(job)
        d0 = st.dump_of_rank(dumps, 0)
        comm = st.comm_of(job, d0["process"]["pid"], "ncclCommInitRank") if d0 else None
        assert comm is not None, "the communicator's id printed by the sim"
        # Two ranks, no unique majority: both are named; the op is what the lowest culprit issued.
        st.check_incident(dumps, "mismatch", comm, 2, "AllReduce", [0, 1], [0, 1], bound_ns=st.MISMATCH_BOUND_NS)
        assert "NCCLWATCH WARN mismatch" in out, "the live log says mismatch"
        rc, report = analyze_json(job)
        assert rc == 3, f"analyze exits 3 for a mismatch (got {rc})"
        st.check_analysis(report, "mismatch", comm, 2, "AllReduce", [0, 1])
        at_2 = [f for f in report.get("fingerprints", []) if f.get("seq") == 2]
        assert len(at_2) == 1 and at_2[0]["differs"], "analyze: fingerprints differ at #2"
        ops = {e["rank"]: e["op"] for e in at_2[0]["by_rank"]}
        assert ops == {0: "AllReduce", 1: "Broadcast"}, f"analyze: ops at #2 by rank {ops}"
        assert report.get("verdict", {}).get("resolved") is False, "a mismatch is never resolved"
        assert not notes_of(job), "no resolution note for a mismatch, although its collectives completed"
    finally:
        job.cleanup()


SCENARIOS = {
    "slow_resolves": slow_resolves,
    "hang_unresolved": hang_unresolved,
    "mismatch_completes": mismatch_completes,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
