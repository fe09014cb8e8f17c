#!/usr/bin/env python3
"""`ncclwatch exporter` as a server: pytest exporter_test.py::test_scenario[NAME].

  metrics              a 2-rank sim job whose rank 1 straggles: the exporter serves the fixed
                       metric names with their labels and true values (rank 0 one collective
                       ahead and waiting, rank 1 behind), the job's published threshold, the
                       dump and incident counts of --dump-dir, a SIGKILLed rank as vanished;
                       `promtool check metrics` accepts the output.
  metrics_openmetrics  the same job scraped with Prometheus' Accept header: OpenMetrics 1.0
                       (its content type, gzip, `# EOF`), which the prometheus_client OpenMetrics
                       parser (Debian python3-prometheus-client) accepts whole, naming the same
                       series with the same values as the text format promtool accepts;
                       counters as families without _total, units; other Accept headers get text;
                       only /metrics is served.
  idle_connections     1000 TCP connections opened and held idle: a scrape is still answered
                       within 8 s (under Prometheus' default 10 s scrape timeout), and the exporter keeps serving after.
  slow_clients         100 clients dripping a request one byte at a time and 100 that never read
                       their answer: scrapes keep being answered within 3 s each.
  hostile_segments     garbage, truncated, world-readable, foreign-owned and
                       impossible (completed > issued) segments planted in the job's name (root, skipped otherwise): the
                       exporter keeps serving, serves no impossible value, counts the drops;
                       both formats stay valid.
  prometheus_straggler a real Prometheus (Debian `prometheus`) scrapes the exporter every 1 s and
                       evaluates deploy/prometheus/ncclwatch.rules.yml every 1 s: NcclwatchStraggler
                       fires naming this host, global rank 1, the communicator and its seq, within
                       the job's threshold + 5 s of the onset; the straggler, then SIGKILLed,
                       fires NcclwatchRankExited (how=vanished). Every dashboard query runs.
                       Prometheus negotiated OpenMetrics (the exporter's scrape counter by format,
                       and the `seconds` unit in Prometheus' metadata, which only OpenMetrics carries).
  prometheus_healthy   the same over a healthy job: no alert at all, while the rules do see it.
  run_metrics          `ncclwatch run --metrics ADDR:PORT` starts an exporter that serves the job and
                       ends with it; with an exporter already on the port it starts none.
Fails (never skips) when promtool, prometheus or the prometheus_client module is missing. Run by
Debian's /usr/bin/python3 (tests/tools/exporter/CMakeLists.txt), which sees the python3-* test tooling
scripts/setup installs.
"""

import gzip
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest
import urllib.error
import urllib.request

import ncclwatch_test.sim_job as st  # Job, the build paths
from ncclwatch_test import procs

SOURCE = os.environ["NCCLWATCH_SOURCE_DIR"]
RULES = os.path.join(SOURCE, "deploy", "prometheus", "ncclwatch.rules.yml")
PROMTOOL = os.environ.get("PROMTOOL") or shutil.which("promtool")
PROMETHEUS = os.environ.get("PROMETHEUS") or shutil.which("prometheus")
STALL_SEC = st.STALL_SEC  # the jobs' NCCLWATCH_STALL_SEC (2 s)
# 1000 idle connections: each holds one of the 256 workers until the 1 s request timeout, so the
# backlog drains at ~256/s: ~4 s (tools/exporter/exporter_options.h). The bound is Prometheus' default
# scrape timeout, 10 s, less 2 s of slack for the 2 shared cores.
SCRAPE_UNDER_IDLE_SEC = 8.0
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
# What Prometheus 2.42 (Debian 12) sends with every scrape (captured from it).
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
OPENMETRICS_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
TEXT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse(text):
    """[(name, {label: value}, float)] of every sample line."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m is not None, f"sample line parses: {line!r}"
        if m:
            out.append((m[1], dict(LABEL.findall(m[2] or "")), float(m[3])))
    return out


def samples(parsed, name, **labels):
    return [(l, v) for n, l, v in parsed if n == name and all(l.get(k) == str(x) for k, x in labels.items())]


class Exporter:
    def __init__(self, *args):
        # A free port can be taken by a test running beside this one between free_port() and
        # the exporter's bind: then this exporter exits, and a connection would reach the other
        # test's server. So wait for this exporter's own "serving" line, and on a lost race
        # start again on another port.
        for _ in range(5):
            self.port = free_port()
            fd, self.log_path = tempfile.mkstemp(prefix="ncclwatch-exporter-", suffix=".log")
            os.close(fd)
            cmd = [st.CLI, "exporter", "--listen", f"127.0.0.1:{self.port}"] + list(args)
            with open(self.log_path, "ab") as log:  # O_APPEND: this process's reads move no offset of its
                self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.alive() and not self._serving():
                time.sleep(0.05)
            if self._serving() and self.alive():
                return
            if self.alive():
                break
            self.proc.wait()
        pytest.fail(f"exporter serving within 10 s: {self.output()}")

    def output(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def _serving(self):
        return f"serving /metrics on 127.0.0.1:{self.port} " in self.output()

    def scrape(self, timeout=5.0):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=timeout) as r:
            assert r.status == 200, f"/metrics status {r.status}"
            return r.read().decode()

    def scrape_as(self, accept, gzipped=False, timeout=5.0):
        """(content type, body) of a scrape sending `accept` (None: no Accept header), asking
        for gzip when `gzipped` (and checking it was applied)."""
        headers = {"Accept": accept} if accept is not None else {}
        if gzipped:
            headers["Accept-Encoding"] = "gzip"
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/metrics", headers=headers)
        with urllib.request.urlopen(request, timeout=timeout) as r:
            assert r.status == 200, f"/metrics status {r.status}"
            body = r.read()
            assert (r.headers.get("Content-Encoding") == "gzip") == gzipped, \
                f"Content-Encoding {r.headers.get('Content-Encoding')!r} when gzip {'' if gzipped else 'not '}asked for"
            if r.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            return r.headers.get("Content-Type"), body.decode()

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(10)
                assert rc == 0, f"exporter exits 0 on SIGTERM (got {rc})"
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                pytest.fail("exporter stops within 10 s of SIGTERM")
        else:
            pytest.fail(f"exporter still running at the end (exit {self.proc.returncode})")
        print("exporter output:\n" + self.output())  # pytest shows it on a failure
        os.unlink(self.log_path)


def promtool_check_metrics(text):
    assert PROMTOOL is not None, "promtool installed (Debian package prometheus, scripts/setup)"
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text.encode(), capture_output=True)
    assert r.returncode == 0, f"promtool check metrics accepts the output: {r.stdout.decode()}{r.stderr.decode()}"


def openmetrics_parse(text):
    """The families prometheus_client's OpenMetrics parser reads from `text`, or None when it
    refuses it. It reads the whole exposition strictly: `# EOF` last, counters' samples named
    _total, a unit that ends its family's name, no interleaved families, escaped values..."""
    try:
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    except ImportError as e:
        assert False, (f"prometheus_client importable by {sys.executable} "
                     f"(Debian python3-prometheus-client, scripts/setup): {e}")
        return None
    try:
        return list(text_string_to_metric_families(text))
    except ValueError as e:
        pytest.fail(f"the OpenMetrics parser accepts the output: {e}")


