#!/usr/bin/env python3
"""P2P scenarios over the sim: pytest p2p_scenarios.py::test_scenario[NAME].

Each runs examples/p2p_loop under LD_PRELOAD=libncclwatch.so through scripts/launch (the
watchdog scenarios' Job: a private job id and dump directory, a 2 s threshold, a 200 ms poll),
plants one P2P failure, and checks every rank's dump (kind, communicator, number, op, culprits,
onset -> detection latency) and `ncclwatch analyze --json` (the same verdict, and the P2P ops
of the pair or cycle).
"""

import os
import sys

import pytest

import ncclwatch_test.sim_job as wd  # Job, check_incident, analyze, ...

P2P_LOOP = os.path.join(wd.BUILD, "examples", "p2p_loop")
STEP_MS = 20


def run(name, nranks, args, expect_dumps, env=None):
    cmd = [P2P_LOOP, "--quiet", "--steps", "1000", "--step-ms", str(STEP_MS)] + args
    job = wd.Job(name, nranks, cmd, env=env)
    try:
        job.wait(lambda: len(job.dump_files()) >= expect_dumps, 25)
        wd.time.sleep(2 * wd.POLL_MS / 1000)  # a later dump would be a duplicate: give it the chance
    finally:
        job.stop()
    return job


def world_comm(job, dumps):
    d = wd.dump_of_rank(dumps, 0)
    return wd.comm_of(job, d["process"]["pid"], "ncclCommInitRank") if d else None


def check_p2p_rows(report, expected):
    """expected: (rank, op, peer, posted) of each P2P evidence row analyze shows, in order."""
    rows = [(r["rank"], r["op"], r["peer"], r["posted"]) for r in report.get("p2p", [])]
    assert rows == expected, f"analyze p2p rows {rows}, expected {expected}"


def verdict_of(job, kind, comm, seq, op, culprits, dumping_ranks):
    dumps = wd.load_dumps(job)
    assert dumps, "some rank dumped"
    comm = comm or world_comm(job, dumps)
    wd.check_incident(dumps, kind, comm, seq, op, culprits, dumping_ranks)
    report = wd.analyze(job)
    wd.check_analysis(report, kind, comm, seq, op, culprits)
    return report


def ring_deadlock():
    # 3 ranks; rank 0 receives first at step 5: each waits in Recv #6 from its predecessor.
    job = run("p2p_ring", 3, ["--pattern", "ring", "--recv-first", "--bug-step", "5"], expect_dumps=3)
    try:
        report = verdict_of(job, "p2p_deadlock", None, 6, "Recv", [0, 1, 2], [0, 1, 2])
        check_p2p_rows(report, [(0, "Recv", 2, True), (2, "Recv", 1, True), (1, "Recv", 0, True)])
        assert "cycle rank 0 -> rank 2 -> rank 1 -> rank 0" in report["verdict"].get("summary", ""), \
            "analyze names the cycle"
    finally:
        job.cleanup()


def alltoall_skip():
    # 4 ranks; from step 5 on rank 2 leaves rank 0 out of its grouped all-to-all. Rank 0 waits
    # in its 6th Send to rank 2 (the first op of that pair in its group).
    job = run("p2p_alltoall", 4, ["--pattern", "alltoall", "--skip-rank", "2", "--skip-peer", "0",
                                  "--bug-step", "5"], expect_dumps=4)
    try:
        report = verdict_of(job, "p2p_straggler", None, 6, "Send", [2], [0, 1, 2, 3])
        rows = [(r["rank"], r["op"], r["peer"], r["posted"]) for r in report.get("p2p", [])]
        assert (2, "Recv", 0, False) in rows, f"analyze shows rank 2 owes Recv to rank 0: {rows}"
    finally:
        job.cleanup()


def pipeline_stall():
    # 3 stages, 4 micro-batches per step; stage 0 stalls in host code before its sends at step 5:
    # stage 1 waits in its 21st Recv from stage 0.
    job = run("p2p_stall", 3, ["--pattern", "pipeline", "--micro-batches", "4", "--stall-rank", "0",
                               "--bug-step", "5"], expect_dumps=3)
    try:
        report = verdict_of(job, "p2p_straggler", None, 21, "Recv", [0], [0, 1, 2])
        check_p2p_rows(report, [(0, "Send", 1, False), (1, "Recv", 0, True)])
        dumps = wd.load_dumps(job)
        frames = wd.frames_of(wd.dump_of_rank(dumps, 0))
        assert any("StallBeforeSend" in f for f in frames), "stage 0's stack shows where it stalls"
    finally:
        job.cleanup()


def pipeline_transport_hang():
    # 2 stages, 4 micro-batches; the sim's transport never moves op #21 of either rank (stage 0's
    # 21st Send, stage 1's 21st Recv): both posted, neither completes. Stage 1 posts its Recvs
    # before its step's compute, stage 0 its Sends after: the Recv is the older wait, named first.
    job = run("p2p_hang", 2, ["--pattern", "pipeline", "--micro-batches", "4"], expect_dumps=2,
              env={"NCCLSIM_FAULT": "hang:comm=0,seq=21"})
    try:
        report = verdict_of(job, "p2p_hang", None, 21, "Recv", [0, 1], [0, 1])
        check_p2p_rows(report, [(1, "Recv", 0, True), (0, "Send", 1, True)])
        assert any(h["id"] == "p2p_transport" for h in report.get("hints", [])), "p2p_transport hint"
    finally:
        job.cleanup()


def healthy():
    # Every pattern runs to its end on the sim, for more than twice the stall threshold (500 steps
    # of 10 ms: over 5 s), and writes nothing.
    for pattern, n in (("pipeline", 3), ("ring", 3), ("alltoall", 4)):
        job = wd.Job(f"p2p_healthy_{pattern}", n, [P2P_LOOP, "--quiet", "--pattern", pattern, "--steps", "500",
                                                    "--step-ms", "10"])
        try:
            start = wd.time.monotonic()
            job.wait(lambda: False, 40)
            rc = job.proc.poll()
            assert wd.time.monotonic() - start > 2 * wd.STALL_SEC, f"{pattern}: ran longer than twice the threshold"
            job.stop()
            assert rc == 0, f"{pattern}: job exit {rc}: {job.output()[-500:]}"
            assert not job.dump_files(), f"{pattern}: healthy job wrote dumps {job.dump_files()}"
            assert "WARN" not in job.output(), f"{pattern}: healthy job logged a warning"
        finally:
            job.stop()
            job.cleanup()


SCENARIOS = {
    "ring_deadlock": ring_deadlock,
    "alltoall_skip": alltoall_skip,
    "pipeline_stall": pipeline_stall,
    "pipeline_transport_hang": pipeline_transport_hang,
    "healthy": healthy,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
