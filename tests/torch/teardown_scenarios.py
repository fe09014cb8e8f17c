#!/usr/bin/env python3
"""Real PyTorch on the sim: jobs torn down before the stall threshold, and jobs that share
torchrun's defaults. pytest teardown_scenarios.py::test_scenario[NAME].

The "Never harm the job" guarantees (README, "What ncclwatch guarantees"):
  pg_timeout        torch's own timeout (below NCCLWATCH_STALL_SEC) aborts rank 0 (SIGABRT), torchrun
                    stops rank 1, the straggler: last-gasp dumps name it, with its Python frames;
                    the framework seq analyze gives the stuck collective is Flight Recorder's.
  rank_raises       rank 1 stalls 4 s, then raises; torchrun stops rank 0 (SIGTERM): rank 0's last
                    gasp writes its own dump and rank 1's exit evidence; analyze says rank_exited.
  sigterm_hung      SIGTERM to every process of a hung job, as SLURM sends it: dumps, then the
                    same exit statuses as the same job without the watcher.
  abort_unresolved  the threshold first (straggler, 4 s), then torch's timeout (8 s) aborts the
                    communicator: the incident is never reported resolved, and analyze, after the
                    job died, leads with straggler rank 1 and its Python frame, says the job was
                    then torn down, and exits 3.
  rerun_after_kill  a 3-rank job killed while hung, then a healthy rerun with torchrun's
                    defaults (job id "none", same port, same directory): no dump, no warning.
  two_jobs          a hung job and a healthy one side by side, both "none" in one directory:
                    the healthy one writes nothing and logs nothing.
"""

import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

import torch_scenarios as ts

wd = ts.wd
NO_THRESHOLD = 60.0  # a stall threshold no teardown here waits for


def wait_exit(job, timeout):
    try:
        job.proc.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        pytest.fail(f"the job did not end within {timeout} s")


def straggler_seq(job, culprit=1, waiter=0):
    """(comm, seq, op): the collective the culprit never issued, by the sim's COLL lines."""
    comm = ts.world_comm(job)
    issued = ts.issued_collectives(job, comm)
    pids = ts.rank_pids(job, comm)
    seq = len(issued.get(pids.get(culprit), [])) + 1
    waiting = issued.get(pids.get(waiter), [])
    assert len(waiting) >= seq, f"rank {waiter} issued #{seq} (issued {len(waiting)})"
    return comm, seq, (waiting[seq - 1] if len(waiting) >= seq else None)


def python_frames(dump):
    return [f.get("function") for t in dump["python_stacks"].get("threads", []) for f in t["frames"]]


def worker_exitcodes(output):
    """{local rank: exitcode} from torchrun's failure report."""
    codes = {}
    for m in re.finditer(r"\(local_rank: (\d+)\)\s*\n\s*exitcode\s*:\s*(-?\d+)", output):
        codes[int(m[1])] = int(m[2])
    return codes


def flight_recorder_stuck_seq(trace_path):
    """The collective_seq_id of the first collective Flight Recorder's trace (the pickle torch
    writes on a timeout) does not show completed, or None without a trace."""
    try:
        with open(trace_path, "rb") as f:
            trace = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError):
        return None
    pending = [e.get("collective_seq_id", 0) for e in trace.get("entries", [])
               if e.get("state") != "completed" and e.get("collective_seq_id", 0) > 0]
    return min(pending) if pending else None