def openmetrics_samples(families):
    """[(name, {label: value}, float)] of every sample, as parse() gives for the text format."""
    return [(s.name, dict(s.labels), s.value) for f in families for s in f.samples]


def scrape_openmetrics(exporter):
    """An OpenMetrics scrape as Prometheus makes it (its Accept header, gzip), checked valid:
    its parsed families, or None."""
    ctype, body = exporter.scrape_as(PROMETHEUS_ACCEPT, gzipped=True)
    assert ctype == OPENMETRICS_TYPE, f"Prometheus' Accept header gets OpenMetrics: {ctype!r}"
    assert body.endswith("\n# EOF\n") and body.count("# EOF") == 1, f"one # EOF, last: ...{body[-60:]!r}"
    return openmetrics_parse(body)


def straggler_job(name, extra=()):
    # Rank 1 stalls 60 s in its data loading at step 3: rank 0 issues the next AllReduce and waits.
    return st.Job(name, 2, [st.DDP_LOOP, "--quiet", "--steps", "1000", "--step-ms", "20", "--tp", "1",
                            "--straggler-rank", "1", "--straggler-step", "3", "--straggler-sec", "60", *extra])


def healthy_job(name):
    return st.Job(name, 2, [st.DDP_LOOP, "--quiet", "--steps", "1500", "--step-ms", "20", "--tp", "1"])


def wait_for(what, until, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = until()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"{what} within {timeout} s")


def straggling(parsed):
    """(comm, ahead, behind) when rank 0 is a collective ahead of rank 1 and waits, else None."""
    issued = samples(parsed, "ncclwatch_comm_last_issued_seq")
    by_comm = {}
    for labels, value in issued:
        by_comm.setdefault(labels["comm"], {})[labels["rank"]] = (labels, value)
    for comm, ranks in by_comm.items():
        if "0" in ranks and "1" in ranks and ranks["0"][1] > ranks["1"][1]:
            pending = samples(parsed, "ncclwatch_comm_oldest_pending_seconds", comm=comm, rank=0)
            if pending and pending[0][1] > STALL_SEC:
                return comm, ranks["0"], ranks["1"]
    return None


# --- scenarios ----------------------------------------------------------------------------

