#!/usr/bin/env python3
"""Real PyTorch DDP across 2 simulated hosts: torch_cluster_test.py healthy_ddp.

scripts/sim-cluster --hosts 2 runs, on each host, `ncclwatch run -- torchrun --nnodes 2 --node-rank K
--nproc-per-node 2 examples/torch/train.py --mode ddp` (the sim in place, the watcher's preload in
every rank, one dump directory shared by both hosts). Pass: every one of the 4 ranks finishes, each
had libncclwatch.so mapped (seen from outside, through /proc), and no dump was written.
Started by tests/torch/run.sh, i.e. with the pinned torch venv's python. Exit 0 pass, 1 fail.
"""

import glob
import os
import subprocess
import sys
import tempfile
import time

SOURCE = os.environ["NCCLWATCH_SOURCE_DIR"]
BUILD = os.environ["NCCLWATCH_BUILD_DIR"]
SIM_CLUSTER = os.path.join(SOURCE, "scripts", "sim-cluster")
CLI = os.path.join(BUILD, "bin", "ncclwatch")
TRAIN = os.path.join(SOURCE, "examples", "torch", "train.py")
PYTHON = sys.executable
HOSTS, PER_HOST, STEPS = 2, 2, 8


def watched_ranks():
    """(NODE_RANK, RANK) of every process that has the watcher mapped and a torchrun RANK."""
    found = set()
    for maps in glob.glob("/proc/[0-9]*/maps"):
        pid_dir = os.path.dirname(maps)
        try:
            with open(maps) as f:
                if "libncclwatch.so" not in f.read():
                    continue
            with open(os.path.join(pid_dir, "environ"), "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
        except OSError:
            continue
        if b"RANK" in env and b"NODE_RANK" in env and env.get(b"NCCLWATCH_TEST_TAG") == TAG.encode():
            found.add((int(env[b"NODE_RANK"]), int(env[b"RANK"])))
    return found


TAG = f"torch-cluster-{os.getpid()}"


def healthy_ddp():
    failures = []
    with tempfile.TemporaryDirectory(prefix="ncclwatch-torch-cluster-") as tmp:
        dumps = os.path.join(tmp, "dumps")
        job = ("exec {cli} run --stall 3 --poll-ms 200 --dump-dir {dumps} --job-id {tag} -- "
               "{py} -m torch.distributed.run --nnodes $NNODES --node-rank $NODE_RANK "
               "--nproc-per-node {n} --master-addr $MASTER_ADDR --master-port $MASTER_PORT "
               "{train} --mode ddp --steps {steps}").format(
                   cli=CLI, dumps=dumps, tag=TAG, py=PYTHON, n=PER_HOST, train=TRAIN, steps=STEPS)
        env = dict(os.environ, BUILD_DIR=BUILD, NCCL_DEBUG="WARN", OMP_NUM_THREADS="1",
                   PYTHONUNBUFFERED="1", NCCLWATCH_TEST_TAG=TAG)
        env.pop("LD_PRELOAD", None)
        env.pop("NCCLSIM_FABRIC_DIR", None)
        log_path = os.path.join(tmp, "job.log")
        start = time.monotonic()
        with open(log_path, "w") as log:
            proc = subprocess.Popen([SIM_CLUSTER, "--hosts", str(HOSTS), "--shared", dumps,
                                     "--timeout", "200", "--", "sh", "-c", job],
                                    stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp)
            seen = set()
            while proc.poll() is None:
                seen |= watched_ranks()
                time.sleep(0.5)
        took = time.monotonic() - start
        with open(log_path, errors="replace") as f:
            out = f.read()
        done = sorted(l.strip() for l in out.splitlines() if " done: " in l)
        expected = [f"rank {r} done: {STEPS} steps" for r in range(HOSTS * PER_HOST)]
        if proc.returncode != 0:
            failures.append(f"sim-cluster exit {proc.returncode}")
        if done != expected:
            failures.append(f"ranks that finished: {done}")
        want = {(r // PER_HOST, r) for r in range(HOSTS * PER_HOST)}
        if not want <= seen:
            failures.append(f"ranks seen with libncclwatch.so mapped: {sorted(seen)}, expected {sorted(want)}")
        written = sorted(os.path.join(d, n) for d, _, names in os.walk(dumps) for n in names)
        if written:
            failures.append(f"a healthy job wrote to the dump directory: {written}")
        if failures:
            print(out[-4000:])
    for f in failures:
        print("FAIL:", f)
    print(f"torch DDP, {HOSTS} hosts x {PER_HOST} ranks, {STEPS} steps: {took:.1f} s")
    return not failures


if __name__ == "__main__":
    if sys.argv[1:] != ["healthy_ddp"]:
        print("usage: torch_cluster_test.py healthy_ddp", file=sys.stderr)
        sys.exit(2)
    sys.exit(0 if healthy_ddp() else 1)
