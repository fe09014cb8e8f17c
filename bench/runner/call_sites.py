"""Cost of NCCLWATCH_CALL_SITES=1: ncclAllReduce issued from Python (ctypes, GIL released as
torch does) over the sim in no-op mode, per call, three ways in alternating rounds: without the
preload, with it (call sites off, the default), and with NCCLWATCH_CALL_SITES=1. The setting's
cost is the third minus the second. It grows with the library frames the walk passes before the
user's (preload/call_sites/python_frames_311.h), so the call is made below 4 frames of library code (about
torch's c10d wrappers over a collective) and below 32.
"""

import os
import subprocess
import sys

import ranks
from hooks import pinned_cpu
from stats import median, percentile

SECTION = "call sites"
DEPTHS = (4, 32)
VARIANTS = ("plain", "off", "on")


def run_once(ctx, variant, depth, batches, job_id):
    env = dict(os.environ, NCCLSIM_NOOP="1", NCCLSIM_NOOP_EVENTS="1", NCCLWATCH_JOB_ID=job_id)
    sim_lib = os.path.join(ctx.build_dir, "sim", "lib")
    env["LD_LIBRARY_PATH"] = sim_lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env.pop("LD_PRELOAD", None)
    env.pop("NCCLWATCH_CALL_SITES", None)
    if variant != "plain":
        env["LD_PRELOAD"] = ctx.preload
    if variant == "on":
        env["NCCLWATCH_CALL_SITES"] = "1"
    cpu = pinned_cpu()
    script = os.path.join(ctx.source_dir, "bench", "callsites", "python_loop.py")
    out = subprocess.run([sys.executable, script, str(depth), str(batches)], env=env, capture_output=True, text=True,
                         timeout=300, check=True, preexec_fn=lambda: os.sched_setaffinity(0, {cpu})).stdout
    ranks.remove_segments(job_id)
    return [float(line.split()[1]) for line in out.splitlines() if line.startswith("sample ")]


def run(ctx, results):
    rounds, batches = (2, 40) if ctx.quick else (6, 100)
    version = "%d.%d" % sys.version_info[:2]
    print(f"  Python {version}; {rounds} rounds x {batches} batches x 128 calls per variant and depth, "
          f"pinned to CPU {pinned_cpu()}")
    for depth in DEPTHS:
        samples = {v: [] for v in VARIANTS}
        diffs = []
        for i in range(rounds):
            order = VARIANTS if i % 2 == 0 else tuple(reversed(VARIANTS))
            got = {v: run_once(ctx, v, depth, batches, f"{ctx.tag}-callsites-{depth}-{i}-{v}") for v in order}
            for v in VARIANTS:
                samples[v] += got[v]
            diffs += [on - off for off, on in zip(got["off"], got["on"])]
        line = (f"+{median(diffs):.0f} ns median, +{percentile(diffs, 99):.0f} ns p99 per call "
                f"({median(samples['plain']):.0f} ns without the preload, {median(samples['off']):.0f} with it, "
                f"{median(samples['on']):.0f} with NCCLWATCH_CALL_SITES=1)")
        print(f"  {depth:2d} library frames: {line}")
        results.add(SECTION, f"NCCLWATCH_CALL_SITES=1, Python {version}, {depth} library frames: added per op", line,
                    "documented (off by default: above the 100 ns hook budget)")