def metrics():
    job = straggler_job("exp-metrics")
    exporter = Exporter("--job", job.job_id, "--dump-dir", job.dump_dir)
    try:
        found = wait_for("rank 0 ahead of the straggling rank 1 and waiting longer than the threshold",
                         lambda: straggling(parse(exporter.scrape())), 30)
        text = exporter.scrape()
        parsed = parse(text)
        promtool_check_metrics(text)
        if found:
            comm, (l0, v0), (l1, v1) = found
            print(f"comm {comm}: rank 0 issued #{v0:.0f} and waits, rank 1 issued #{v1:.0f}")
            assert v0 == v1 + 1, f"rank 0 issued one more collective than rank 1 ({v0} vs {v1})"
            assert set(l0) == {"job", "host", "comm", "comm_name", "comm_rank", "device", "rank", "nranks"}, \
                f"comm labels: {sorted(l0)}"
            assert l0["job"] == job.job_id and l0["nranks"] == "2" and l1["comm_rank"] == "1", f"labels {l0} {l1}"
            assert l0["host"] == socket.gethostname(), f"host label {l0['host']}"
            # NCCL's own form, unpadded: the label is the very commId string of the sim's INFO line.
            sim_comms = {c for _, _, _, _, c in st.init_lines(job)}
            assert comm in sim_comms, f"comm {comm} is a commId the sim printed {sim_comms}"
            done0 = samples(parsed, "ncclwatch_comm_last_completed_seq", comm=comm, rank=0)
            assert done0 and done0[0][1] == v0 - 1, f"rank 0 completed all but the pending one: {done0}"
            p1 = samples(parsed, "ncclwatch_comm_oldest_pending_seconds", comm=comm, rank=1)
            assert p1 and p1[0][1] == 0, f"the straggler has nothing pending: {p1}"
        threshold = samples(parsed, "ncclwatch_stall_threshold_seconds")
        assert [(l, v) for l, v in threshold] == [({"job": job.job_id}, STALL_SEC)], \
            f"the job's own NCCLWATCH_STALL_SEC is served: {threshold}"
        up = samples(parsed, "ncclwatch_process_up")
        assert sorted(l["rank"] for l, v in up if v == 1) == ["0", "1"], f"both ranks up: {up}"
        assert samples(parsed, "ncclwatch_exporter_build_info"), "build info served"
        assert samples(parsed, "ncclwatch_exporter_scrape_errors_total") == [({}, 0.0)], "no scrape error"
        for name, labels, _ in parsed:
            for value in labels.values():
                assert "/" not in value and "=" not in value, f"no path or environment in labels: {name} {labels}"
        # The watchdogs dump the straggler incident: counted from --dump-dir.
        counted = wait_for("the dumps counted", lambda: samples(parse(exporter.scrape()), "ncclwatch_dumps_total"), 20)
        if counted:
            time.sleep(1)
            parsed = parse(exporter.scrape())
            dumps = samples(parsed, "ncclwatch_dumps_total")
            assert dumps[0][1] == len(job.dump_files()), f"dumps_total {dumps} == files {len(job.dump_files())}"
            incidents = samples(parsed, "ncclwatch_incidents_total")
            print(f"dumps_total {dumps[0][1]:.0f}, incidents {incidents}")
            assert [(l["kind"], v) for l, v in incidents] == [("straggler", 1.0)], \
                f"one straggler incident on this host: {incidents}"
        # A rank killed without a word reads as vanished.
        pid1 = [l["pid"] for l, v in up if l["rank"] == "1"]
        assert len(pid1) == 1, "rank 1's pid served"
        os.kill(int(pid1[0]), signal.SIGKILL)
        gone = wait_for("the killed rank served as vanished",
                        lambda: samples(parse(exporter.scrape()), "ncclwatch_process_exited", rank=1,
                                        how="vanished"), 10)
        if gone:
            assert samples(parse(exporter.scrape()), "ncclwatch_process_up", rank=1, job=job.job_id)[0][1] == 0, \
                "rank 1 down"
    finally:
        job.stop()
        exporter.stop()
        job.cleanup()


