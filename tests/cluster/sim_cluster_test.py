#!/usr/bin/env python3
"""Tests of scripts/sim-cluster and of the sim's NCCL across simulated hosts.

Usage: pytest sim_cluster_test.py::test_scenario[CASE]   (cases: see CASES at the bottom; ctest runs each as cluster.CASE)
Needs NCCLWATCH_SOURCE_DIR and NCCLWATCH_BUILD_DIR (set by ctest), the sim and build/examples/ddp_loop.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

from ncclwatch_test import procs
from ncclwatch_test.paths import BUILD, DDP_LOOP, SIM_CLUSTER, SOURCE

CLOCK_STEP_S = 3600  # sim-cluster's per-host monotonic offset


def sim_cluster(args, timeout=120, env=None, user=None):
    """Runs sim-cluster; returns (status, stdout, stderr, seconds)."""
    argv = [sys.executable, SIM_CLUSTER, *args]
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
    full_env = dict(os.environ, BUILD_DIR=BUILD, **(env or {}))
    full_env.pop("NCCLSIM_FABRIC_DIR", None)
    start = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=full_env)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def per_host(stdout, hosts):
    """Lines "hostK key=value ..." into {K: {key: value}}; every host must report once."""
    seen = {}
    for line in stdout.splitlines():
        m = re.match(r"host(\d+) (.*)", line)
        if m:
            seen[int(m.group(1))] = dict(kv.split("=", 1) for kv in m.group(2).split())
    assert sorted(seen) == list(range(hosts)), f"expected a report from each of {hosts} hosts:\n{stdout}"
    return seen


def no_strays(marker):
    deadline = time.monotonic() + 5
    while procs.with_cmdline(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not procs.with_cmdline(marker), f"processes left behind: {procs.with_cmdline(marker)}"


# --- sim-cluster itself ---------------------------------------------------------------------------

def case_namespaces():
    """Hostnames, private /dev/shm, repeated pids, monotonic clocks hours apart, the environment."""
    # Python reads the monotonic clock without the sim preloaded (a sanitized sim must not be
    # preloaded into an uninstrumented interpreter); sh reports the rest.
    probe = ('touch /dev/shm/mine; mono=$(env -u LD_PRELOAD python3 -c "import time; print(time.monotonic())");'
             ' case "$LD_PRELOAD" in *libnccl.so.2*) sim=1;; *) sim=0;; esac;'
             ' echo "$(hostname) pid=$$ mono=$mono shm=$(ls /dev/shm | tr "\\n" ,) shmdev=$(stat -c %d /dev/shm)'
             ' nnodes=$NNODES rank=$NODE_RANK addr=$MASTER_ADDR port=$MASTER_PORT fabric=$NCCLSIM_FABRIC_DIR sim=$sim"')
    local_mono = time.monotonic()
    status, out, err, _ = sim_cluster(["--hosts", "3", "--", "sh", "-c", probe])
    assert status == 0, f"status {status}, stderr:\n{err}"
    hosts = per_host(out, 3)
    for k, h in hosts.items():
        assert h["rank"] == str(k) and h["nnodes"] == "3", f"host{k}: NODE_RANK/NNODES {h}"
        assert h["addr"] == "127.0.0.1", f"host{k}: MASTER_ADDR {h['addr']}"
        assert h["sim"] == "1", f"host{k}: the sim is not in LD_PRELOAD"
        # Only its own file: each host has its own empty tmpfs.
        assert h["shm"] == "mine,", f"host{k}: /dev/shm holds {h['shm']!r}, not only its own file"
        # CMD is pid 2 on every host (pid 1 is the host's init): pids repeat across hosts.
        assert h["pid"] == "2", f"host{k}: CMD has pid {h['pid']}, not 2 in its own PID namespace"
        ahead = float(h["mono"]) - local_mono
        assert abs(ahead - k * CLOCK_STEP_S) < 60, \
            f"host{k}: monotonic clock {ahead:.0f} s ahead, expected {k * CLOCK_STEP_S}"
    assert len({h["port"] for h in hosts.values()}) == 1, "MASTER_PORT differs between hosts"
    assert len({h["fabric"] for h in hosts.values()}) == 1, "NCCLSIM_FABRIC_DIR differs between hosts"
    assert len({h["shmdev"] for h in hosts.values()}) == 3, "hosts share a /dev/shm"
    assert not os.path.exists("/dev/shm/mine"), "a host's /dev/shm file appeared on this machine"
    assert not os.path.exists(hosts[0]["fabric"]), "the fabric directory was not removed"


def case_dirs():
    """--local DIR is private per host (backed by DIR/host<K>); --shared DIR is one directory."""
    with tempfile.TemporaryDirectory() as tmp:
        local, shared = os.path.join(tmp, "local"), os.path.join(tmp, "shared")
        script = (f'echo $(hostname) > {local}/who; ls {local} > {local}/seen;'
                  f' echo $(hostname) > {shared}/$(hostname)')
        status, _, err, _ = sim_cluster(["--hosts", "2", "--local", local, "--shared", shared,
                                         "--", "sh", "-c", script])
        assert status == 0, f"status {status}, stderr:\n{err}"
        for k in range(2):
            with open(os.path.join(local, f"host{k}", "who")) as f:
                assert f.read().strip() == f"host{k}", f"{local}/host{k}/who is not host{k}'s"
            with open(os.path.join(local, f"host{k}", "seen")) as f:
                seen = f.read().split()
            # Inside host K, DIR holds only host K's files, never the other hosts' directories.
            assert sorted(seen) == ["seen", "who"], f"host{k} saw {seen} in its --local dir"
        assert sorted(os.listdir(shared)) == ["host0", "host1"], \
            f"--shared dir holds {os.listdir(shared)}, not both hosts' files"
        assert sorted(os.listdir(local)) == ["host0", "host1"], f"--local dir holds {os.listdir(local)}"


def case_kill_host():
    """--kill-host 1 --after 1: host1 dies at once with 137 (and all of it), host0 finishes."""
    with tempfile.TemporaryDirectory() as tmp:
        script = f'sleep 300.25 & sleep 3; echo done > {tmp}/$(hostname)'
        status, _, err, took = sim_cluster(["--hosts", "2", "--kill-host", "1", "--after", "1",
                                            "--", "sh", "-c", script])
        assert status == 137, f"status {status}, expected 137 (SIGKILL); stderr:\n{err}"
        assert "killing host1" in err, f"no kill message:\n{err}"
        assert os.listdir(tmp) == ["host0"], f"expected only host0 to finish, got {os.listdir(tmp)}"
        assert 2.5 < took < 60, f"took {took:.1f} s; host0 needs 3 s"
    no_strays("300.25")


def case_timeout():
    """--timeout: 124, every host stopped (SIGTERM reaches CMD first), nothing left running."""
    with tempfile.TemporaryDirectory() as tmp:
        script = f'trap "echo term > {tmp}/$(hostname); exit 3" TERM; sleep 301.25 & wait'
        status, _, err, took = sim_cluster(["--hosts", "2", "--timeout", "1.5", "--", "sh", "-c",
                                            script])
        assert status == 124, f"status {status}, expected 124; stderr:\n{err}"
        assert 1.4 < took < 20, f"took {took:.1f} s for --timeout 1.5 (+3 s grace at most)"
        assert sorted(os.listdir(tmp)) == ["host0", "host1"], f"SIGTERM reached {os.listdir(tmp)}"
    # A CMD that ignores SIGTERM is SIGKILLed after the grace period.
    status, _, _, took = sim_cluster(["--hosts", "2", "--timeout", "1", "--", "sh", "-c",
                                      'trap "" TERM; sleep 302.25'])
    assert status == 124 and took < 20, f"status {status} after {took:.1f} s"
    no_strays("301.25")
    no_strays("302.25")


def case_signal_while_polling():
    """SIGTERM stops every host and exits 143 even when it lands while Popen.poll() holds the
    Popen's wait lock: the handler once stopped the hosts itself, and its wait() then blocked
    on that lock for ever (a benchmark's sim-cluster hung so). The wrapper holds the lock 50 ms
    in every poll, so that the signal lands inside it."""
    wrapper = textwrap.dedent(f"""
        import runpy, subprocess, sys, time
        original = subprocess.Popen._internal_poll
        def slow_poll(self, *args, **kwargs):
            with self._waitpid_lock:
                time.sleep(0.05)
            return original(self, *args, **kwargs)
        subprocess.Popen._internal_poll = slow_poll
        sys.argv = [{SIM_CLUSTER!r}] + sys.argv[1:]
        runpy.run_path({SIM_CLUSTER!r}, run_name="__main__")
    """)
    env = dict(os.environ, BUILD_DIR=BUILD)
    env.pop("NCCLSIM_FABRIC_DIR", None)
    p = subprocess.Popen([sys.executable, "-c", wrapper, "--hosts", "2", "--", "sh", "-c", "sleep 303.25"],
                         env=env, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2)
        p.send_signal(signal.SIGTERM)
        status = p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        pytest.fail("sim-cluster did not exit within 20 s of SIGTERM (its handler deadlocked)")
    assert status == 128 + signal.SIGTERM, f"status {status}, expected 143; stderr:\n{p.stderr.read()}"
    no_strays("303.25")


def case_status():
    """The exit status is the worst host's; a missing command is one line per host and 127."""
    status, _, err, _ = sim_cluster(["--hosts", "3", "--", "sh", "-c", "exit $((NODE_RANK * 2))"])
    assert status == 4, f"status {status}, expected 4 (host2); stderr:\n{err}"
    status, _, err, _ = sim_cluster(["--hosts", "2", "--", "/nonexistent/cmd"])
    assert status == 127, f"status {status} for a missing command"
    assert len(err.strip().splitlines()) == 2, f"expected one line per host:\n{err}"


def case_usage():
    """--help says what it needs; bad input fails with exactly one line and status 2."""
    p = subprocess.run([SIM_CLUSTER, "--help"], capture_output=True, text=True)
    assert (p.returncode == 0 and "--kill-host" in p.stdout and "root" in p.stdout and
            "user namespaces" in p.stdout), f"--help:\n{p.stdout}"
    bad = [[], ["--hosts", "2"], ["--hosts", "2", "--"], ["--hosts", "0", "--", "true"],
           ["--hosts", "x", "--", "true"], ["--hosts", "999", "--", "true"],
           ["--hosts", "2", "--kill-host", "1", "--", "true"],
           ["--hosts", "2", "--kill-host", "2", "--after", "1", "--", "true"],
           ["--hosts", "2", "--after", "1", "--", "true"], ["--hosts", "2", "--timeout", "0", "--", "true"],
           ["--hosts", "2", "--timeout", "-1", "--", "true"], ["--bogus", "--", "true"],
           ["--hosts", "2", "--local", "/tmp/x", "--shared", "/tmp/x", "--", "true"],
           ["--hosts", "2", "--local", "/", "--", "true"], ["--hosts"]]
    for args in bad:
        status, out, err, _ = sim_cluster(args)
        lines = err.strip().splitlines()
        assert status == 2 and len(lines) == 1 and lines[0].startswith("sim-cluster: "), \
            f"{args}: status {status}, stderr {err!r}"
        assert out == "", f"{args}: printed to stdout: {out!r}"
    # A --local directory must not hide the fabric (made in TMPDIR) from the other hosts.
    with tempfile.TemporaryDirectory() as tmp:
        status, _, err, _ = sim_cluster(["--hosts", "2", "--local", tmp, "--", "true"], env={"TMPDIR": tmp})
        assert status == 2 and len(err.strip().splitlines()) == 1 and "would hide the sim's fabric" in err, \
            f"--local TMPDIR: status {status}, stderr {err!r}"
        assert os.listdir(tmp) == [], f"left in TMPDIR: {os.listdir(tmp)}"


def case_unprivileged():
    """Without root: the hosts run in user namespaces when the kernel allows them, else one line.

    sim-cluster, sim-exec and the sim's libraries are copied to a world-readable place, so that
    user 65534 can run them whatever the permissions of the checkout."""
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o1777)
        shutil.copytree(os.path.join(SOURCE, "scripts"), os.path.join(tmp, "scripts"))
        shutil.copytree(os.path.join(BUILD, "sim", "lib"), os.path.join(tmp, "build", "sim", "lib"))
        for root, dirs, files in os.walk(tmp):
            for name in dirs + files:
                os.chmod(os.path.join(root, name), 0o755)
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python,
                os.path.join(tmp, "scripts", "sim-cluster"), "--hosts", "2",
                "--local", os.path.join(tmp, "l"), "--", "sh", "-c",
                'echo x > /dev/shm/x && echo $(hostname) ok=1']
        env = dict(os.environ, TMPDIR=tmp, BUILD_DIR=os.path.join(tmp, "build"))
        env.pop("NCCLSIM_FABRIC_DIR", None)
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp, env=env)
    if p.returncode == 0:
        per_host(p.stdout, 2)
        return
    lines = p.stderr.strip().splitlines()
    assert (p.returncode == 127 and len(lines) == 1 and
            "needs root, or unprivileged user namespaces" in lines[0]), f"status {p.returncode}, stderr {p.stderr!r}"


