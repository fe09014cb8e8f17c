#!/usr/bin/env python3
"""Grammar and names in every generated text: pytest wording_test.py::test_scenario[NAME].

crafted: the dump sets of wording_job (one culprit and two, one dump, a mismatch with fp8,
custom and unknown datatypes, async errors, a gone rank). sim_straggler: a real 4-rank
straggler on the sim, through the preload and the watchdog (scenario_test.py's harness).
sim_pipeline_stall: a 3-stage pipeline whose first stage stalls before its sends (P2P wording).
Each set's dump texts (*.txt), `analyze`, `analyze --json` and `trace` must break none of the
rules of wording_rules.py, and print each hex number in one form only.
"""

import glob
import json
import os
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import wording_rules  # noqa: E402
from ncclwatch_test.paths import CLI, SOURCE  # noqa: E402

# Every rule violation of the running scenario, so that one run names them all: test_scenario
# asserts there is none. The sim harness's own checks assert directly.
PROBLEMS = []


def fail(what):
    PROBLEMS.append(what)


def run(args):
    r = subprocess.run([CLI] + args, capture_output=True, text=True, timeout=120)
    if r.returncode not in (0, 3):  # 3: the dumps show a hang
        fail(f"ncclwatch {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()[:300]}")
    return r.stdout


