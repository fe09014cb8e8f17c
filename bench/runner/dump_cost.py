"""Dump cost: bench_dump_cost's capture and write time and file sizes per thread count."""

import collections
import re
import subprocess

from stats import median

SECTION = "dump cost"
THREADS = (8, 64, 256)
# A rank's dump must not eat into the "within seconds" promise, nor fill a disk at scale.
GOAL_MS = 1000.0
GOAL_BYTES = 1 << 20

LINE = re.compile(r"dump threads=(\d+) capture_ms=([\d.]+) write_ms=([\d.]+) json_bytes=(-?\d+) txt_bytes=(-?\d+)")


def run(ctx, results):
    repeats = 3 if ctx.quick else 5
    out = subprocess.run([ctx.bin("bench_dump_cost"), str(repeats)] + [str(t) for t in THREADS],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    by_threads = collections.defaultdict(list)
    for m in LINE.finditer(out):
        t, cap, wr, js, tx = m.groups()
        by_threads[int(t)].append((float(cap), float(wr), int(js), int(tx)))
    print(f"  {repeats} dumps per thread count (threads counted in the capture)")
    for threads in sorted(by_threads):
        rows = by_threads[threads]
        cap = median([r[0] for r in rows])
        wr = median([r[1] for r in rows])
        size = median([r[2] + r[3] for r in rows])
        js = median([r[2] for r in rows])
        value = f"{cap + wr:.1f} ms (capture {cap:.1f} + write {wr:.1f}), {size / 1024:.0f} KiB (json {js / 1024:.0f} KiB)"
        print(f"  {threads:4d} threads: {value}")
        results.add(SECTION, f"{threads} threads: time, size per rank", value,
                    f"<= {GOAL_MS:.0f} ms, <= {GOAL_BYTES >> 10} KiB", cap + wr <= GOAL_MS and size <= GOAL_BYTES)
    if not by_threads:
        results.add(SECTION, "(section)", "no measurement parsed", "", False)