def case_no_namespaces():
    """When unshare cannot make the namespaces, sim-cluster says so in one line (status 127)."""
    with tempfile.TemporaryDirectory() as tmp:
        fake = os.path.join(tmp, "unshare")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n")
        os.chmod(fake, 0o755)
        status, out, err, _ = sim_cluster(["--hosts", "2", "--", "true"],
                                          env={"PATH": f"{tmp}:{os.environ['PATH']}"})
    lines = err.strip().splitlines()
    assert (status == 127 and len(lines) == 1 and "Operation not permitted" in lines[0] and
            "needs root, or unprivileged user namespaces" in lines[0]), f"status {status}, stderr {err!r}"


# --- the sim across hosts -------------------------------------------------------------------------

def two_ranks_per_host(*ddp_args, program=DDP_LOOP):
    """sh script: two ranks of program (ddp_loop) per host, global ranks NODE_RANK*2 + 0..1."""
    args = " ".join(ddp_args)
    return ('for l in 0 1; do RANK=$((NODE_RANK * 2 + l)) LOCAL_RANK=$l WORLD_SIZE=$((NNODES * 2)) '
            f'{program} {args} & done; s=0; for j in 1 2; do wait %$j || s=$?; done; exit $s')


def case_sim_job():
    """A 2-host x 2-rank job: collectives complete across hosts; debug lines carry each host."""
    status, out, err, took = sim_cluster(
        ["--hosts", "2", "--timeout", "60", "--", "sh", "-c", two_ranks_per_host("--steps", "20")],
        env={"NCCL_DEBUG": "INFO"})
    assert status == 0, f"status {status} after {took:.1f} s; stderr:\n{err}\nstdout:\n{out}"
    # 1+2+3+4: all four ranks, two per host, took part in the gradient AllReduce.
    assert "step 20/20 ok (allreduce 10)" in out, f"no correct last step:\n{out}"
    for k in range(2):
        starts = re.findall(rf"^host{k}:\d+:\d+ \[\d\] NCCL INFO ncclCommInitRank .* nranks 4 .*Init COMPLETE$",
                            out, re.M)
        assert len(starts) == 2, f"host{k}: {len(starts)} world init lines, expected 2:\n{out}"
    print(f"2 hosts x 2 ranks, 20 steps: {took:.2f} s")


