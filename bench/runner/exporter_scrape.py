#!/usr/bin/env python3
"""Exporter scrape: latency and exporter CPU for NRANKS x NCOMMS communicators.

A section of bench/runner/main.py (scripts/bench --only exporter), or standalone:
  python3 bench/runner/exporter_scrape.py [--ranks 8] [--comms 256] [--scrapes 40] [--max-records N]

build/bin/exporter_fake_ranks publishes NRANKS segments of NCOMMS communicators each, with full
rings (1024 records, the newest pending); `ncclwatch exporter --job` serves them; this runner
scrapes /metrics SCRAPES times, 300 ms apart (beyond the exporter's 200 ms reuse window, so
every scrape is a fresh read of every segment), and prints latency (median, p99, max), the
exporter's CPU per scrape (utime + stime from /proc), its resident memory, the response size
and the series count. Plain scrapes get the text format; --as-prometheus scrapes as Prometheus
does (OpenMetrics 1.0 asked for in Accept, gzip), and the section runs both. Not a test: it
prints figures. BUILD_DIR picks the build (default build/).
"""

import argparse
import gzip
import os
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402
import stats  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD_DIR", os.path.join(ROOT, "build"))
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SECTION = "exporter scrape"
# Prometheus 2.42's scrape request headers (captured from Debian's prometheus).
PROMETHEUS_HEADERS = {
    "Accept": "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
              "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    "Accept-Encoding": "gzip"}
# A scrape must finish well inside Prometheus' default 10 s scrape timeout, and the exporter
# must stay a background process: at a 15 s scrape interval, 150 ms per scrape is 1 % of a core.
GOAL_P99_MS = 1000.0
GOAL_CPU_MS = 150.0


def run(ctx, results):
    for as_prometheus, how in ((False, "text"), (True, "as Prometheus: OpenMetrics, gzip")):
        m = measure(ctx.build_dir, 8, 256, 10 if ctx.quick else 40, None, as_prometheus)
        where = f"8 ranks x 256 comms, {how}"
        results.add(SECTION, f"scrape latency p99, {where}", f"{m['p99_ms']:.0f} ms (median {m['median_ms']:.0f})",
                    f"<= {GOAL_P99_MS:.0f} ms", m["p99_ms"] <= GOAL_P99_MS)
        results.add(SECTION, f"exporter CPU per scrape, {where}", f"{m['cpu_ms']:.0f} ms",
                    f"<= {GOAL_CPU_MS:.0f} ms", m["cpu_ms"] <= GOAL_CPU_MS)
        results.add(SECTION, f"exporter resident memory, {where}", f"{m['rss_mib']:.0f} MiB", "", None,
                    f"{m['kib']:.0f} KiB sent, {m['series']} series per scrape")


def measure(build, nranks, ncomms, scrapes, max_records, as_prometheus=False):
    """Figures of `scrapes` scrapes of an exporter serving nranks x ncomms communicators, plain
    (text format) or with Prometheus' request headers (OpenMetrics, gzip)."""
    job = f"bench-exporter-{os.getpid()}"
    ranks = subprocess.Popen([os.path.join(build, "bin", "exporter_fake_ranks"), job, str(nranks), str(ncomms)],
                             stdout=subprocess.PIPE, text=True)
    exporter = None
    try:
        if ranks.stdout.readline().strip() != "ready":
            raise RuntimeError("exporter_fake_ranks failed")
        port = free_port()
        cmd = [os.path.join(build, "bin", "ncclwatch"), "exporter", "--listen", f"127.0.0.1:{port}", "--job", job]
        if max_records:
            cmd += ["--max-records", str(max_records)]
        exporter = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}/metrics"
        for _ in range(100):
            try:
                urllib.request.urlopen(url, timeout=5).read()
                break
            except OSError:
                time.sleep(0.05)
        time.sleep(0.3)
        latencies = []
        cpu_before = cpu_seconds(exporter.pid)
        size = series = 0
        request = urllib.request.Request(url, headers=PROMETHEUS_HEADERS if as_prometheus else {})
        for _ in range(scrapes):
            start = time.monotonic()
            with urllib.request.urlopen(request, timeout=30) as r:
                body = r.read()
                gzipped = r.headers.get("Content-Encoding") == "gzip"
            latencies.append(time.monotonic() - start)
            size = len(body)
            text = (gzip.decompress(body) if gzipped else body).decode()
            series = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
            time.sleep(0.3)
        ms = [x * 1000 for x in latencies]
        return {"median_ms": stats.median(ms), "p99_ms": stats.percentile(ms, 99), "max_ms": max(ms),
                "cpu_ms": 1000 * (cpu_seconds(exporter.pid) - cpu_before) / scrapes,
                "rss_mib": rss_mib(exporter.pid), "kib": size / 1024, "series": series}
    finally:
        if exporter:
            exporter.terminate()
            exporter.wait()
        ranks.terminate()
        ranks.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--comms", type=int, default=256)
    ap.add_argument("--scrapes", type=int, default=40)
    ap.add_argument("--max-records", type=int, default=None)
    ap.add_argument("--as-prometheus", action="store_true", help="Prometheus' Accept (OpenMetrics) and gzip")
    args = ap.parse_args()
    m = measure(BUILD, args.ranks, args.comms, args.scrapes, args.max_records, args.as_prometheus)
    print(f"machine: {machine.describe()}")
    print(f"{args.ranks} ranks x {args.comms} communicators, {args.scrapes} scrapes, "
          f"--max-records {args.max_records or 'default'}, {'as Prometheus (OpenMetrics, gzip)' if args.as_prometheus else 'text'}")
    print("| figure | value |")
    print("|---|---|")
    print(f"| scrape latency, median | {m['median_ms']:.1f} ms |")
    print(f"| scrape latency, p99 | {m['p99_ms']:.1f} ms |")
    print(f"| scrape latency, max | {m['max_ms']:.1f} ms |")
    print(f"| exporter CPU per scrape | {m['cpu_ms']:.1f} ms |")
    print(f"| exporter resident memory | {m['rss_mib']:.1f} MiB |")
    print(f"| response | {m['kib']:.0f} KiB sent, {m['series']} series |")


if __name__ == "__main__":
    main()