def metrics_openmetrics():
    job = straggler_job("exp-openmetrics")
    exporter = Exporter("--job", job.job_id, "--dump-dir", job.dump_dir)
    try:
        wait_for("rank 0 ahead of the straggling rank 1 and waiting longer than the threshold",
                 lambda: straggling(parse(exporter.scrape())), 30)
        wait_for("the straggler incident counted", lambda: samples(parse(exporter.scrape()), "ncclwatch_incidents_total"), 20)
        time.sleep(1)  # the dumps of the incident all written
        families = scrape_openmetrics(exporter)
        ctype, text = exporter.scrape_as(None)
        assert ctype == TEXT_TYPE, f"no Accept header gets the text format: {ctype!r}"
        promtool_check_metrics(text)
        if families:
            by_name = {f.name: f for f in families}
            incidents = by_name.get("ncclwatch_incidents")
            assert (incidents is not None and incidents.type == "counter" and
                    {s.name for s in incidents.samples} == {"ncclwatch_incidents_total"}), \
                f"a counter is family ncclwatch_incidents, sample ncclwatch_incidents_total: {incidents}"
            pending = by_name.get("ncclwatch_comm_oldest_pending_seconds")
            assert pending is not None and pending.type == "gauge" and pending.unit == "seconds", \
                f"the pending age is a gauge in seconds: {pending}"
            issued = by_name.get("ncclwatch_comm_last_issued_seq")
            assert issued is not None and issued.unit == "" and len(issued.samples) == 2, f"issued: {issued}"
            # The same series in both formats, with the same values but for those that move
            # between two scrapes (ages, the collection's time, the scrape counts).
            om = {(n, tuple(sorted(l.items()))): v for n, l, v in openmetrics_samples(families)}
            tx = {(n, tuple(sorted(l.items()))): v for n, l, v in parse(text)}
            assert set(om) == set(tx), (f"the same series: only in OpenMetrics {sorted(set(om) - set(tx))}, "
                                      f"only in text {sorted(set(tx) - set(om))}")
            moving = ("ncclwatch_comm_oldest_pending_seconds", "ncclwatch_exporter_collect_seconds",
                      "ncclwatch_exporter_scrapes_total")
            differ = [(k, om[k], tx[k]) for k in set(om) & set(tx)
                      if k[0] not in moving and om[k] != tx[k] and not (om[k] != om[k] and tx[k] != tx[k])]
            assert not differ, f"the same values in both formats: {differ}"
            print(f"OpenMetrics: {len(families)} families, {len(om)} samples, the same as the text format's")
        scrapes = {l["format"]: v for l, v in samples(parse(exporter.scrape()), "ncclwatch_exporter_scrapes_total")}
        assert scrapes.get("openmetrics") == 1 and scrapes.get("text", 0) >= 3, \
            f"scrapes counted by format (1 OpenMetrics so far): {scrapes}"
        for accept in ("*/*", "text/plain", "text/plain;version=0.0.4", "application/json",
                       "application/openmetrics-text;version=0.0.1", "application/openmetrics-text;q=0"):
            ctype, body = exporter.scrape_as(accept)
            assert ctype == TEXT_TYPE and "# EOF" not in body, f"Accept {accept!r} gets the text format: {ctype!r}"
        for path in ("/metricsx", "/metrics/x", "/", "/index.html"):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{exporter.port}{path}", timeout=5)
                pytest.fail(f"{path} is not served")
            except urllib.error.HTTPError as e:
                assert e.code == 404, f"{path}: 404 (got {e.code})"
        for accept in ("application/openmetrics-text", "text/plain;q=0.5, application/openmetrics-text;version=1.0.0"):
            ctype, body = exporter.scrape_as(accept)
            assert ctype == OPENMETRICS_TYPE, f"Accept {accept!r} gets OpenMetrics: {ctype!r}"
            openmetrics_parse(body)
    finally:
        job.stop()
        exporter.stop()
        job.cleanup()


def raise_fd_limit(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(n, hard), hard))


def idle_connections():
    raise_fd_limit(4096)
    exporter = Exporter()
    held = []
    try:
        for _ in range(1000):
            s = socket.socket()
            s.settimeout(10)
            s.connect(("127.0.0.1", exporter.port))
            held.append(s)
        start = time.monotonic()
        try:
            text = exporter.scrape(timeout=SCRAPE_UNDER_IDLE_SEC + 5)
            took = time.monotonic() - start
            print(f"scrape behind 1000 idle connections: {took:.2f} s")
            assert took < SCRAPE_UNDER_IDLE_SEC, f"answered in {took:.2f} s < {SCRAPE_UNDER_IDLE_SEC} s"
            assert "ncclwatch_exporter_build_info" in text, "a full answer"
        except OSError as e:
            pytest.fail(f"scrape behind 1000 idle connections: {e}")
        # Still holding them: the next scrapes are prompt.
        for _ in range(3):
            start = time.monotonic()
            exporter.scrape(timeout=5)
            took = time.monotonic() - start
            assert took < 1.0, f"a later scrape is prompt: {took:.2f} s"
        assert exporter.alive(), "exporter alive"
    finally:
        for s in held:
            s.close()
        exporter.stop()


def slow_clients():
    raise_fd_limit(4096)
    exporter = Exporter()
    stop = threading.Event()
    request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"

    def drip():
        while not stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", exporter.port), timeout=5) as s:
                    for byte in request:
                        if stop.is_set():
                            return
                        s.sendall(bytes([byte]))
                        time.sleep(0.3)
            except OSError:
                time.sleep(0.1)

    def never_read():
        while not stop.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", exporter.port), timeout=5)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
                s.sendall(request)
                stop.wait(5)
                s.close()
            except OSError:
                time.sleep(0.1)

    threads = [threading.Thread(target=drip) for _ in range(100)] + \
              [threading.Thread(target=never_read) for _ in range(100)]
    try:
        for t in threads:
            t.start()
        time.sleep(2)
        worst = 0.0
        for _ in range(10):
            start = time.monotonic()
            try:
                exporter.scrape(timeout=10)
            except OSError as e:
                pytest.fail(f"scrape among slow clients: {e}")
            worst = max(worst, time.monotonic() - start)
            time.sleep(0.3)
        print(f"slowest of 10 scrapes among 200 slow clients: {worst:.2f} s")
        assert worst < 3.0, f"every scrape answered within 3 s (slowest {worst:.2f} s)"
        assert exporter.alive(), "exporter alive"
    finally:
        stop.set()
        for t in threads:
            t.join()
        exporter.stop()