def pg_timeout():
    # Flight Recorder on (tools/README.md, "Matching Flight Recorder"): torch's timeout dumps
    # its trace, whose stuck entry's collective_seq_id ncclwatch's framework seq must equal
    # (torch 2.15 prints no SeqNum= line in this mode). Waiting 2 s for the dump instead of
    # torch's default keeps the test at ~18 s (71 s with the default).
    fr_dir = tempfile.mkdtemp(prefix="ncclwatch-fr-")
    fr_prefix = os.path.join(fr_dir, "nccl_trace_rank_")
    job = ts.TorchJob("pg_timeout", 2, ["--steps", "1000", "--straggler-rank", "1", "--straggler-step", "3",
                                        "--straggler-sec", "120", "--pg-timeout-sec", "6"],
                      env={"TORCH_NCCL_ASYNC_ERROR_HANDLING": "3", "TORCH_NCCL_TRACE_BUFFER_SIZE": "2000",
                           "TORCH_FR_BUFFER_SIZE": "2000", "TORCH_NCCL_DUMP_ON_TIMEOUT": "1",
                           "TORCH_FR_DUMP_TEMP_FILE": fr_prefix, "TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC": "2000"},
                      stall=NO_THRESHOLD)
    try:
        wait_exit(job, 120)
        out = job.output()
        assert job.proc.returncode != 0, f"torchrun failed, as torch's timeout makes it: {job.proc.returncode}"
        assert "NCCLWATCH WARN last gasp: torn down by" in out, "a last-gasp line was logged"
        comm, seq, op = straggler_seq(job)
        dumps = wd.load_dumps(job)
        ranks = sorted(d["process"]["global_rank"] for d in dumps if "written_by" not in d)
        assert ranks == [0, 1], f"both ranks dumped before they went: {ranks}"
        assert all(d["incident"]["trigger"] in ("last-gasp", "trigger-file") for d in dumps), \
            f"every dump is a last gasp or answers one: {[d['incident']['trigger'] for d in dumps]}"
        report = wd.analyze(job)
        wd.check_analysis(report, "straggler", comm, seq, op, [1])
        # torch's own number for the collective that timed out, from its Flight Recorder: ours is it.
        framework_seq = ts.check_ddp_framework_seq(report, seq)
        fr_seq = flight_recorder_stuck_seq(fr_prefix + "0")
        assert fr_seq == framework_seq, \
            (f"Flight Recorder's stuck collective_seq_id {fr_seq} (rank 0's trace: {os.listdir(fr_dir)}), "
             f"ncclwatch's framework seq {framework_seq}")
        culprit = wd.dump_of_rank(dumps, 1)
        assert culprit is not None, "the straggler dumped"
        frames = python_frames(culprit)
        assert "RestoreDataLoaderState" in frames, f"its Python stack shows the data loader: {frames[:12]}"
        assert worker_exitcodes(out).get(0) == -signal.SIGABRT, \
            f"rank 0 still died of torch's SIGABRT: {worker_exitcodes(out)}"
    finally:
        job.stop()
        job.cleanup()
        shutil.rmtree(fr_dir, ignore_errors=True)


def rank_raises():
    job = ts.TorchJob("rank_raises", 2, ["--steps", "1000", "--straggler-rank", "1", "--straggler-step", "3",
                                         "--straggler-sec", "4", "--straggler-raise"], stall=NO_THRESHOLD)
    try:
        wait_exit(job, 120)
        out = job.output()
        assert "data loader state could not be restored" in out, "rank 1 raised"
        comm, seq, op = straggler_seq(job)
        dumps = wd.load_dumps(job)
        live = [d for d in dumps if "written_by" not in d]
        assert live and all(d["process"]["global_rank"] == 0 for d in live), \
            f"rank 0 dumped before it went: {[d['process']['global_rank'] for d in live]}"
        assert all(d["incident"]["trigger"] in ("last-gasp", "local") for d in live), \
            f"at its teardown, or at the rank_exited verdict just before: {[d['incident']['trigger'] for d in live]}"
        gone = [d for d in dumps if "written_by" in d]
        assert gone and all(d["process"]["global_rank"] == 1 for d in gone), "with rank 1's exit evidence beside it"
        for d in gone:
            world = [c for c in d["comms"] if c["comm"] == comm]
            assert len(world) == 1 and world[0]["last_enqueued_seq"] == seq - 1, \
                f"rank 1's last op is #{seq - 1}: {world[:1]}"
            assert d["process"].get("exit", {}).get("status") == 1, f"it exited 1: {d['process'].get('exit')}"
        report = wd.analyze(job)
        wd.check_analysis(report, "rank_exited", comm, seq, op, [1])
    finally:
        job.stop()
        job.cleanup()


def hung_job(watcher, seq=12):
    """A 2-rank job hung in transport at #seq; returns it once both ranks have issued #seq."""
    job = ts.TorchJob("sigterm_hung", 2, ["--steps", "1000"], watcher=watcher, stall=NO_THRESHOLD,
                      env={"NCCLSIM_FAULT": f"hang:seq={seq},comm=0"})

    def both_issued():
        comm = ts.world_comm(job)
        issued = ts.issued_collectives(job, comm) if comm else {}
        return len(issued) == 2 and all(len(v) >= seq for v in issued.values())
    if not job.wait(both_issued, 90):
        job.stop()
        job.cleanup()
        pytest.fail(f"both ranks reached #{seq} (watcher={watcher})")
    return job


