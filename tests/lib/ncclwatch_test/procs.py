"""Processes seen through /proc: a job's process tree, processes by what they carry, start times.

One walk for every test: a job's ranks are the descendants of its launcher (scripts/launch's
ranks, torchrun's agent and workers, whatever they start); processes on simulated hosts are
found by a tag in their environment, since their pids are of another PID namespace.
"""

import os


def children(pid):
    """Direct children of pid, over all its threads (a child belongs to the thread that forked it)."""
    kids = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return kids


def descendants(pid):
    """Every descendant of pid, parents before their children."""
    found, frontier = [], [pid]
    while frontier:
        kids = children(frontier.pop(0))
        found += kids
        frontier += kids
    return found


def _read(pid, name):
    with open(f"/proc/{pid}/{name}", "rb") as f:
        return f.read()


def environ_of(pid):
    """{bytes: bytes} of pid's initial environment; {} when it is gone or unreadable."""
    try:
        raw = _read(pid, "environ")
    except OSError:
        return {}
    return dict(kv.split(b"=", 1) for kv in raw.split(b"\0") if b"=" in kv)


def all_pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def with_cmdline(marker):
    """Pids whose command line contains marker (a str)."""
    found = []
    for pid in all_pids():
        try:
            if marker.encode() in _read(pid, "cmdline"):
                found.append(pid)
        except OSError:
            pass
    return found


def with_environ(**wanted):
    """{pid: environ} of the processes whose environment has every wanted NAME=value (str)."""
    found = {}
    for pid in all_pids():
        env = environ_of(pid)
        if env and all(env.get(k.encode()) == str(v).encode() for k, v in wanted.items()):
            found[pid] = env
    return found


def maps_library(pid, name):
    """Whether pid has a library whose path contains name mapped; False when it is gone."""
    try:
        return name.encode() in _read(pid, "maps")
    except OSError:
        return False


def _stat_fields(pid):
    """Fields of /proc/PID/stat after the command name (field 3, the state, first)."""
    return _read(pid, "stat").decode().rsplit(")", 1)[1].split()


def start_ticks(pid):
    """pid's start time in clock ticks since boot (stat field 22): with the pid, names one process."""
    return int(_stat_fields(pid)[19])


def is_gone(pid):
    """True when pid has exited (a zombie not yet reaped counts as gone)."""
    try:
        return _stat_fields(pid)[0] == "Z"
    except OSError:
        return True
