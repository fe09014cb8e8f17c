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
import sys

from ncclwatch_test import runner
from ncclwatch_test.checks import check
from ncclwatch_test.sim_job import CLI, DDP_LOOP, Job, dump_of_rank, load_dumps

NS_PER_MS = 1_000_000


def back_to_back():
    job = Job("dump_times", 2, [DDP_LOOP, "--quiet", "--tp", "1", "--steps", "1000", "--step-ms", "0",
                                "--straggler-rank", "1", "--straggler-step", "30", "--straggler-sec", "60"])
    try:
        job.wait(lambda: len(job.dump_files()) >= 2, 25)
    finally:
        job.stop()
    try:
        dumps = load_dumps(job)
        check(len(dumps) == 2, f"both ranks dumped ({len(dumps)})")
        for rank in (0, 1):
            d = dump_of_rank(dumps, rank)
            if not check(d is not None, f"rank {rank} dumped"):
                continue
            records = sorted((r for c in d["comms"] for r in c["records"]), key=lambda r: r["seq"])
            enqueued = [r["enqueue_ns"] for r in records]
            gaps = [b - a for a, b in zip(enqueued, enqueued[1:])]
            check(len(records) >= 20, f"rank {rank}: {len(records)} recent records in the dump")
            check(all(g > 0 for g in gaps), f"rank {rank}: enqueue times increase in issue order")
            check(all(g >= 100 for g in gaps), f"rank {rank}: no two ops stamped within 100 ns "
                  f"(smallest gap {min(gaps, default=0)} ns)")
            close = sum(1 for g in gaps if g < NS_PER_MS)
            check(close * 2 >= len(gaps), f"rank {rank}: most back-to-back ops under 1 ms apart "
                  f"({close} of {len(gaps)}; gaps {sorted(gaps)[:5]}...)")
            check(all(r["complete_ns"] == 0 or r["complete_ns"] >= r["enqueue_ns"] for r in records),
                  f"rank {rank}: no completion before its enqueue")
            detected = d["incident"]["detected_mono_ns"]
            check(all(e <= detected for e in enqueued), f"rank {rank}: every enqueue before the detection")
        trace_path = os.path.join(job.tmp, "trace.json")
        out = subprocess.run([CLI, "trace", job.dump_dir, "-o", trace_path], capture_output=True, text=True)
        if check(out.returncode == 0, f"ncclwatch trace exits 0 ({out.returncode}: {out.stderr.strip()})"):
            events = json.load(open(trace_path))["traceEvents"]
            lanes = {}
            for e in events:
                if e["ph"] == "X" and e.get("cat") == "collective":
                    lanes.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
            check(len(lanes) == 2, f"one lane per rank's stream ({len(lanes)} lanes)")
            for lane, spans in lanes.items():
                spans.sort()
                # ts and dur are µs as doubles: 1 ns of rounding is no overlap.
                overlapping = sum(1 for a, b in zip(spans, spans[1:]) if b[0] < a[1] - 0.001)
                check(overlapping == 0, f"lane {lane}: {overlapping} of {len(spans)} spans overlap the one before")
    finally:
        job.cleanup()


if __name__ == "__main__":
    sys.exit(runner.run_named({"back_to_back": back_to_back}, sys.argv))