def plant(job, source, pid, ticks, data=None, mode=0o600, owner=None, truncate=None, mutate=None):
    """A copy of `source` (a segment path) named and stamped as process (pid, ticks)."""
    raw = bytearray(open(source, "rb").read() if data is None else data)
    if data is None:
        raw[64:68] = pid.to_bytes(4, "little")            # SegmentHeader::pid
        raw[80:88] = ticks.to_bytes(8, "little")          # SegmentHeader::process_start_ticks
    if mutate:
        mutate(raw)
    if truncate:
        raw = raw[:truncate]
    path = f"/dev/shm/ncclwatch.{os.getuid()}.{job.job_id}.{pid}.{ticks}"
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode)
    left = memoryview(bytes(raw))
    while left:  # one write(2) may write less
        left = left[os.write(fd, left):]
    os.fchmod(fd, mode)
    if owner is not None:
        os.fchown(fd, owner, owner)
    os.close(fd)
    return path


# Maps the segment path read from stdin read-only, says so, and holds it.
MAP_AND_SLEEP = ("import mmap, sys, time\n"
                 "f = open(sys.stdin.readline().strip(), 'rb')\n"
                 "m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n"
                 "print('mapped', flush=True)\n"
                 "time.sleep(120)\n")


def complete_beyond_issued(raw):
    """Comm slot 0: last_completed_seq = last_enqueued_seq + 1000 (impossible)."""
    comm_slots = int.from_bytes(raw[56:64], "little")      # SegmentHeader::comm_slots_offset
    # Offsets pinned by static_asserts in core/shm/layout.cc.
    enq = int.from_bytes(raw[comm_slots + 144:comm_slots + 152], "little")  # CommSlotHeader::last_enqueued_seq
    raw[comm_slots + 152:comm_slots + 160] = (enq + 1000).to_bytes(8, "little")  # last_completed_seq


