"""Checks of the dumps of a rank that left its job (exit evidence): exit_test.py, torch_scenarios.py."""


def split_dumps(dumps, culprit):
    """(the other ranks' dumps, the culprit's one dump or None)."""
    theirs = [d for d in dumps if d["process"]["global_rank"] == culprit]
    assert len(theirs) == 1, f"one dump of rank {culprit} (its own or on its behalf), got {len(theirs)}"
    return [d for d in dumps if d["process"]["global_rank"] != culprit], theirs[0]


def check_gone_rank(d, rank, live_ranks, recorded, status=None, signal=None, left=None, completed=None,
                    enqueued=None, may_dump_itself=False):
    """The dump of a rank that left. Written on its behalf by a live rank once it is gone; a rank
    that leaves cleanly may still be alive (interpreter shutdown) when the incident is declared,
    and then dumps itself, its stacks at exit included, with its communicator `left`."""
    p = d["process"]
    assert d["version"] >= 2, f"schema version {d['version']}"
    world = d["comms"][0] if d["comms"] else None
    assert world is not None, f"rank {rank}'s communicator is in its dump"
    if left is not None:
        assert world["left"] == left, f"comm left {world['left']}, expected {left}"
    if completed is not None:
        assert world["last_completed_seq"] == completed, \
            f"rank {rank} completed #{world['last_completed_seq']}, expected #{completed}"
    if enqueued is not None:
        assert world["last_enqueued_seq"] == enqueued, \
            f"rank {rank} issued #{world['last_enqueued_seq']}, expected #{enqueued}"
    assert world["last_completed_seq"] <= world["last_enqueued_seq"], "never more complete than issued"
    assert world["records"], "its last records are kept"
    if "written_by" not in d:
        assert may_dump_itself, f"rank {rank} had left, yet dumped as a live process: {p}"
        assert p.get("alive", True) and d["native_stacks"]["threads"], "its own dump, with its stacks at exit"
        return
    assert p["alive"] is False, "the gone rank's dump says alive: false"
    assert p["exit"]["recorded"] == recorded, f"exit recorded {p['exit']['recorded']}, expected {recorded}"
    if status is not None:
        assert p["exit"]["status"] == status and p["exit"]["signal"] == 0, f"exit status {p['exit']}"
    if signal is not None:
        assert p["exit"]["signal"] == signal, f"exit signal {p['exit']['signal']}, expected {signal}"
    if recorded:
        assert p["exit"]["exit_ns"] > 0, "exit time recorded"
    assert d["written_by"]["global_rank"] in live_ranks, f"written by a live rank: {d['written_by']}"
    assert not d["native_stacks"]["threads"], "no stacks of a gone process"
