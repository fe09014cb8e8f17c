"""Detection across simulated hosts (scripts/sim-cluster): H = 2, 4 and 8 hosts of 2 ranks each,
ddp_loop under the preload, one shared dump directory, the straggler on the last host's second
rank. Onset -> first verdict is measured on the declaring rank's own monotonic clock
(incident.detected_mono_ns - verdict.since_mono_ns); onset -> every host's dumps on the wall clock,
which the simulated hosts share (their monotonic clocks are hours apart):
max(detected_unix_ns) - (first.detected_unix_ns - first verdict's age)."""

import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

SECTION = "multihost"
STALL_SEC = 2
POLL_MS = 200
PER_HOST = 2
GOAL_ALL_DUMPS = STALL_SEC + 3  # every rank on every host within the threshold + 3 s


def run_hosts(ctx, hosts):
    dump_dir = tempfile.mkdtemp(prefix="ncclwatch-bench-multihost-")
    nranks = hosts * PER_HOST
    watch = (f"{ctx.bin('ncclwatch')} run --stall {STALL_SEC} --poll-ms {POLL_MS} --job-id {ctx.tag}-mh{hosts} "
             f"--dump-dir {dump_dir} --")
    script = ('for l in 0 1; do RANK=$((NODE_RANK * 2 + l)) LOCAL_RANK=$l WORLD_SIZE=$((NNODES * 2)) '
              f'{watch} {ctx.example("ddp_loop")} --quiet --tp 1 --steps 100000 --step-ms 20 '
              f'--straggler-rank {nranks - 1} --straggler-step 30 --straggler-sec 120 & done; wait')
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    proc = subprocess.Popen([os.path.join(ctx.source_dir, "scripts", "sim-cluster"), "--hosts", str(hosts),
                             "--timeout", "90", "--", "sh", "-c", script],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(glob.glob(os.path.join(dump_dir, "*.json"))) < nranks:
            time.sleep(0.2)
        time.sleep(0.5)
        dumps = []
        for path in glob.glob(os.path.join(dump_dir, "*.json")):
            try:
                dumps.append(json.load(open(path)))
            except ValueError:
                pass
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()
        shutil.rmtree(dump_dir, ignore_errors=True)
    local = [d for d in dumps if d["incident"]["trigger"] != "trigger-file" and d["verdict"]["since_mono_ns"]]
    if len({d["process"]["global_rank"] for d in dumps}) < nranks or not local:
        return None
    first = min(local, key=lambda d: d["incident"]["detected_unix_ns"])
    age = first["incident"]["detected_mono_ns"] - first["verdict"]["since_mono_ns"]
    onset_unix = first["incident"]["detected_unix_ns"] - age
    last = max(d["incident"]["detected_unix_ns"] for d in dumps) - onset_unix
    return age / 1e9, last / 1e9, len({d["process"]["host"] for d in dumps})


def run(ctx, results):
    for hosts in (2, 4, 8):
        got = run_hosts(ctx, hosts)
        label = f"{hosts} hosts x {PER_HOST} ranks: onset -> first verdict, -> every host's dumps"
        if got is None:
            results.add(SECTION, label, "not every rank dumped within 60 s", f"<= {GOAL_ALL_DUMPS} s", False)
            continue
        verdict, every, nhosts = got
        print(f"  {hosts} hosts: verdict {verdict:.2f} s, all dumps {every:.2f} s ({nhosts} hosts dumped)")
        results.add(SECTION, label, f"{verdict:.2f} s, {every:.2f} s ({nhosts} hosts)",
                    f"<= {GOAL_ALL_DUMPS} s (threshold {STALL_SEC} s + 3 s)", every <= GOAL_ALL_DUMPS)
