#!/usr/bin/env python3
"""Real PyTorch DDP across 2 simulated hosts: pytest torch_cluster_test.py::test_scenario[NAME].

scripts/sim-cluster --hosts 2 runs, on each host, `ncclwatch run -- torchrun --nnodes 2 --node-rank K
--nproc-per-node 2 examples/torch/train.py --mode ddp` (the sim in place, the watcher's preload in
every rank).
  healthy_ddp: one dump directory shared by both hosts. Pass: every one of the 4 ranks finishes,
      each had libncclwatch.so mapped (seen from outside, through /proc), and no dump was written.
  partition: NCCLSIM_FAULT partition between host0 and host1, each host's own dump directory
      (--local). Pass: every rank dumps collective_hang, analyze merges both hosts' directories into
      collective_hang on all 4 ranks with the transport hint.
Started by tests/torch/run.sh, i.e. with the pinned torch venv's python.
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from ncclwatch_test import procs
from ncclwatch_test.paths import BUILD, CLI, SIM_CLUSTER, TRAIN

PYTHON = sys.executable
HOSTS, PER_HOST, STEPS = 2, 2, 8


def watched_ranks():
    """(NODE_RANK, RANK) of every process that has the watcher mapped and a torchrun RANK."""
    return {(int(env[b"NODE_RANK"]), int(env[b"RANK"]))
            for pid, env in procs.with_environ(NCCLWATCH_TEST_TAG=TAG).items()
            if b"RANK" in env and b"NODE_RANK" in env and procs.maps_library(pid, "libncclwatch.so")}


TAG = f"torch-cluster-{os.getpid()}"


class ClusterJob:
    """torchrun under `ncclwatch run` on each of HOSTS simulated hosts; dumps go to tmp/dumps,
    either shared by the hosts or each host's own (--local: tmp/dumps/host<K> seen from here)."""

    def __init__(self, tmp, steps, dump_mode, env=None, train_args=""):
        self.dumps = os.path.join(tmp, "dumps")
        job = ("exec {cli} run --stall 3 --poll-ms 200 --dump-dir {dumps} --job-id {tag} -- "
               "{py} -m torch.distributed.run --nnodes $NNODES --node-rank $NODE_RANK "
               "--nproc-per-node {n} --master-addr $MASTER_ADDR --master-port $MASTER_PORT "
               "{train} --mode ddp --steps {steps} {args}").format(
                   cli=CLI, dumps=self.dumps, tag=TAG, py=PYTHON, n=PER_HOST, train=TRAIN, steps=steps,
                   args=train_args)
        full_env = dict(os.environ, BUILD_DIR=BUILD, NCCL_DEBUG="WARN", OMP_NUM_THREADS="1",
                        PYTHONUNBUFFERED="1", NCCLWATCH_TEST_TAG=TAG, **(env or {}))
        full_env.pop("LD_PRELOAD", None)
        full_env.pop("NCCLSIM_FABRIC_DIR", None)
        self.log_path = os.path.join(tmp, "job.log")
        self.log = open(self.log_path, "w")
        self.start = time.monotonic()
        self.proc = subprocess.Popen([SIM_CLUSTER, "--hosts", str(HOSTS), f"--{dump_mode}", self.dumps,
                                      "--timeout", "200", "--", "sh", "-c", job],
                                     stdout=self.log, stderr=subprocess.STDOUT, env=full_env, cwd=tmp)
        self.watched = set()

    def poll(self, until=lambda: False, timeout=200):
        """Records which ranks have the watcher mapped until the job ends, until() or timeout."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and not until() and time.monotonic() < deadline:
            self.watched |= watched_ranks()
            time.sleep(0.5)
        return time.monotonic() - self.start

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # sim-cluster forwards it, then kills every host
        self.proc.wait()
        self.log.close()

    def output(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def written(self, suffix=""):
        return sorted(os.path.relpath(os.path.join(d, n), self.dumps)
                      for d, _, names in os.walk(self.dumps) for n in names if n.endswith(suffix))


def healthy_ddp():
    with tempfile.TemporaryDirectory(prefix="ncclwatch-torch-cluster-") as tmp:
        job = ClusterJob(tmp, STEPS, "shared")
        took = job.poll()
        job.stop()
        out = job.output()
        print(out[-4000:])  # pytest shows it on a failure
        done = sorted(l.strip() for l in out.splitlines() if " done: " in l)
        expected = [f"rank {r} done: {STEPS} steps" for r in range(HOSTS * PER_HOST)]
        assert job.proc.returncode == 0, f"sim-cluster exit {job.proc.returncode}"
        assert done == expected, f"ranks that finished: {done}"
        want = {(r // PER_HOST, r) for r in range(HOSTS * PER_HOST)}
        assert want <= job.watched, \
            f"ranks seen with libncclwatch.so mapped: {sorted(job.watched)}, expected {sorted(want)}"
        assert not job.written(), f"a healthy job wrote to the dump directory: {job.written()}"
    print(f"torch DDP, {HOSTS} hosts x {PER_HOST} ranks, {STEPS} steps: {took:.1f} s")


def partition():
    """A network partition between host0 and host1 from the world communicator's 12th collective
    (DDP issues no Send/Recv on it, so the sim's #12 is ncclwatch's #12), dumps on each host's
    local disk: every rank of both hosts dumps collective_hang at #12, and analyze of the per-host
    directories gives collective_hang on all 4 ranks with the transport hint."""
    seq, nranks = 12, HOSTS * PER_HOST
    with tempfile.TemporaryDirectory(prefix="ncclwatch-torch-cluster-") as tmp:
        # Torch's own watchdog would not fire for 10 minutes; it is kept from tearing down anyway.
        job = ClusterJob(tmp, 1000, "local", env={
            "NCCLSIM_FAULT": f"partition:hosts=host0+host1,seq={seq},comm=0",
            "TORCH_NCCL_ASYNC_ERROR_HANDLING": "0"})
        took = job.poll(until=lambda: len(job.written(".json")) >= nranks, timeout=150)
        time.sleep(1)  # a late extra dump would show below
        job.stop()
        print(job.output()[-4000:])  # pytest shows it on a failure
        dumps = job.written(".json")
        ranks = sorted(re.match(r"(host\d)/rank(\d+)-\1-\d+-collective_hang-0x[0-9a-f]+-(\d+)\.json$", d).group(1, 2, 3)
                       for d in dumps if re.match(r"host\d/rank\d+-host\d-\d+-collective_hang-", d))
        want = [(f"host{r // PER_HOST}", str(r), str(seq)) for r in range(nranks)]
        assert ranks == want, f"collective_hang dumps (host, rank, seq): {ranks}, expected {want}; all: {dumps}"
        a = analyze_json([job.dumps])
        v = a["verdict"]
        assert (v["kind"], v["seq"], v["culprit_ranks"]) == ("collective_hang", seq, list(range(nranks))), \
            f"analyze verdict {v}"
        assert sorted(a["hosts"]) == ["host0", "host1"] and a["dumps_read"] == nranks, \
            f"analyze read {a['dumps_read']} dumps from hosts {a['hosts']}"
        assert "p2p_transport" in [h["id"] for h in a["hints"]], f"analyze hints {[h['id'] for h in a['hints']]}"
    print(f"torch DDP partition, {HOSTS} hosts x {PER_HOST} ranks: every rank dumped {took:.1f} s after start")


def analyze_json(dirs):
    p = subprocess.run([CLI, "analyze", "--json"] + dirs, capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        pytest.fail(f"analyze exit {p.returncode}, unreadable output ({e}): {p.stderr}")


def warn_lines(out, host):
    return [l for l in out.splitlines() if l.startswith(host + ":") and "NCCLWATCH WARN" in l]


def straggler(dump_mode):
    """Global rank 3 (host1's second rank) stalls 120 s in its Python data loader at step 3.
    Pass: every rank of both hosts dumps within the threshold (3 s) + 3 s of the onset; analyze
    (of the shared directory, or of both hosts' local directories) names rank 3 on host1 with
    its Python frames; live, host1's log names rank 3 and host0's log names the remote ranks it
    waits for and never blames its own."""
    nranks = HOSTS * PER_HOST
    with tempfile.TemporaryDirectory(prefix="ncclwatch-torch-cluster-") as tmp:
        job = ClusterJob(tmp, 1000, dump_mode, env={"TORCH_NCCL_ASYNC_ERROR_HANDLING": "0"},
                         train_args="--straggler-rank 3 --straggler-step 3 --straggler-sec 120")
        job.poll(until=lambda: len(job.written(".json")) >= nranks, timeout=150)
        time.sleep(1)  # a late extra dump would show below
        # The incident's dumps, before the job is stopped: stopping it is a teardown, in which a
        # rank with an incident open writes a last-gasp dump too.
        written = job.written(".json")
        job.stop()
        out = job.output()
        print(out[-4000:])  # pytest shows it on a failure
        onset = re.search(r"straggler onset: rank 3 step 3 wall ([0-9.]+)", out)
        dumps = [os.path.join(job.dumps, d) for d in written]
        ranks = sorted(json.load(open(d))["process"]["global_rank"] for d in dumps)
        assert ranks == list(range(nranks)), f"dumps of ranks {ranks}, expected one per rank: {written}"
        assert onset, "no straggler onset line"
        late = max((os.stat(d).st_mtime for d in dumps), default=0) - float(onset.group(1))
        print(f"onset -> last host's dump on disk: {late:.2f} s")
        assert late <= 3 + 3, f"the last dump came {late:.2f} s after the onset, over threshold + 3 s"
        dirs = [job.dumps] if dump_mode == "shared" else [os.path.join(job.dumps, f"host{k}") for k in range(HOSTS)]
        a = analyze_json(dirs)
        v = a["verdict"]
        assert (v["kind"], v["culprit_ranks"]) == ("straggler", [3]), f"analyze verdict {v}"
        row = [r for r in a["ranks"] if r.get("rank") == 3]
        assert row and row[0].get("host") == "host1", f"analyze's row of rank 3: {row}"
        assert "RestoreDataLoaderState" in json.dumps(a["stacks"]), \
            "analyze shows rank 3's Python frames (RestoreDataLoaderState)"
        assert sorted(a["hosts"]) == ["host0", "host1"], f"analyze read hosts {a['hosts']}"
        host1, host0 = warn_lines(out, "host1"), warn_lines(out, "host0")
        assert any("straggler" in l and "culprit ranks [3]" in l for l in host1), \
            f"host1's log names rank 3: {host1[:2]}"
        assert any("waiting on comm ranks [2-3] on other hosts" in l for l in host0), \
            f"host0's log names the remote ranks it waits for: {host0[:2]}"
        blamed = [l for l in host0 if re.search(r"culprit ranks \[[^\]]*\b[01]\b", l)]
        assert not blamed, f"host0 blamed one of its own ranks: {blamed[:2]}"


def host_processes(node_rank):
    """Pids of this test's processes on simulated host `node_rank` (torchrun and its ranks)."""
    return list(procs.with_environ(NCCLWATCH_TEST_TAG=TAG, NODE_RANK=node_rank))


def killed_host():
    """host1 dies (every process SIGKILLed, as a node failure) while the job trains. Pass: host0's
    ranks dump; live, host0 names ranks 2-3 on other hosts and blames none of its own; analyze of
    the survivors' dumps names ranks 2 and 3, which left no dump."""
    with tempfile.TemporaryDirectory(prefix="ncclwatch-torch-cluster-") as tmp:
        job = ClusterJob(tmp, 100000, "shared", env={"TORCH_NCCL_ASYNC_ERROR_HANDLING": "0"},
                         train_args="--print-every 5")
        job.poll(until=lambda: "rank 3 step 10" in job.output(), timeout=150)  # every rank trains
        victims = host_processes(1)
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        job.poll(until=lambda: len(job.written(".json")) >= PER_HOST, timeout=60)
        time.sleep(1)
        written = job.written(".json")  # before the stop, a teardown with its own last gasps
        job.stop()
        out = job.output()
        print(out[-4000:])  # pytest shows it on a failure
        assert victims, "host1's processes were not found"
        ranks = sorted(json.load(open(os.path.join(job.dumps, d)))["process"]["global_rank"] for d in written)
        assert ranks[:PER_HOST] == [0, 1] and all(r in (0, 1) for r in ranks), \
            f"only host0's ranks dumped, each: {ranks}"
        host0 = warn_lines(out, "host0")
        assert any("waiting on comm ranks [2-3] on other hosts" in l for l in host0), \
            f"host0's log names ranks 2-3 on other hosts: {host0[:2]}"
        assert not [l for l in host0 if re.search(r"culprit ranks \[[^\]]*\b[01]\b", l)], \
            f"host0 blamed one of its own ranks: {host0[:2]}"
        a = analyze_json([job.dumps])
        assert a["verdict"]["culprit_ranks"] == [2, 3] and "no dump" in a["verdict"]["summary"], \
            f"analyze names ranks 2 and 3, without dumps: {a['verdict']}"


SCENARIOS = {"healthy_ddp": healthy_ddp, "partition": partition,
             "straggler_shared": lambda: straggler("shared"), "straggler_local": lambda: straggler("local"),
             "killed_host": killed_host}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