def check_set(name, dump_dir, expect=()):
    """Every output of one dump set obeys the rules; `expect` lists phrases the text must hold."""
    texts = {}
    for path in sorted(glob.glob(os.path.join(dump_dir, "*.txt"))):
        texts[f"{name}/{os.path.basename(path)}"] = open(path, errors="replace").read()
    if not texts:
        fail(f"{name}: no dump texts in {dump_dir}")
    dumps = sorted(glob.glob(os.path.join(dump_dir, "*.json")))
    if not dumps:
        fail(f"{name}: no dump JSON in {dump_dir}")
    for path in dumps:
        for p in wording_rules.dump_json_problems(json.load(open(path)), f"{name}/{os.path.basename(path)}"):
            fail(p)
    texts[f"{name}: analyze"] = run(["analyze", dump_dir])
    for where, text in texts.items():
        for p in wording_rules.problems(text, where):
            fail(p)
    for p in wording_rules.hex_forms(texts):
        fail(f"{name}: {p}")
    try:
        report = json.loads(run(["analyze", dump_dir, "--json"]))
        for p in wording_rules.analysis_json_problems(report):
            fail(f"{name}: {p}")
    except ValueError as e:
        fail(f"{name}: analyze --json is not JSON: {e}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "trace.json")
        run(["trace", dump_dir, "-o", out])
        try:
            for p in wording_rules.trace_problems(json.load(open(out))):
                fail(f"{name}: {p}")
        except (OSError, ValueError) as e:
            fail(f"{name}: trace output unreadable: {e}")
    everything = "\n".join(texts.values())
    for phrase in expect:
        if phrase not in everything:
            fail(f"{name}: no {phrase!r} in its texts")
    print(f"{name}: {len(texts)} texts checked")


# Lines that break the rules, and their kind: each must break a rule (else the rules prove nothing).
BAD_LINES = [
    "straggler on comm 0xfb1: rank 1 have not joined #43 Broadcast",
    "ranks 0,2 waits in #53",
    "rank 0 wait in #53",
    "rank 1 left no dump and are not known to have joined it",
    "  read 1 dumps from 1 host: vm",
    "  1 culprit(s) left no dump, so no stacks",
    "  #3 AllReduce count=1024 dtype=7 redop=0 root=-1 peer=-1 stream=0x0 enqueue=11797585157739",
    "AllReduce(count=1024, datatype=7, redop=0, root=-1)",
    "thread 812 blocked since 11797631114999 ns on stream 0x0",
    "versions: nvidia driver none, cuda driver 13000, cuda runtime 13000, nccl 23203",
    "comm 0x1 rank 0/2 async_error 6",
    "incident x at 2026-11-26T02:38:39Z (mono 11797585157739 ns)",
]
GOOD_LINES = [
    "straggler on comm 0xfb1: rank 1 has not joined #43 Broadcast; ranks 0,2-3 joined it 5.0s ago",
    "  read 1 dump from 1 host: vm; missing ranks: -",
    "  #3 AllReduce count=1024 datatype=float32 redop=sum root=- peer=- on default stream, enqueued 5.0s ago",
    "versions: nvidia driver 535.154.05, cuda driver 13.0, cuda runtime 13.0, nccl 2.28.9, kernel 6.1.0",
]

# Dump JSON fragments with an NCCL number and no name beside it (a number alone is not readable).
GOOD_RECORD = {"seq": 3, "op": "AllReduce", "datatype": 7, "datatype_name": "float32", "redop": 0, "redop_name": "sum"}
GOOD_DUMP = {"environment": {"cuda_driver_version": 13000, "cuda_driver_version_text": "13.0",
                             "cuda_runtime_version": 13000, "cuda_runtime_version_text": "13.0",
                             "nccl_version": 22809, "nccl_version_text": "2.28.9"},
             "comms": [{"comm": "0x1", "async_error": 0, "async_error_name": "ncclSuccess",
                        "records": [GOOD_RECORD]}]}


def _without(record_key, comm_key=None, env_key=None, value=None):
    dump = json.loads(json.dumps(GOOD_DUMP))
    for obj, key in ((dump["comms"][0]["records"][0], record_key), (dump["comms"][0], comm_key),
                     (dump["environment"], env_key)):
        if key is not None:
            if value is None:
                del obj[key]
            else:
                obj[key] = value
    return dump


BAD_DUMPS = [_without("datatype_name"), _without("redop_name"), _without("datatype_name", value="7"),
             _without(None, comm_key="async_error_name"), _without(None, env_key="nccl_version_text")]


def rules_bite():
    for line in BAD_LINES:
        if not wording_rules.problems(line):
            fail(f"the rules accept a line they must reject: {line!r}")
    for line in GOOD_LINES:
        for p in wording_rules.problems(line):
            fail(f"the rules reject a correct line: {p}")
    if not wording_rules.hex_forms({"a": "comm 0xfb1dd03142a6399", "b": "comm 0x0fb1dd03142a6399"}):
        fail("the rules accept one hash in two hex forms")
    for bad in BAD_DUMPS:
        if not wording_rules.dump_json_problems(bad):
            fail(f"the rules accept a dump JSON with a number and no name: {json.dumps(bad)}")
    for p in wording_rules.dump_json_problems(GOOD_DUMP):
        fail(f"the rules reject a correct dump JSON: {p}")


def crafted():
    rules_bite()
    job = os.path.join(os.environ["NCCLWATCH_BUILD_DIR"], "bin", "wording_job")
    with tempfile.TemporaryDirectory(prefix="ncclwatch-wording-") as tmp:
        subprocess.run([job, tmp], check=True)
        # Phrases that prove the rules had something to bite on (a rule over empty text passes).
        check_set("one_culprit", os.path.join(tmp, "one_culprit"),
                  ["rank 1 has not joined #3", "ranks 0,2-3 joined #3", "read 4 dumps from 1 host",
                   "on default stream", "blocked in cudaStreamSynchronize (default stream) for 5.3s",
                   "nccl 2.28.9", "cuda runtime 13.0", "culprit: rank 1", "async error ncclSuccess",
                   "last progress"])
        check_set("two_culprits", os.path.join(tmp, "two_culprits"),
                  ["ranks 1-2 have not joined #3", "culprits: ranks 1-2"])
        check_set("mismatch", os.path.join(tmp, "mismatch"),
                  ["datatype=bfloat16", "datatype=float8e4m3", "datatype=datatype(42)", "redop=custom(5)",
                   "redop=avg", "ncclRemoteError"])
        check_set("one_dump", os.path.join(tmp, "one_dump"),
                  ["read 1 dump from 1 host", "rank 1 left no dump and is not known to have joined it",
                   "rank 0 waits in #3", "async error 12", "root=0"])
        check_set("rank_exited", os.path.join(tmp, "rank_exited"),
                  ["rank 3 left while ranks 0-2 wait in #3", "exited with status 1, 2.0s ago"])


def sim_straggler():
    import ncclwatch_test.sim_job as wd
    step = 3
    job = wd.run_scenario("wording", 4, ["--tp", "1", "--straggler-rank", "2", "--straggler-step", str(step),
                                         "--straggler-sec", "60"], expect_dumps=4)
    try:
        seq = wd.grad_allreduce_seq(step)
        check_set("sim_straggler", job.dump_dir,
                  [f"rank 2 has not joined #{seq} AllReduce", "datatype=float32", "redop=sum", "nccl 2.",
                   "waiting in #", "ago"])
    finally:
        job.cleanup()


def sim_pipeline_stall():
    sys.path.insert(0, os.path.join(SOURCE, "tests/p2p"))
    import p2p_scenarios as p2p
    # p2p_scenarios.py's pipeline_stall: stage 0 stalls before its sends, stage 1 waits in a Recv.
    job = p2p.run("wording_p2p", 3, ["--pattern", "pipeline", "--micro-batches", "4", "--stall-rank", "0",
                                      "--bug-step", "5"], expect_dumps=3)
    try:
        check_set("sim_pipeline_stall", job.dump_dir,
                  ["rank 0 has not posted", "rank 1: waits in Recv #21 from rank 0 (count=", "datatype=float32"])
    finally:
        job.cleanup()


SCENARIOS = {"crafted": crafted, "sim_straggler": sim_straggler, "sim_pipeline_stall": sim_pipeline_stall}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario):
    SCENARIOS[scenario]()
    assert not PROBLEMS, "\n".join(PROBLEMS)
