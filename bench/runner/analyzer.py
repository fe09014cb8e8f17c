"""Analyzer scale: analyze_bench's time and peak RSS for generated jobs of 64 to 16384 ranks."""

import collections
import re
import subprocess

from stats import median

SECTION = "analyzer scale"
SIZES = (64, 256, 512, 1024, 2048, 4096, 8192, 16384)
QUICK_SIZES = (64, 256, 1024, 4096)
# A person waits for it after an incident: the largest job must take seconds, not minutes, and
# fit on a login node; cost per rank must stay flat (linear growth). Jobs of 16384 GPUs run today.
GOALS = {  # ranks: (seconds, MiB peak RSS)
    4096: (2.0, 1024.0),
    16384: (5.0, 2048.0),
}
GOAL_GROWTH = 1.5  # time per rank at 16384 against 1024
GROWTH_FROM = 1024

LINE = re.compile(r"(\d+) ranks\s+([\d.]+) s \(read ([\d.]+) s, cpu ([\d.]+) s\)\s+([\d.]+) MiB peak RSS")


def run(ctx, results):
    sizes, repeats = (QUICK_SIZES, 1) if ctx.quick else (SIZES, 3)
    out = subprocess.run([ctx.bin("analyze_bench"), f"--repeat={repeats}"] + [str(s) for s in sizes],
                         capture_output=True, text=True, timeout=600, check=True).stdout
    runs = collections.defaultdict(list)
    for n, t, rd, cpu, rss in LINE.findall(out):
        runs[int(n)].append((float(t), float(rd), float(rss), float(cpu)))
    # Median of the repeats per size: one slow read on a shared disk is noise, not growth.
    rows = [(n, median([r[0] for r in rs]), median([r[1] for r in rs]), median([r[2] for r in rs]),
             median([r[3] for r in rs])) for n, rs in sorted(runs.items())]
    print(f"  median of {repeats} analyses per size, each in a fresh process")
    prev = None
    for n, sec, read, rss, cpu in rows:
        growth = ""
        if prev:
            dn = n - prev[0]
            growth = (f"; growth since {prev[0]}: {1000 * (sec - prev[1]) / dn:.2f} ms/rank, "
                      f"{1024 * (rss - prev[3]) / dn:.0f} KiB/rank")
        value = (f"{sec:.3f} s (read {read:.3f} s; cpu {cpu:.3f} s), {rss:.0f} MiB peak RSS, "
                 f"{1000 * sec / n:.2f} ms/rank{growth}")
        print(f"  {n:5d} ranks: {value}")
        goal, met = "", None
        if n in GOALS:
            goal_sec, goal_rss = GOALS[n]
            goal = f"<= {goal_sec:g} s, <= {goal_rss:.0f} MiB"
            met = sec <= goal_sec and rss <= goal_rss
        results.add(SECTION, f"{n} ranks", value, goal, met)
        prev = (n, sec, read, rss, cpu)
    base = [r for r in rows if r[0] == GROWTH_FROM]
    if base and rows[-1][0] > GROWTH_FROM:
        first, last = base[0], rows[-1]
        growth = (last[1] / last[0]) / (first[1] / first[0])
        results.add(SECTION, f"time per rank at {last[0]} / at {first[0]}", f"x{growth:.2f}",
                    f"<= x{GOAL_GROWTH:g} (linear)", growth <= GOAL_GROWTH)
    if len(rows) != len(sizes):
        results.add(SECTION, "(section)", f"only {len(rows)} of {len(sizes)} sizes measured", "", False)
