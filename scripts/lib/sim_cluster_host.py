"""The first process of one simulated host of scripts/sim-cluster (pid 1 of the host's PID namespace).

scripts/sim-cluster starts it under `unshare -m -u -p -f --mount-proc -T`, so it already runs in the
host's own mount, UTS, PID and time namespaces. It then:
  - mounts a private tmpfs on /dev/shm (a host's shared memory is its own);
  - sets the hostname to host<K>;
  - bind-mounts DIR/host<K> over DIR for every --local DIR (a local disk, readable outside afterwards);
  - starts the command, forwards SIGINT, SIGTERM and SIGHUP to its process group, reaps every orphan
    (the job of a PID namespace's init), and exits with the command's status (signal S counts as 128+S).
When it exits, the kernel SIGKILLs whatever is left in the namespace, so a host never leaves strays.

Usage (internal): sim_cluster_host.py --index K [--local DIR]... -- CMD [ARGS...]
"""

import ctypes
import os
import signal
import sys

MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_BIND = 0x1000
MS_REC = 0x4000

_libc = ctypes.CDLL(None, use_errno=True)


def fail(message):
    print(f"sim-cluster: {message}", file=sys.stderr)
    sys.exit(127)


def mount(source, target, fstype, flags, data):
    rc = _libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None,
                     ctypes.c_ulong(flags), data.encode() if data else None)
    if rc != 0:
        err = ctypes.get_errno()
        fail(f"mount {source} on {target}: {os.strerror(err)}")


def set_hostname(name):
    raw = name.encode()
    if _libc.sethostname(raw, ctypes.c_size_t(len(raw))) != 0:
        fail(f"sethostname {name}: {os.strerror(ctypes.get_errno())}")


def parse(argv):
    index, local = None, []
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--index":
            index = int(argv[i + 1])
        elif argv[i] == "--local":
            local.append(argv[i + 1])
        else:
            fail(f"internal: unknown host argument {argv[i]!r}")
        i += 2
    if index is None or i >= len(argv) - 1:
        fail("internal: usage: sim_cluster_host.py --index K [--local DIR]... -- CMD...")
    return index, local, argv[i + 1:]


def status_of(wait_status):
    if os.WIFSIGNALED(wait_status):
        return 128 + os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status)


def run(cmd):
    """Runs cmd as a child, reaping every process re-parented to us; returns cmd's status."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            os.execvp(cmd[0], cmd)
        except OSError as e:
            print(f"sim-cluster: cannot run {cmd[0]!r} on {os.uname().nodename}: {e.strerror}",
                  file=sys.stderr)
        os._exit(127)

    def forward(sig, _frame):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    while True:
        try:
            done, wait_status = os.wait()
        except ChildProcessError:
            return 127
        except InterruptedError:
            continue
        if done == pid:
            return status_of(wait_status)


def main(argv):
    index, local, cmd = parse(argv)
    host = f"host{index}"
    # A fresh tmpfs as on a real host; mode 1777 as /dev/shm always has.
    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    set_hostname(host)
    for d in local:
        mount(os.path.join(d, host), d, None, MS_BIND | MS_REC, None)
    return run(cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
