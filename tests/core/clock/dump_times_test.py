"""Real enqueue times in what the user reads: a 2-rank ddp_loop with no compute between its
collectives (--step-ms 0: a step's Broadcast and AllReduce are issued microseconds apart) runs
healthy for 30 steps, then rank 1 stalls in data loading; both ranks dump.

Each rank's dump must show every back-to-back op at its own real time: enqueue times increasing
in issue order, never 1 ns apart (a coarse clock's ops in one 1-4 ms tick were told apart only
by +1 ns), and most ops under 1 ms apart (a coarse clock puts them 0 or a tick apart); a
completion never before its enqueue. `ncclwatch trace` of the dumps draws one lane per rank's
stream, whose spans never overlap.
"""

import json
import os
import subprocess

import pytest

from ncclwatch_test.sim_job import CLI, DDP_LOOP, Job, dump_of_rank, load_dumps

NS_PER_MS = 1_000_000


@pytest.fixture(scope="module")
def job():
    """The job, stopped once both ranks dumped; its files removed after the module's tests."""
    j = Job("dump_times", 2, [DDP_LOOP, "--quiet", "--tp", "1", "--steps", "1000", "--step-ms", "0",
                              "--straggler-rank", "1", "--straggler-step", "30", "--straggler-sec", "60"])
    try:
        j.wait(lambda: len(j.dump_files()) >= 2, 25)
    finally:
        j.stop()
    yield j
    j.cleanup()


@pytest.mark.parametrize("rank", [0, 1])
def test_enqueue_times(job, rank):
    dumps = load_dumps(job)
    assert len(dumps) == 2, f"both ranks dumped ({len(dumps)})"
    d = dump_of_rank(dumps, rank)
    assert d is not None, f"rank {rank} dumped"
    records = sorted((r for c in d["comms"] for r in c["records"]), key=lambda r: r["seq"])
    enqueued = [r["enqueue_ns"] for r in records]
    gaps = [b - a for a, b in zip(enqueued, enqueued[1:])]
    assert len(records) >= 20, f"rank {rank}: {len(records)} recent records in the dump"
    assert all(g > 0 for g in gaps), f"rank {rank}: enqueue times increase in issue order"
    assert all(g >= 100 for g in gaps), \
        f"rank {rank}: no two ops stamped within 100 ns (smallest gap {min(gaps, default=0)} ns)"
    close = sum(1 for g in gaps if g < NS_PER_MS)
    assert close * 2 >= len(gaps), \
        f"rank {rank}: most back-to-back ops under 1 ms apart ({close} of {len(gaps)}; gaps {sorted(gaps)[:5]}...)"
    assert all(r["complete_ns"] == 0 or r["complete_ns"] >= r["enqueue_ns"] for r in records), \
        f"rank {rank}: no completion before its enqueue"
    detected = d["incident"]["detected_mono_ns"]
    assert all(e <= detected for e in enqueued), f"rank {rank}: every enqueue before the detection"


def test_trace_lanes(job):
    trace_path = os.path.join(job.tmp, "trace.json")
    out = subprocess.run([CLI, "trace", job.dump_dir, "-o", trace_path], capture_output=True, text=True)
    assert out.returncode == 0, f"ncclwatch trace exits 0 ({out.returncode}: {out.stderr.strip()})"
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    lanes = {}
    for e in events:
        if e["ph"] == "X" and e.get("cat") == "collective":
            lanes.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    assert len(lanes) == 2, f"one lane per rank's stream ({len(lanes)} lanes)"
    for lane, spans in lanes.items():
        spans.sort()
        # ts and dur are µs as doubles: 1 ns of rounding is no overlap.
        overlapping = sum(1 for a, b in zip(spans, spans[1:]) if b[0] < a[1] - 0.001)
        assert overlapping == 0, f"lane {lane}: {overlapping} of {len(spans)} spans overlap the one before"
