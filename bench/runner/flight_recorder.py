"""PyTorch's Flight Recorder and ncclwatch, side by side, on the same planted straggler.

usage: python3 bench/runner/flight_recorder.py --build-dir DIR [--ranks N] [--timeout-sec T]
                                               [--stall-sec S] [--update FILE]
Normally started by `scripts/bench --vs-flight-recorder`.

The job is examples/torch/train.py (torchrun + DDP, torch 2.15 on the sim): rank 1 stalls in its
Python data loader at step 5 for an hour (field report 2). It runs twice:
- Flight Recorder: TORCH_NCCL_TRACE_BUFFER_SIZE, dump on timeout, process-group timeout T; its
  dumps are read with torch's own analyzer (torchfrtrace).
- ncclwatch: `ncclwatch run --stall S`; its dumps are read with `ncclwatch analyze --json`.
For each: onset (the straggler's own wall-clock print) to the first dump and to the last, the
ranks dumped, whether the analyzer's verdict names rank 1, and whether the culprit's current
stack (its data-loader frames) is in the dumps. --update replaces the table between the markers
in FILE (BENCHMARKS.md), so the table there always comes from a run.
"""

import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN = os.path.join(ROOT, "examples", "torch", "train.py")
SIM_EXEC = os.path.join(ROOT, "scripts", "sim-exec")
BEGIN, END = "<!-- flight-recorder:begin -->", "<!-- flight-recorder:end -->"
CULPRIT, STEP = 1, 5
CULPRIT_FRAME = "skip_samples_to_resume_position"


def torch_python():
    out = subprocess.run([os.path.join(ROOT, "scripts", "setup"), "--print-torch-venv"],
                         capture_output=True, text=True, check=True)
    return os.path.join(out.stdout.strip(), "bin", "python")


