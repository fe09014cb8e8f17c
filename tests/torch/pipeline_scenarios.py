#!/usr/bin/env python3
"""Real PyTorch pipelines (dist.send / dist.recv) on the sim, under the watcher:
pytest pipeline_scenarios.py::test_scenario[NAME].

Each runs examples/torch/pipeline.py (two stages) with torchrun through `sim-exec ncclwatch run`
(torch_scenarios.TorchJob) and checks every rank's dump and `ncclwatch analyze --json`. The
communicator torch sends on (the world's, with device_id) is the verdict's; its ranks are the stages. Per
step each stage sends --micro-batches tensors to the other, so the op a stage waits in at step
S is its (S x micro-batches + 1)-th towards its peer.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_scenarios as ts  # noqa: E402  TorchJob, world_comm, ...

wd = ts.wd
PIPELINE = os.path.join(ts.SOURCE, "examples", "torch", "pipeline.py")


def run(name, args, expect_dumps=2, env=None):
    job = ts.TorchJob(name, 2, ["--steps", "1000"] + args, env=env, script=PIPELINE)
    job.wait(lambda: len(job.dump_files()) >= expect_dumps, 90)
    ts.time.sleep(2 * ts.POLL_MS / 1000)  # a duplicate dump would show up now
    job.stop()
    return job


def check_verdict(job, kind, seq, op, culprits):
    dumps = wd.load_dumps(job)
    assert dumps, f"{kind}: some rank dumped:\n{job.output()[-3000:]}"
    comm = dumps[0]["verdict"]["comm"]  # torch sends on the world's communicator or one of the pair
    wd.check_incident(dumps, kind, comm, seq, op, culprits, [0, 1], bound_ns=ts.LATENCY_BOUND_NS)
    report = wd.analyze(job)
    wd.check_analysis(report, kind, comm, seq, op, culprits)
    return report


def stage_stall(micro_batches):
    step = 3
    job = run(f"pipe_stall_{micro_batches}", ["--micro-batches", str(micro_batches), "--stall-rank", "0",
                                              "--stall-step", str(step)])
    try:
        # Stage 1 waits in its (step x mb + 1)-th Recv from stage 0, which never sent it.
        report = check_verdict(job, "p2p_straggler", step * micro_batches + 1, "Recv", [0])
        rows = [(r["rank"], r["op"], r["peer"], r["posted"]) for r in report.get("p2p", [])]
        assert rows[:2] == [(0, "Send", 1, False), (1, "Recv", 0, True)], f"analyze p2p rows {rows}"
        culprit = wd.dump_of_rank(wd.load_dumps(job), 0)
        frames = [f.get("function") for t in (culprit or {}).get("python_stacks", {}).get("threads", [])
                  for f in t["frames"]]
        assert "wait_for_the_next_batch_from_storage" in frames, \
            f"the culprit's Python stack shows where stage 0 stalls: {frames[:12]}"
        stacks = " ".join(f.get("func", "") for g in report.get("stacks", []) for t in g.get("threads", [])
                          for f in t.get("frames", []))
        assert "wait_for_the_next_batch_from_storage" in stacks, "analyze shows the culprit's stack"
    finally:
        job.cleanup()


def recv_first():
    step = 3
    job = run("pipe_recv_first", ["--recv-first-step", str(step)])
    try:
        report = check_verdict(job, "p2p_deadlock", step + 1, "Recv", [0, 1])
        rows = [(r["rank"], r["op"], r["peer"]) for r in report.get("p2p", [])]
        assert rows == [(0, "Recv", 1), (1, "Recv", 0)], f"analyze names each stage's Recv: {rows}"
    finally:
        job.cleanup()


def healthy():
    """Both schedules (one tensor, micro-batches) run to their end and write nothing."""
    for mb in (1, 4):
        job = ts.TorchJob(f"pipe_healthy_{mb}", 2, ["--steps", "200", "--micro-batches", str(mb)],
                          env={"NCCL_DEBUG": "WARN"}, script=PIPELINE)
        try:
            job.proc.wait(timeout=150)
        except ts.subprocess.TimeoutExpired:
            job.stop()
            pytest.fail(f"healthy pipeline (mb={mb}) did not finish in 150 s")
        job.log.close()
        out = job.output()
        assert job.proc.returncode == 0, f"healthy pipeline (mb={mb}) exit {job.proc.returncode}:\n{out[-3000:]}"
        assert not job.dump_files(), f"healthy pipeline (mb={mb}): no dump, got {job.dump_files()}"
        done = sorted(line for line in out.splitlines() if " done: " in line)
        assert done == ["rank 0 done: 200 steps", "rank 1 done: 200 steps"], f"both stages finished: {done}"
        job.cleanup()


SCENARIOS = {
    "pipeline_stall": lambda: stage_stall(1),
    "pipeline_stall_micro_batches": lambda: stage_stall(4),
    "pipeline_recv_first": recv_first,
    "pipeline_healthy": healthy,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