def sigterm_all(job):
    """SIGTERM to every process of the job at once, as SLURM and Kubernetes send it."""
    for pid in job.rank_pids() + [job.proc.pid]:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass


def sigterm_hung():
    results = {}
    for watcher in (True, False):
        job = hung_job(watcher)
        try:
            time.sleep(3)  # hung for longer than the 1 s last-gasp floor
            sent = time.monotonic()
            sigterm_all(job)
            wait_exit(job, 60)
            took = time.monotonic() - sent
            out = job.output()
            results[watcher] = (job.proc.returncode, worker_exitcodes(out))
            print(f"watcher={watcher}: exit {job.proc.returncode} {worker_exitcodes(out)} {took:.1f} s after SIGTERM")
            if watcher:
                assert took < 10, f"teardown took {took:.1f} s with the watcher (bounded by 3 s a rank)"
                dumps = wd.load_dumps(job)
                ranks = sorted(d["process"]["global_rank"] for d in dumps)
                assert ranks == [0, 1], f"both ranks dumped before they went: {ranks}"
                comm = ts.world_comm(job)
                report = wd.analyze(job)
                ops = {tuple(v[11:12]) for v in ts.issued_collectives(job, comm).values()}
                wd.check_analysis(report, "collective_hang", comm, 12, next(iter(ops))[0] if len(ops) == 1 else None,
                                  [0, 1])
        finally:
            job.stop()
            job.cleanup()
    assert results.get(True) == results.get(False), f"the same exit statuses with and without the watcher: {results}"


def first_lines(text):
    """The report's answer: its lines up to the first blank one."""
    return text.split("\n\n", 1)[0].splitlines()


def check_verdict_then_teardown(job):
    """What the user reads after the job died: the straggler with its Python frame first, then
    that torch's timeout tore the job down; a hang, so a non-zero exit."""
    comm, seq, op = straggler_seq(job)
    report = wd.analyze(job)  # exit 3
    wd.check_analysis(report, "straggler", comm, seq, op, [1])
    assert report.get("outcome") == "hang", f"analyze's outcome: {report.get('outcome')}"
    teardown = [e for e in report.get("then", []) if e.get("kind") == "teardown"]
    assert teardown, f"what followed the verdict names the teardown: {report.get('then')}"
    r = subprocess.run([wd.CLI, "analyze", job.dump_dir], capture_output=True, text=True, timeout=60)
    print(r.stdout)
    head = first_lines(r.stdout)
    said = "\n".join(head)
    assert r.returncode == 3 and head[:1] == ["VERDICT: straggler"], f"exit {r.returncode}:\n{said}"
    culprit = [line for line in head if line.strip().startswith("rank 1 (")]
    assert culprit and ("skip_samples_to_resume_position" in culprit[0] or "RestoreDataLoaderState" in culprit[0]), \
        f"the culprit line gives rank 1's Python frame:\n{said}"
    then = [line for line in head if line.strip().startswith("then torn down:")]
    assert then and any(cause in then[0] for cause in ("ncclCommAbort", "SIGABRT")), \
        f"the first lines say torch's timeout then tore the job down:\n{said}"


def abort_unresolved():
    # Our threshold (4 s) fires before torch's collective timeout (8 s), as in production (60 s
    # against 10 min); torch then aborts the communicator and torchrun stops the ranks.
    job = ts.TorchJob("abort_unresolved", 2, ["--steps", "1000", "--straggler-rank", "1", "--straggler-step", "3",
                                              "--straggler-sec", "120", "--pg-timeout-sec", "8"],
                      env={"TORCH_NCCL_ASYNC_ERROR_HANDLING": "1"}, stall=4.0)
    try:
        assert job.wait(lambda: len(job.dump_files()) >= 2, 90), "the straggler was dumped at the threshold"
        wait_exit(job, 90)
        time.sleep(0.5)
        out = job.output()
        print("\n".join(l for l in out.splitlines() if "NCCLWATCH" in l or "bort" in l))
        assert "NCCLWATCH WARN straggler" in out, "the straggler was declared"
        assert "resolved after" not in out, ("the abort did not read as a recovery: " +
              "; ".join(l for l in out.splitlines() if "resolved after" in l)[:500])
        notes = [f for f in os.listdir(job.dump_dir) if "resol" in f]
        assert not notes, f"no resolution note: {notes}"
        check_verdict_then_teardown(job)
    finally:
        job.stop()
        job.cleanup()


