#!/usr/bin/env python3
"""Exporter benchmark: scrape latency and exporter CPU for NRANKS x NCOMMS communicators.

  python3 bench/runner/exporter_scrape.py [--ranks 8] [--comms 256] [--scrapes 40] [--max-records N]

build/bin/exporter_fake_ranks publishes NRANKS segments of NCOMMS communicators each, with full
rings (1024 records, the newest pending); `ncclwatch exporter --job` serves them; this runner
scrapes /metrics SCRAPES times, 300 ms apart (beyond the exporter's 200 ms reuse window, so
every scrape is a fresh read of every segment), and prints latency (median, p99, max), the
exporter's CPU per scrape (utime + stime from /proc), its resident memory, the response size
and the series count. Not a test: it prints figures. BUILD_DIR picks the build (default build/).
"""

import argparse
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--comms", type=int, default=256)
    ap.add_argument("--scrapes", type=int, default=40)
    ap.add_argument("--max-records", type=int, default=None)
    args = ap.parse_args()
    job = f"bench-exporter-{os.getpid()}"
    ranks = subprocess.Popen([os.path.join(BUILD, "bin", "exporter_fake_ranks"), job, str(args.ranks),
                              str(args.comms)], stdout=subprocess.PIPE, text=True)
    exporter = None
    try:
        if ranks.stdout.readline().strip() != "ready":
            sys.exit("exporter_fake_ranks failed")
        port = free_port()
        cmd = [os.path.join(BUILD, "bin", "ncclwatch"), "exporter", "--listen", f"127.0.0.1:{port}", "--job", job]
        if args.max_records:
            cmd += ["--max-records", str(args.max_records)]
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
        for _ in range(args.scrapes):
            start = time.monotonic()
            body = urllib.request.urlopen(url, timeout=30).read()
            latencies.append(time.monotonic() - start)
            size = len(body)
            series = sum(1 for line in body.decode().splitlines() if line and not line.startswith("#"))
            time.sleep(0.3)
        cpu = (cpu_seconds(exporter.pid) - cpu_before) / args.scrapes
        ms = [x * 1000 for x in latencies]
        print(f"machine: {machine.describe()}")
        print(f"{args.ranks} ranks x {args.comms} communicators, {args.scrapes} scrapes, "
              f"--max-records {args.max_records or 'default'}")
        print("| figure | value |")
        print("|---|---|")
        print(f"| scrape latency, median | {stats.median(ms):.1f} ms |")
        print(f"| scrape latency, p99 | {stats.percentile(ms, 99):.1f} ms |")
        print(f"| scrape latency, max | {max(ms):.1f} ms |")
        print(f"| exporter CPU per scrape | {cpu * 1000:.1f} ms |")
        print(f"| exporter resident memory | {rss_mib(exporter.pid):.1f} MiB |")
        print(f"| response | {size / 1024:.0f} KiB, {series} series |")
    finally:
        if exporter:
            exporter.terminate()
            exporter.wait()
        ranks.terminate()
        ranks.wait()


if __name__ == "__main__":
    main()