def case_fabric_dir_checks():
    """NCCLSIM_FABRIC_DIR must be a real directory that others cannot tamper with: a symlink, a
    world-writable directory without the sticky bit, or a missing one fails init with a WARN line
    naming the reason; a proper one carries a job (on one host, without sim-cluster)."""
    launch = os.path.join(SOURCE, "scripts", "launch")
    sim_exec = os.path.join(SOURCE, "scripts", "sim-exec")
    with tempfile.TemporaryDirectory() as tmp:
        real, link, open_dir = (os.path.join(tmp, n) for n in ("real", "link", "open"))
        os.mkdir(real, 0o700)
        os.symlink(real, link)
        os.mkdir(open_dir)
        os.chmod(open_dir, 0o777)
        cases = [(link, "not a directory (symlinks are refused)"),
                 (open_dir, "writable by others and not sticky"),
                 (os.path.join(tmp, "missing"), "No such file or directory"),
                 (real, None)]
        for fabric, reason in cases:
            env = dict(os.environ, BUILD_DIR=BUILD, NCCL_DEBUG="WARN", NCCLSIM_FABRIC_DIR=fabric)
            p = subprocess.run([sys.executable, launch, "-n", "2", "--timeout", "60", "--", sim_exec,
                                DDP_LOOP, "--steps", "3"], capture_output=True, text=True, env=env)
            if reason is None:
                assert p.returncode == 0 and "step 3/3 ok (allreduce 3)" in p.stdout, \
                    f"{fabric}: status {p.returncode}\n{p.stdout}\n{p.stderr}"
                assert os.listdir(real) == [], f"segments left in the fabric dir: {os.listdir(real)}"
                continue
            warns = re.findall(rf"NCCL WARN ncclCommInitRank: NCCLSIM_FABRIC_DIR {re.escape(fabric)}: "
                               rf"{re.escape(reason)}$", p.stdout, re.M)
            assert p.returncode != 0 and len(warns) == 2, \
                f"{fabric}: status {p.returncode}, expected a WARN per rank ({reason}):\n{p.stdout}"