def new_files(directory, before):
    try:
        return sorted(set(os.listdir(directory)) - before)
    except FileNotFoundError:
        return []


def quiet(out):
    """The watcher's lines in a job's output (there must be none for a healthy job)."""
    return [l for l in out.splitlines() if "NCCLWATCH" in l or "ncclwatch:" in l]


def segments_of(pids):
    """This user's "none" segments owned by `pids` (other tests run "none" jobs beside this one)."""
    prefix = f"ncclwatch.{os.getuid()}.none."
    return [e for e in os.listdir("/dev/shm") if e.startswith(prefix) and int(e[len(prefix):].split(".")[0]) in pids]


def rerun_after_kill():
    cwd = tempfile.mkdtemp(prefix="ncclwatch-torch-rerun-")
    port = ts.free_port()
    killed = ts.TorchJob("killed", 3, ["--steps", "1000", "--straggler-rank", "1", "--straggler-step", "3",
                                       "--straggler-sec", "120"], defaults=True, cwd=cwd, port=port)
    try:
        assert killed.wait(lambda: len(killed.dump_files()) >= 3, 90), "the first job dumped its straggler"
        killed_ranks = {pid for pid, *_ in ts.init_lines(killed)}
        for pid in killed.rank_pids() + [killed.proc.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        killed.proc.wait()
        time.sleep(0.5)
        left = segments_of(killed_ranks)
        assert len(left) == 3, f"the killed ranks left their segments: {left}"
        before = set(os.listdir(killed.dump_dir))
        rerun = ts.TorchJob("rerun", 2, ["--steps", "8"], defaults=True, cwd=cwd, port=port)
        try:
            wait_exit(rerun, 150)
            out = rerun.output()
            assert rerun.proc.returncode == 0, f"the rerun finished: {rerun.proc.returncode}\n{out[-2000:]}"
            assert not new_files(killed.dump_dir, before), f"no dump: {new_files(killed.dump_dir, before)}"
            assert not quiet(out), f"no warning: {quiet(out)[:3]}"
            left = segments_of(killed_ranks | {pid for pid, *_ in ts.init_lines(rerun)})
            assert not left, f"the rerun removed what the killed run left, and its own: {left}"
        finally:
            rerun.stop()
            rerun.cleanup()
    finally:
        killed.stop()
        killed.cleanup()
        shutil.rmtree(cwd, ignore_errors=True)


def two_jobs():
    cwd = tempfile.mkdtemp(prefix="ncclwatch-torch-two-")
    hung = ts.TorchJob("hung", 2, ["--steps", "1000"], defaults=True, cwd=cwd,
                       env={"NCCLSIM_FAULT": "hang:seq=12,comm=0"})
    try:
        assert hung.wait(lambda: len(hung.dump_files()) >= 2, 90), "the hung job dumped"
        before = set(os.listdir(hung.dump_dir))
        healthy = ts.TorchJob("healthy", 2, ["--steps", "40"], defaults=True, cwd=cwd)
        try:
            wait_exit(healthy, 150)
            out = healthy.output()
            assert healthy.proc.returncode == 0, f"the healthy job finished: {healthy.proc.returncode}\n{out[-2000:]}"
            assert not quiet(out), f"the healthy job logged nothing: {quiet(out)[:3]}"
            pids = {pid for pid, *_ in ts.init_lines(healthy)}
            assert pids, "the healthy job's ranks are known"
            written = [json.load(open(os.path.join(hung.dump_dir, f))) for f in new_files(hung.dump_dir, before)
                       if f.endswith(".json")]
            by_healthy = [d for d in written if d["process"]["pid"] in pids]
            assert not by_healthy, f"the healthy job wrote no dump: {[d['incident']['id'] for d in by_healthy]}"
        finally:
            healthy.stop()
            healthy.cleanup()
        assert hung.proc.poll() is None, "the hung job is still there (the healthy one ran beside it)"
    finally:
        hung.stop()
        hung.cleanup()
        shutil.rmtree(cwd, ignore_errors=True)


SCENARIOS = {
    "pg_timeout": pg_timeout,
    "rank_raises": rank_raises,
    "sigterm_hung": sigterm_hung,
    "abort_unresolved": abort_unresolved,
    "rerun_after_kill": rerun_after_kill,
    "two_jobs": two_jobs,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
