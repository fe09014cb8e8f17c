#!/usr/bin/env python3
"""Writes the hand-made seeds of fuzz/corpus: make_seeds.py CORPUS_DIR.

corpus/dump_reader/straggler_rank{0,1}.json and corpus/trigger_file/straggler.trigger are real
output of a straggler job (ddp_loop over the sim, 2 ranks); this script derives edge cases from
them and writes the text seeds of the other targets. corpus/shm_segment comes from
make_shm_seeds (a real SegmentWriter). scripts/fuzz --make-seeds runs both.
"""
import copy
import json
import os
import sys


def write(path, data):
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def dump_seeds(d):
    real = json.load(open(os.path.join(d, "straggler_rank0.json")))
    minimal = {k: real[k] for k in ("schema", "version")}
    write(os.path.join(d, "schema_only.json"), json.dumps(minimal))
    empty = copy.deepcopy(real)
    for key, value in empty.items():
        if isinstance(value, list):
            empty[key] = []
    write(os.path.join(d, "empty_lists.json"), json.dumps(empty))
    extreme = copy.deepcopy(real)
    for comm in extreme.get("comms", []):
        comm.update(nranks=2**31 - 1, rank=-2**31, last_completed_seq=2**64 - 1, init_done_ns=-1)
        for r in comm.get("records", []):
            r.update(count=2**64 - 1, seq=0, enqueue_ns=2**63, complete_ns=0, stream="0x" + "f" * 16)
    write(os.path.join(d, "extreme_numbers.json"), json.dumps(extreme))
    wrong = copy.deepcopy(real)
    for key in list(wrong):
        if key not in ("schema", "version"):
            wrong[key] = "not a " + type(wrong[key]).__name__
    write(os.path.join(d, "wrong_types.json"), json.dumps(wrong))
    newer = dict(real, version=real["version"] + 1)
    write(os.path.join(d, "newer_version.json"), json.dumps(newer))
    text = json.dumps(real)
    write(os.path.join(d, "truncated.json"), text[: len(text) // 2])
    write(os.path.join(d, "foreign.json"), '{"schema": "other.tool", "version": 1}')
    write(os.path.join(d, "escapes.json"),
          json.dumps(dict(real, host="\u001b[31mred\u001b]0;title\u0007\n\u0000x")))
    write(os.path.join(d, "empty"), b"")


def trigger_seeds(d):
    write(os.path.join(d, "minimal.trigger"), "ncclwatch.trigger 1\nincident=x\n")
    write(os.path.join(d, "no_header.trigger"), "incident=x\nkind=hang\n")
    write(os.path.join(d, "odd_values.trigger"),
          "ncclwatch.trigger 1\nincident=a=b\ncomm=zz\nseq=-1\nculprits=1,,x,99999999999,-3\n"
          "others=\npartial=2\npid=99999999999\nsummary=\nunknown=1\nno equals sign\n")


def fault_seeds(d):
    for name, text in {
        "hang_seq": "hang:seq=5,rank=1",
        "init_die": "die:seq=init,rank=0,comm=1",
        "slow_and_error": "slow:seq=3,ms=200;error:seq=7,comm=0",
        "bad_kind": "stall:seq=1",
        "slow_without_ms": "slow:seq=1",
        "huge_number": "hang:seq=99999999999999999999",
        "trailing_separators": "hang:seq=1,;",
        "empty": "",
    }.items():
        write(os.path.join(d, name), text)


def env_seeds(d):
    for name, text in {
        "defaults": "",
        "tuned": "NCCLWATCH_STALL_SEC=2.5\nNCCLWATCH_POLL_MS=200\nNCCLWATCH_LONE_RANK_FACTOR=3\n"
                 "NCCLWATCH_ADAPTIVE=1\nNCCLWATCH_RING=4096\nNCCLWATCH_JOB_ID=job-1\nRANK=3\nLOCAL_RANK=1\n"
                 "WORLD_SIZE=8\n",
        "malformed": "NCCLWATCH_STALL_SEC=-1\nNCCLWATCH_POLL_MS=abc\nNCCLWATCH_LONE_RANK_FACTOR=0.5\n"
                     "NCCLWATCH_ADAPTIVE=yes\nNCCLWATCH_RING=0\nRANK=-4\n",
        "huge": "NCCLWATCH_STALL_SEC=1e300\nNCCLWATCH_POLL_MS=1e20\nNCCLWATCH_LONE_RANK_FACTOR=1e308\n"
                "NCCLWATCH_RING=18446744073709551615\nSLURM_PROCID=2147483648\n",
        "tiny": "NCCLWATCH_STALL_SEC=1e-300\nNCCLWATCH_POLL_MS=4.9e-324\n",
        "slurm_job": "SLURM_JOB_ID=12345/../../etc\nSLURM_PROCID=0\nSLURM_LOCALID=0\nSLURM_NTASKS=2\n",
        "master_addr": "MASTER_ADDR=10.0.0.1\nMASTER_PORT=29500\nOMPI_COMM_WORLD_RANK=1\n",
        "long_job_id": "TORCHELASTIC_RUN_ID=" + "x" * 300 + "\n",
    }.items():
        write(os.path.join(d, name), text)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_seeds.py CORPUS_DIR")
    root = sys.argv[1]
    for target, make in (("dump_reader", dump_seeds), ("trigger_file", trigger_seeds),
                         ("fault_spec", fault_seeds), ("env", env_seeds)):
        os.makedirs(os.path.join(root, target), exist_ok=True)
        make(os.path.join(root, target))


if __name__ == "__main__":
    main()