def case_partition():
    """partition:hosts=host0+host1: the job hangs at the fault (bounded by --timeout); with ms=M
    every rank warns that its peer host is unreachable."""
    fault = "partition:hosts=host0+host1,seq=5,ms=300"
    status, out, err, took = sim_cluster(
        ["--hosts", "2", "--timeout", "6", "--", "sh", "-c", two_ranks_per_host("--steps", "20")],
        env={"NCCLSIM_FAULT": fault, "NCCL_DEBUG": "WARN"})
    assert status == 124, f"status {status}, expected 124 (hang); stdout:\n{out}\nstderr:\n{err}"
    assert "step 20/20" not in out, f"the job completed across the partition:\n{out}"
    for k, other in ((0, 1), (1, 0)):
        warns = re.findall(rf"^host{k}:\d+:\d+ \[\d\] NCCL WARN NET/Socket : peer on host{other} unreachable",
                           out, re.M)
        assert len(warns) == 2, f"host{k}: {len(warns)} WARN lines, expected one per rank:\n{out}"
    # The same job with the partition between host1 and a host that is not in it completes.
    status, out, err, _ = sim_cluster(
        ["--hosts", "2", "--timeout", "60", "--", "sh", "-c", two_ranks_per_host("--steps", "10")],
        env={"NCCLSIM_FAULT": "partition:hosts=host1+host7,seq=1"})
    assert status == 0 and "step 10/10 ok (allreduce 10)" in out, \
        f"a partition not between the job's hosts stopped it: status {status}\n{out}\n{err}"