def hostile_segments():
    if os.geteuid() != 0:
        pytest.skip("a segment owned by another uid (uid 65534) needs root")
    job = healthy_job("exp-hostile")
    exporter = Exporter("--job", job.job_id)
    planted = []
    helpers = []
    try:
        wait_for("both ranks served", lambda: len(samples(parse(exporter.scrape()), "ncclwatch_comm_last_issued_seq")) >= 2,
                 20)
        segments = sorted(p for p in os.listdir("/dev/shm") if p.startswith(f"ncclwatch.{os.getuid()}.{job.job_id}."))
        assert len(segments) == 2, f"two segments {segments}"
        source = "/dev/shm/" + segments[0]
        # Live processes to stamp the forgeries with (a dead owner's segment would read as stale).
        # A segment is trusted only while its process maps it, so helper 3 maps its forgery
        # as a writer would; helper 5's is an unmapped copy of a good segment.
        for i in range(6):
            if i == 3:
                helpers.append(subprocess.Popen(
                    [sys.executable, "-c", MAP_AND_SLEEP], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
            else:
                helpers.append(subprocess.Popen(["sleep", "120"]))
        time.sleep(0.2)
        ticks = [procs.start_ticks(h.pid) for h in helpers]
        planted.append(plant(job, source, helpers[0].pid, ticks[0], data=os.urandom(1 << 16)))
        planted.append(plant(job, source, helpers[1].pid, ticks[1], truncate=8192))
        planted.append(plant(job, source, helpers[2].pid, ticks[2], mode=0o644))
        planted.append(plant(job, source, helpers[3].pid, ticks[3], mutate=complete_beyond_issued))
        planted.append(plant(job, source, helpers[4].pid, ticks[4], owner=65534))
        planted.append(plant(job, source, helpers[5].pid, ticks[5]))
        helpers[3].stdin.write(planted[3] + "\n")
        helpers[3].stdin.flush()
        assert helpers[3].stdout.readline().strip() == "mapped", "helper 3 maps its forgery"
        time.sleep(0.5)
        for _ in range(5):
            text = exporter.scrape()
            parsed = parse(text)
            promtool_check_metrics(text)
            assert scrape_openmetrics(exporter) is not None, "the OpenMetrics exposition stays valid"
            for (labels, issued) in samples(parsed, "ncclwatch_comm_last_issued_seq"):
                done = samples(parsed, "ncclwatch_comm_last_completed_seq", **labels)
                assert done and done[0][1] <= issued, f"never completed > issued: {labels} {issued} {done}"
            pids = {l["pid"] for l, _ in samples(parsed, "ncclwatch_process_up")}
            for bad in (0, 1, 2, 4, 5):
                assert str(helpers[bad].pid) not in pids, f"forgery {bad} not served as a process"
            dropped = samples(parsed, "ncclwatch_exporter_dropped_series_total")
            assert dropped and dropped[0][1] >= 1, f"the impossible series counted as dropped: {dropped}"
            # Dropped for its impossible value, not as a duplicate: the genuine rank it copies stays served.
            served = samples(parsed, "ncclwatch_comm_last_issued_seq")
            assert len(served) == 2, f"both genuine ranks still served: {served}"
            time.sleep(0.3)
        assert exporter.alive(), "exporter alive"
    finally:
        for p in planted:
            try:
                os.unlink(p)
            except OSError:
                pass
        for h in helpers:
            h.kill()
            h.wait()
        job.stop()
        exporter.stop()
        job.cleanup()


class Prometheus:
    def __init__(self, *exporter_ports):
        assert PROMETHEUS is not None, "prometheus installed (Debian package prometheus, scripts/setup)"
        self.tmp = tempfile.mkdtemp(prefix="ncclwatch-prom-")
        self.port = free_port()
        config = os.path.join(self.tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: ["{RULES}"]
scrape_configs:
  - job_name: ncclwatch
    honor_labels: true
    static_configs:
      - targets: [{", ".join(f'"127.0.0.1:{p}"' for p in exporter_ports)}]
""")
        self.log = open(os.path.join(self.tmp, "prometheus.log"), "w")
        self.proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={self.tmp}/data",
             f"--web.listen-address=127.0.0.1:{self.port}"], stdout=self.log, stderr=subprocess.STDOUT)
        wait_for("prometheus ready", self.ready, 30)
        # Its discovery hands the scrape loop its first targets up to 5 s after start: measure
        # from a scraping Prometheus, as in production.
        wait_for("prometheus scrapes the exporter", lambda: self.proc.poll() is None and
                 len(self.query("up == 1")) == len(exporter_ports), 30)

    def get(self, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
            return json.loads(r.read().decode())

    def ready(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                return r.status == 200
        except OSError:
            return self.proc.poll() is not None  # ended: stop waiting (checked by the caller)

    def alerts(self, job_id):
        """The alerts about `job_id`: the exporter serves every job of this user on the host, and
        other tests run beside this one (ctest -j2)."""
        return [a for a in self.get("/api/v1/alerts")["data"]["alerts"] if a["labels"].get("job") == job_id]

    def query(self, expr):
        return self.get("/api/v1/query?query=" + urllib.request.quote(expr))["data"]["result"]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        print(open(os.path.join(self.tmp, "prometheus.log")).read()[-3000:])  # pytest shows it on a failure
        shutil.rmtree(self.tmp, ignore_errors=True)


def stop_all(job, prom, exporter):
    if job:
        job.stop()
    prom.stop()
    exporter.stop()
    if job:
        job.cleanup()


def prometheus_straggler():
    exporter = Exporter()
    prom = Prometheus(exporter.port)
    job = None
    try:
        assert prom.proc.poll() is None, "prometheus runs"
        job = straggler_job("exp-prom-straggler")
        onset = None
        fired = None
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline and fired is None:
            now = time.monotonic()
            if onset is None:
                found = straggling_onset(parse(exporter.scrape()), job.job_id, now)
                onset = found
            for a in prom.alerts(job.job_id):
                if a["labels"].get("alertname") == "NcclwatchStraggler" and a["state"] == "firing":
                    fired = (now, a)
            time.sleep(0.2)
        assert fired is not None, "NcclwatchStraggler fires"
        assert onset is not None, "onset seen"
        at, alert = fired
        labels = alert["labels"]
        latency = at - onset
        print(f"NcclwatchStraggler fired {latency:.2f} s after the onset (threshold {STALL_SEC} s); "
              f"active at {alert.get('activeAt')}, onset at unix {time.time() - (time.monotonic() - onset):.3f}")
        assert latency <= STALL_SEC + 5, f"within threshold + 5 s: {latency:.2f} s"
        assert labels.get("job") == job.job_id, f"job label {labels}"
        assert labels.get("rank") == "1" and labels.get("host") == socket.gethostname(), \
            f"names global rank 1 on this host: {labels}"
        issued = samples(parse(exporter.scrape()), "ncclwatch_comm_last_issued_seq", rank=1, comm=labels.get("comm"), job=job.job_id)
        assert issued and labels.get("seq") == str(int(issued[0][1])), f"seq label {labels} vs {issued}"
        check_dashboard(prom, job.job_id)
        check_negotiated_openmetrics(prom, 1)
        others = [a for a in prom.alerts(job.job_id) if a["labels"].get("alertname") == "NcclwatchStraggler"
                  and a["labels"].get("rank") != "1"]
        assert not others, f"no other rank blamed: {others}"
        # The straggler is then killed: NcclwatchRankExited names it, as vanished.
        pid1 = [l["pid"] for l, _ in samples(parse(exporter.scrape()), "ncclwatch_process_up", rank=1, job=job.job_id)]
        assert len(pid1) == 1, "rank 1's pid served"
        os.kill(int(pid1[0]), signal.SIGKILL)
        exited = wait_for("NcclwatchRankExited fires", lambda: [
            a["labels"] for a in prom.alerts(job.job_id)
            if a["labels"].get("alertname") == "NcclwatchRankExited" and a["state"] == "firing"], 10)
        assert exited and [(l.get("rank"), l.get("how"), l.get("pid")) for l in exited] == [("1", "vanished", pid1[0])], \
            f"NcclwatchRankExited names rank 1, vanished: {exited}"
    finally:
        stop_all(job, prom, exporter)


def check_dashboard(prom, job_id):
    """Every query of deploy/grafana/ncclwatch.json runs on this Prometheus; the per-rank seq,
    lag and pending-age panels show the job."""
    dashboard = json.load(open(os.path.join(SOURCE, "deploy", "grafana", "ncclwatch.json")))
    for panel in dashboard["panels"]:
        for t in panel["targets"]:
            expr = (t["expr"].replace("$job", job_id).replace("$comm", ".*")
                    .replace("$__rate_interval", "5s").replace("$__range", "1m"))
            try:
                result = prom.query(expr)
            except OSError as e:
                pytest.fail(f"dashboard panel {panel['title']!r} query {expr!r}: {e}")
            if panel["title"].startswith(("Last issued", "Collectives behind", "Oldest pending", "Alerts")):
                assert result, f"dashboard panel {panel['title']!r} shows the job: {expr}"


def check_negotiated_openmetrics(prom, exporters):
    """Prometheus scraped each exporter in OpenMetrics: the exporters count its scrapes under
    format="openmetrics" (only Prometheus sends that Accept header in these tests), and the
    pending age's unit, which only OpenMetrics carries (# UNIT), is in Prometheus' metadata."""
    def every_exporter_counted():
        result = prom.query('ncclwatch_exporter_scrapes_total{format="openmetrics"} > 0')
        return result if len(result) == exporters else None
    counted = wait_for(f"Prometheus negotiated OpenMetrics with all {exporters} exporter(s)", every_exporter_counted, 5)
    meta = prom.get("/api/v1/metadata?metric=ncclwatch_comm_oldest_pending_seconds")["data"]
    units = [m.get("unit") for m in meta.get("ncclwatch_comm_oldest_pending_seconds", [])]
    assert units and set(units) == {"seconds"}, f"Prometheus read the # UNIT of OpenMetrics: {meta}"
    print("Prometheus scraped in OpenMetrics: " +
          ", ".join(f"{r['metric'].get('instance')} {float(r['value'][1]):.0f} scrapes" for r in counted or []))


def straggling_onset(parsed, job_id, now):
    """CLOCK_MONOTONIC (this process's time.monotonic) at which rank 0 started waiting on the
    collective rank 1 has not issued, from the pending age the exporter serves; None before."""
    issued = {l["rank"]: (l["comm"], v) for l, v in samples(parsed, "ncclwatch_comm_last_issued_seq", job=job_id)}
    if "0" in issued and "1" in issued and issued["0"][1] > issued["1"][1]:
        pending = samples(parsed, "ncclwatch_comm_oldest_pending_seconds", job=job_id, rank=0, comm=issued["0"][0])
        if pending and pending[0][1] > 0:
            return now - pending[0][1]
    return None


def prometheus_healthy():
    exporter = Exporter()
    prom = Prometheus(exporter.port)
    job = None
    try:
        job = healthy_job("exp-prom-healthy")
        seen = wait_for("the rules see the job", lambda: prom.query(
            f'ncclwatch:comm_last_issued_seq:max{{job="{job.job_id}"}} > 10'), 20)
        if seen:
            assert prom.query(f'ncclwatch:stall_threshold_seconds:max{{job="{job.job_id}"}} == {STALL_SEC}'), \
                "the rules see the job's threshold"
        end = time.monotonic() + STALL_SEC + 8
        while time.monotonic() < end:
            alerts = prom.alerts(job.job_id)
            assert not alerts, f"no alert over a healthy job: {alerts}"
            if alerts:
                break
            time.sleep(0.5)
        assert job.proc.poll() is None and prom.query(f'ncclwatch:comm_last_issued_seq:max{{job="{job.job_id}"}}'), \
            "the job ran, and was scraped, for the whole window"
    finally:
        stop_all(job, prom, exporter)


def run_metrics():
    port = free_port()
    job_id = f"exp-run-metrics-{os.getpid()}"
    tmp = tempfile.mkdtemp(prefix="ncclwatch-exp-run-")
    log = open(os.path.join(tmp, "run.log"), "w+")
    cmd = [st.CLI, "run", "--metrics", f"127.0.0.1:{port}", "--stall", "2", "--job-id", job_id,
           "--dump-dir", os.path.join(tmp, "dumps"), "--",
           sys.executable, st.LAUNCH, "-n", "2", "--timeout", "60", "--",
           st.DDP_LOOP, "--quiet", "--steps", "250", "--step-ms", "20", "--tp", "1"]
    run = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        def served():
            try:
                text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
            except OSError:
                return None
            return len(samples(parse(text), "ncclwatch_comm_last_issued_seq", job=job_id)) == 2
        wait_for("the run's exporter serves both ranks of the job", served, 30)
        assert run.wait(60) == 0, "the job succeeds"

        def closed():
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return False
            except OSError:
                return True
        wait_for("the exporter ends with the job", closed, 5)
        # An exporter already on the port: run starts none and says so.
        exporter = Exporter()
        try:
            second = subprocess.run([st.CLI, "run", "--metrics", f"127.0.0.1:{exporter.port}", "--", "true"],
                                    capture_output=True, text=True, timeout=30)
            assert second.returncode == 0, f"run succeeds: {second.stderr}"
            assert "already answers" in second.stderr, f"run says an exporter answers: {second.stderr!r}"
            assert exporter.alive(), "the first exporter keeps serving"
        finally:
            exporter.stop()
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        log.seek(0)
        print(log.read()[-3000:])  # pytest shows it on a failure
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


class StragglingCluster:
    """2 simulated hosts x 2 ranks (scripts/sim-cluster: own /dev/shm, pids and clocks each), an
    exporter on each host (ports[0] on host0, ports[1] on host1): global rank 3, on host1, stalls
    in data loading at `straggler_step` (20 ms steps) for `stall_sec`. Also used by
    scripts/render-dashboard."""

    def __init__(self, straggler_step=40, stall_sec=120, timeout=90):
        self.ports = [free_port(), free_port()]
        self.job_id = f"exp-cluster-{os.getpid()}"
        self.tmp = tempfile.mkdtemp(prefix="ncclwatch-exp-cluster-")
        # A dump directory per host, as without a shared file system; each exporter counts its own.
        for host in (0, 1):
            os.makedirs(os.path.join(self.tmp, "dumps", f"host{host}"))
        dumps = f"{self.tmp}/dumps/host$NODE_RANK"
        watch = (f"{st.CLI} run --stall {STALL_SEC} --poll-ms {st.POLL_MS} --job-id {self.job_id} "
                 f"--dump-dir {dumps} --")
        ranks = ('for l in 0 1; do RANK=$((NODE_RANK * 2 + l)) LOCAL_RANK=$l WORLD_SIZE=$((NNODES * 2)) '
                 f'{watch} {st.DDP_LOOP} --quiet --tp 1 --steps 100000 --step-ms 20 --straggler-rank 3 '
                 f'--straggler-step {straggler_step} --straggler-sec {stall_sec} & done; wait')
        script = (f'set -- {" ".join(map(str, self.ports))}; shift $NODE_RANK; '
                  f'{st.CLI} exporter --listen 127.0.0.1:$1 --job {self.job_id} --dump-dir {dumps} & {ranks}')
        self.log = open(os.path.join(self.tmp, "cluster.log"), "w")
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        self.proc = subprocess.Popen([os.path.join(SOURCE, "scripts", "sim-cluster"), "--hosts", "2",
                                      "--timeout", str(timeout), "--", "sh", "-c", script],
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def running(self):
        return self.proc.poll() is None

    def host_metrics(self, host):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ports[host]}/metrics", timeout=2) as r:
                return parse(r.read().decode())
        except OSError:
            return []

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        self.proc.wait()
        self.log.close()
        print(open(os.path.join(self.tmp, "cluster.log"), errors="replace").read()[-3000:])  # shown on a failure
        shutil.rmtree(self.tmp, ignore_errors=True)


def wait_for_cluster_straggler(cluster, prom, timeout):
    """(CLOCK_MONOTONIC of the onset as host0 serves it, (when, alert) of NcclwatchStraggler
    firing); either None if not seen within `timeout` s."""
    onset, fired = None, None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and fired is None and cluster.running():
        now = time.monotonic()
        pending = samples(cluster.host_metrics(0), "ncclwatch_comm_oldest_pending_seconds", job=cluster.job_id, rank=0)
        if onset is None and pending and max(v for _, v in pending) > 0:
            onset = now - max(v for _, v in pending)
        for a in prom.alerts(cluster.job_id):
            if a["labels"].get("alertname") == "NcclwatchStraggler" and a["state"] == "firing":
                fired = (now, a)
        time.sleep(0.2)
    return onset, fired


def prometheus_cluster_straggler():
    """The StragglingCluster, one Prometheus scraping both hosts' exporters: NcclwatchStraggler
    fires naming host1 and rank 3 within the threshold + 5 s."""
    cluster = StragglingCluster()
    job_id = cluster.job_id
    prom = None
    try:
        prom = Prometheus(*cluster.ports)
        assert prom.proc.poll() is None, "prometheus runs"
        onset, fired = wait_for_cluster_straggler(cluster, prom, 60)
        assert fired is not None, "NcclwatchStraggler fires"
        assert onset is not None, "onset seen on host0"
        at, alert = fired
        labels = alert["labels"]
        print(f"NcclwatchStraggler across 2 hosts fired {at - onset:.2f} s after the onset: {labels}")
        assert at - onset <= STALL_SEC + 5, f"within threshold + 5 s: {at - onset:.2f} s"
        assert labels.get("host") == "host1" and labels.get("rank") == "3", f"names host1 and rank 3: {labels}"
        others = [a["labels"] for a in prom.alerts(job_id) if a["labels"].get("alertname") == "NcclwatchStraggler"
                  and (a["labels"].get("rank"), a["labels"].get("host")) != ("3", "host1")]
        assert not others, f"no other rank blamed: {others}"
        check_negotiated_openmetrics(prom, 2)
    finally:
        cluster.stop()
        if prom:
            prom.stop()


SCENARIOS = {f.__name__: f for f in (metrics, metrics_openmetrics, idle_connections, slow_clients, hostile_segments,
                                     prometheus_straggler, prometheus_healthy, run_metrics,
                                     prometheus_cluster_straggler)}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
