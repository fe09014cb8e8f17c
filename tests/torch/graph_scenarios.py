#!/usr/bin/env python3
"""Real PyTorch CUDA graphs with collectives on the sim, without the watcher: graph_scenarios.py NAME.

Each scenario runs an example with torchrun through plain `scripts/sim-exec` (torch_scenarios.TorchJob
with watcher=False) and checks what the ranks printed: the values the examples verify after
every replay (copies and all-reduces computed by the sim), their exit, and, for the faults, where
the ranks stopped.
  graph_replays       examples/torch/graph_allreduce.py: dist.all_reduce captured in a
                      torch.cuda.CUDAGraph and replayed 30 times, then an eager all_reduce.
  graph_callables     examples/torch/graphed_callables.py: make_graphed_callables over a function
                      with an all_reduce in its forward and its backward, 20 steps.
  graph_replay_hang   graph_allreduce.py with NCCLSIM_FAULT=hang:replay=5: replays 1-4 check out,
                      the 5th never completes; killed after a timeout, both ranks' Python stacks
                      show them waiting for the 5th replay's result.
  graph_replay_die    NCCLSIM_FAULT=die:replay=3,rank=1: rank 1 dies (SIGKILL) in its 3rd replay.
Run under pytest (tests/torch/CMakeLists.txt: one ctest entry per scenario).
"""

import os
import re
import signal
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_scenarios as ts  # noqa: E402  TorchJob

EXAMPLES = os.path.join(ts.SOURCE, "examples", "torch")
GRAPH_ALLREDUCE = os.path.join(EXAMPLES, "graph_allreduce.py")
GRAPHED_CALLABLES = os.path.join(EXAMPLES, "graphed_callables.py")
# How long a replay that should have finished is given before the job is killed: a healthy
# replay takes milliseconds; the whole 30-replay job takes about 8 s on 2 shared cores.
HANG_WAIT_SEC = 8.0


def ok_lines(job, what):
    """{rank: [k, ...]} of the "rank R <what> K ok" lines."""
    out = {}
    for m in re.finditer(rf"^rank (\d+) {what} (\d+) ok$", job.output(), re.M):
        out.setdefault(int(m[1]), []).append(int(m[2]))
    return out


def run_to_end(name, script, args, timeout=150, env=None):
    job = ts.TorchJob(name, 2, args, env=env, watcher=False, script=script)
    finished = job.wait(lambda: job.proc.poll() is not None, timeout)
    code = job.proc.poll()
    job.stop()
    assert finished, f"{name}: the job ends within {timeout} s:\n{job.output()[-3000:]}"
    return job, code


def healthy(name, script, what, count):
    """The example runs `count` graph replays (steps) on both ranks, each checked, and exits 0."""
    job, code = run_to_end(name, script, [f"--{what}s", str(count)])
    try:
        assert code == 0, f"exit 0, got {code}:\n{job.output()[-3000:]}"
        assert ok_lines(job, what) == {0: list(range(1, count + 1)), 1: list(range(1, count + 1))}, f"every {what} of both ranks summed correctly"
        for rank in (0, 1):
            assert f"rank {rank} done: {count} {what}s" in job.output(), f"rank {rank} finished"
    finally:
        job.cleanup()


def worker_pids(job, script):
    """The torchrun workers running `script`."""
    pids = []
    for pid in job.rank_pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if script.encode() in f.read():
                    pids.append(pid)
        except OSError:
            pass
    return pids


def alive(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return "zombie" not in f.read()
    except OSError:
        return False


def source_line(script, text):
    with open(script) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def graph_replay_hang():
    job = ts.TorchJob("graph_replay_hang", 2, ["--replays", "30"], env={"NCCLSIM_FAULT": "hang:replay=5"},
                      watcher=False, script=GRAPH_ALLREDUCE)
    try:
        reached = job.wait(lambda: ok_lines(job, "replay") == {0: [1, 2, 3, 4], 1: [1, 2, 3, 4]}, 120)
        assert reached, f"replays 1-4 of both ranks check out:\n{job.output()[-3000:]}"
        time.sleep(HANG_WAIT_SEC)
        assert job.proc.poll() is None, f"the job is still running {HANG_WAIT_SEC} s later (hung)"
        assert ok_lines(job, "replay") == {0: [1, 2, 3, 4], 1: [1, 2, 3, 4]}, "no 5th replay completed"
        # The timeout kill: SIGTERM makes each worker dump its Python stacks (faulthandler).
        workers = worker_pids(job, GRAPH_ALLREDUCE)
        assert len(workers) == 2, f"two workers, found {workers}"
        for pid in workers:
            os.kill(pid, signal.SIGTERM)
        job.wait(lambda: not any(alive(pid) for pid in workers), 20)
        wait_line = source_line(GRAPH_ALLREDUCE, "got = static_out.cpu()")
        stacks = job.output().count(f'graph_allreduce.py", line {wait_line} in main')
        assert stacks == 2, (f"both ranks wait for the 5th replay's result (line {wait_line}), {stacks} found:\n"
                           f"{job.output()[-3000:]}")
    finally:
        job.stop()
        job.cleanup()


def graph_replay_die():
    job, code = run_to_end("graph_replay_die", GRAPH_ALLREDUCE, ["--replays", "30"],
                           env={"NCCLSIM_FAULT": "die:replay=3,rank=1"})
    try:
        assert code not in (0, None), f"the job fails, got {code}"
        lines = ok_lines(job, "replay")
        assert lines.get(1) == [1, 2], f"rank 1 completed replays 1-2 only: {lines}"
        assert 3 not in lines.get(0, []), f"rank 0 never completed replay 3 without its peer: {lines}"
        killed = re.search(r"rank\s*: 1 \(local_rank: 1\)\n\s*exitcode\s*: -9", job.output())
        assert killed is not None, f"torchrun reports rank 1 killed by SIGKILL:\n{job.output()[-3000:]}"
    finally:
        job.cleanup()


SCENARIOS = {
    "graph_replays": lambda: healthy("graph_replays", GRAPH_ALLREDUCE, "replay", 30),
    "graph_callables": lambda: healthy("graph_callables", GRAPHED_CALLABLES, "step", 20),
    "graph_replay_hang": graph_replay_hang,
    "graph_replay_die": graph_replay_die,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