def case_partition_p2p():
    """Send/Recv: a ring that crosses host0-host1 hangs at the partition; pairs within each host
    (same comm, same fault) complete, and the data that arrives is right."""
    program = os.environ["CLUSTER_P2P_EXCHANGE"]
    fault = {"NCCLSIM_FAULT": "partition:hosts=host0+host1,seq=3"}
    for mode, faulty, want in (("ring", False, 0), ("local", False, 0), ("ring", True, 124),
                               ("local", True, 0)):
        status, out, err, took = sim_cluster(
            ["--hosts", "2", "--timeout", "5" if want == 124 else "60", "--", "sh", "-c",
             two_ranks_per_host(mode, "6", program=program)], env=fault if faulty else {})
        done = sorted(re.findall(rf"^rank (\d) p2p {mode} done: 6 steps$", out, re.M))
        assert status == want and done == ([] if want else ["0", "1", "2", "3"]), \
            f"{mode} (partition: {faulty}): status {status}, expected {want}; ranks done {done}\n{out}\n{err}"
    # With ms=M the ranks learn of the failure as from NCCL's net transports: ncclRemoteError
    # after M ms; each aborts its comm (which releases its stream) and exits 4.
    status, out, err, took = sim_cluster(
        ["--hosts", "2", "--timeout", "30", "--", "sh", "-c", two_ranks_per_host("ring", "6", program=program)],
        env={"NCCLSIM_FAULT": "partition:hosts=host0+host1,seq=3,ms=500"})
    errors = sorted(re.findall(r"^rank (\d) async error: remote process exited or there was a network error$",
                               out, re.M))
    assert status == 4 and errors == ["0", "1", "2", "3"], \
        f"ms=500: status {status} after {took:.1f} s, ranks with ncclRemoteError {errors}\n{out}\n{err}"