def kill_tree(root_pid):
    pids, frontier = [], [root_pid]
    while frontier:
        pid = frontier.pop()
        for children in glob.glob(f"/proc/{pid}/task/*/children"):
            try:
                kids = [int(p) for p in open(children).read().split()]
            except OSError:
                continue
            pids += kids
            frontier += kids
    for pid in pids + [root_pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def run_job(cmd, env, log_path, done, timeout):
    """Starts cmd, waits until done() or the job ends or timeout, then kills what is left."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None and not done():
            time.sleep(0.2)
        time.sleep(1.0)  # late dumps of the same incident
        kill_tree(proc.pid)
        proc.wait()
    with open(log_path, errors="replace") as f:
        return f.read()


def onset_of(output):
    m = re.search(r"straggler onset: rank \d+ step \d+ wall ([0-9.]+)", output)
    return float(m[1]) if m else None


def latencies(onset, files):
    if onset is None or not files:
        return None, None
    times = sorted(os.stat(f).st_mtime for f in files)
    return times[0] - onset, times[-1] - onset


def torchrun(python, ranks, extra):
    return [python, "-m", "torch.distributed.run", "--nproc-per-node", str(ranks), "--master-addr", "127.0.0.1",
            "--master-port", str(29500 + os.getpid() % 1000), TRAIN, "--steps", "100000",
            "--straggler-rank", str(CULPRIT), "--straggler-step", str(STEP), "--straggler-sec", "3600"] + extra


def base_env():
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    env.pop("LD_PRELOAD", None)
    return env


def flight_recorder(python, build, ranks, timeout_sec, tmp):
    dumps = os.path.join(tmp, "fr")
    os.makedirs(dumps)
    prefix = os.path.join(dumps, "nccl_trace_rank_")
    env = dict(base_env(), TORCH_NCCL_TRACE_BUFFER_SIZE="2000", TORCH_NCCL_DUMP_ON_TIMEOUT="1",
               TORCH_FR_DUMP_TEMP_FILE=prefix, TORCH_NCCL_DEBUG_INFO_TEMP_FILE=prefix,
               TORCH_NCCL_ENABLE_MONITORING="1", BUILD_DIR=build)
    files = lambda: [f for f in glob.glob(prefix + "*") if re.search(r"_\d+$", f)]
    out = run_job([SIM_EXEC] + torchrun(python, ranks, ["--pg-timeout-sec", str(timeout_sec)]), env,
                  os.path.join(tmp, "fr.log"), lambda: len(files()) >= ranks, 3 * timeout_sec + 90)
    found = files()
    first, last = latencies(onset_of(out), found)
    ranks_dumped = sorted(int(re.search(r"_(\d+)$", f)[1]) for f in found)
    args = [os.path.join(os.path.dirname(python), "torchfrtrace"), dumps, "-p", "nccl_trace_rank_"]
    if len(found) < ranks:
        args.append("--allow-incomplete-ranks")
    analysis = subprocess.run(args, capture_output=True, text=True, timeout=300) if found else None
    text = (analysis.stdout + analysis.stderr) if analysis else ""
    verdict_ok = bool(found) and names_culprit_fr(text)
    stack_ok = any(CULPRIT_FRAME in open(f, "rb").read().decode("latin-1") for f in found
                   if f.endswith(f"_{CULPRIT}"))
    return {"tool": f"Flight Recorder (timeout {timeout_sec:g} s)", "first": first, "last": last,
            "ranks": ranks_dumped, "verdict": verdict_ok, "stack": stack_ok,
            "verdict_text": summarize(text)}


def ranks_text(ranks):
    """"rank 1" / "ranks 0,2": agreement as in ncclwatch's own text."""
    return ("rank " if len(ranks) == 1 else "ranks ") + ",".join(str(r) for r in ranks)


def names_culprit_fr(text):
    """torchfrtrace names a culprit when it reports rank 1 as the one missing from a collective."""
    for line in text.splitlines():
        if re.search(r"[Mm]issing ranks?", line) and re.search(rf"\b{CULPRIT}\b", line.split(":")[-1]):
            return True
    return False


def summarize(text):
    lines = [l.strip() for l in text.splitlines() if l.strip() and "tabulate" not in l]
    return " / ".join(lines[:3])[:200]


def ncclwatch(python, build, ranks, stall_sec, tmp):
    dumps = os.path.join(tmp, "nw")
    job = f"frbench-{os.getpid()}"
    cli = os.path.join(build, "bin", "ncclwatch")
    cmd = [SIM_EXEC, cli, "run", "--stall", str(stall_sec), "--dump-dir", dumps, "--job-id", job, "--"]
    files = lambda: glob.glob(os.path.join(dumps, "*.json"))
    out = run_job(cmd + torchrun(python, ranks, []), dict(base_env(), BUILD_DIR=build),
                  os.path.join(tmp, "nw.log"), lambda: len(files()) >= ranks, stall_sec + 90)
    subprocess.run([cli, "gc", "--job", job], capture_output=True)
    found = files()
    first, last = latencies(onset_of(out), found)
    dumped = sorted({json.load(open(f))["process"]["global_rank"] for f in found})
    r = subprocess.run([cli, "analyze", dumps, "--json"], capture_output=True, text=True, timeout=120)
    verdict = json.loads(r.stdout).get("verdict", {}) if r.stdout.strip() else {}
    verdict_ok = verdict.get("kind") == "straggler" and verdict.get("culprit_ranks") == [CULPRIT]
    stack_ok = False
    for f in found:
        d = json.load(open(f))
        if d["process"]["global_rank"] == CULPRIT:
            frames = [fr.get("function") for t in d["python_stacks"].get("threads", []) for fr in t["frames"]]
            stack_ok = CULPRIT_FRAME in frames
    return {"tool": f"ncclwatch (stall {stall_sec:g} s)", "first": first, "last": last, "ranks": dumped,
            "verdict": verdict_ok, "stack": stack_ok,
            "verdict_text": f"{verdict.get('kind')} {ranks_text(verdict.get('culprit_ranks') or [])} #{verdict.get('seq')} {verdict.get('op')}"}


def seconds(v):
    return "no dump" if v is None else f"{v:.1f} s"


def table(rows, ranks):
    out = [f"| tool | onset → first dump | onset → all dumps | ranks dumped (of {ranks}) | "
           f"analyzer names rank {CULPRIT} | culprit's current stack | analyzer said |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['tool']} | {seconds(r['first'])} | {seconds(r['last'])} | "
                   f"{','.join(map(str, r['ranks'])) or 'none'} | {'yes' if r['verdict'] else 'no'} | "
                   f"{'yes' if r['stack'] else 'no'} | {r['verdict_text'] or '-'} |")
    return "\n".join(out)


def update(path, text):
    doc = open(path).read()
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
    else:
        doc += f"\n## PyTorch Flight Recorder side by side\n\n{block}\n"
    open(path, "w").write(doc)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", required=True)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--timeout-sec", type=float, default=30.0, help="Flight Recorder's process-group timeout")
    p.add_argument("--stall-sec", type=float, default=5.0, help="ncclwatch's stall threshold")
    p.add_argument("--update", help="replace the table between the flight-recorder markers in this file")
    args = p.parse_args(argv)
    python, build = torch_python(), os.path.abspath(args.build_dir)
    tmp = tempfile.mkdtemp(prefix="ncclwatch-frbench-")
    try:
        rows = [flight_recorder(python, build, args.ranks, args.timeout_sec, tmp),
                ncclwatch(python, build, args.ranks, args.stall_sec, tmp)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = (table(rows, args.ranks) + f"\n\nSame job both times: torchrun + DDP on the sim, {args.ranks} ranks, "
            f"rank {CULPRIT} stalls in its Python data loader at step {STEP}. "
            f"Produced by `scripts/bench --vs-flight-recorder` on {time.strftime('%Y-%m-%d')}.")
    print(text)
    if args.update:
        update(args.update, text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