def case_watch_partition():
    """The watcher over a network partition, dumps on each host's local disk: every rank of both
    hosts dumps collective_hang (the dump names differ although pids repeat across hosts), and
    analyze of the per-host directories merges 4 dumps from 2 hosts into one collective_hang
    with the transport hint."""
    cli = os.path.join(BUILD, "bin", "ncclwatch")
    with tempfile.TemporaryDirectory() as tmp:
        dumps = os.path.join(tmp, "dumps")
        job = f"exec {cli} run --stall 2 --poll-ms 200 --dump-dir {dumps} --job-id part -- sh -c '" + \
            two_ranks_per_host("--steps", "1000") + "'"
        status, out, err, _ = sim_cluster(["--hosts", "2", "--local", dumps, "--timeout", "15", "--",
                                           "sh", "-c", job],
                                          env={"NCCLSIM_FAULT": "partition:hosts=host0+host1,seq=9"})
        assert status == 124, f"status {status}, expected a hang (124):\n{out}\n{err}"
        names = sorted(n for k in range(2) for n in os.listdir(os.path.join(dumps, f"host{k}"))
                       if n.endswith(".json"))
        got = sorted(re.match(r"rank(\d)-(host\d)-(\d+)-collective_hang-", n).group(1, 2) for n in names
                     if re.match(r"rank\d-host\d-\d+-collective_hang-", n))
        assert got == [("0", "host0"), ("1", "host0"), ("2", "host1"), ("3", "host1")], \
            f"collective_hang dumps of (rank, host): {got}; files: {names}"
        p = subprocess.run([cli, "analyze", "--json", dumps], capture_output=True, text=True)
        assert p.returncode == 3, f"analyze exit {p.returncode}: {p.stderr}"
        a = json.loads(p.stdout)
        v = a["verdict"]
        assert v["kind"] == "collective_hang" and v["seq"] == 9 and v["culprit_ranks"] == [0, 1, 2, 3], f"verdict {v}"
        assert a["dumps_read"] == 4 and sorted(a["hosts"]) == ["host0", "host1"], \
            f"dumps_read {a['dumps_read']}, hosts {a['hosts']}"
        assert "p2p_transport" in [h["id"] for h in a["hints"]], f"hints {[h['id'] for h in a['hints']]}"


def case_watch_host_killed_in_init():
    """host1 dies (SIGKILL of all of it, as a node failure) while its ranks 2-3 are in
    ncclCommInitRank: host0's ranks wait in init, dump, and are killed at the timeout. analyze's
    first hint is about the ranks that never showed up, before any NCCL variable, and no hint
    offers an unset variable as evidence."""
    cli = os.path.join(BUILD, "bin", "ncclwatch")
    with tempfile.TemporaryDirectory() as tmp:
        dumps = os.path.join(tmp, "dumps")
        job = f"exec {cli} run --stall 2 --poll-ms 200 --dump-dir {dumps} --job-id killed-init -- sh -c '" + \
            two_ranks_per_host("--tp", "1", "--steps", "1000") + "'"
        # Every rank's init waits (as NCCL's does for a peer that never connects) until host1 dies.
        status, out, err, _ = sim_cluster(["--hosts", "2", "--local", dumps, "--kill-host", "1", "--after", "1",
                                           "--timeout", "8", "--", "sh", "-c", job],
                                          env={"NCCLSIM_FAULT": "hang:seq=init"})
        assert status == 124, f"status {status}, expected host0 to hang in init until the timeout:\n{out}\n{err}"
        p = subprocess.run([cli, "analyze", "--json", dumps], capture_output=True, text=True)
        assert p.returncode == 3, f"analyze exit {p.returncode}: {p.stderr}"
        a = json.loads(p.stdout)
        v = a["verdict"]
        assert v["kind"] == "init_hang" and sorted(a["hosts"]) == ["host0"], f"verdict {v['kind']}, hosts {a['hosts']}"
        hints = [h["id"] for h in a["hints"]]
        assert hints[:1] == ["absent_ranks"], f"the first hint is about the missing ranks: {hints}"
        evidence = [e for h in a["hints"] for e in h["evidence"]]
        assert not [e for e in evidence if "unset" in e], f"no unset variable as evidence: {evidence}"
        text = subprocess.run([cli, "analyze", dumps], capture_output=True, text=True).stdout
        print(text)
        head = text.split("\n\n", 1)[0]
        assert "  ranks 2-3: no dump" in head and "host0 (ranks 0-1) waited on them" in head, \
            f"the first lines say what is known of ranks 2-3, and from whom:\n{head}"
        tried = [line for line in text.splitlines() if line.startswith("  [")]
        assert tried[:1] and tried[0].startswith("  [absent_ranks] Start with the host of ranks 2-3"), \
            f"WHAT TO TRY starts with ranks 2-3's host: {tried[:2]}"


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


@pytest.mark.parametrize("scenario", CASES)
def test_scenario(scenario):
    CASES[scenario]()
