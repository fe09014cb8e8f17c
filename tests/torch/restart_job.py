#!/usr/bin/env python3
"""A torchrun worker for restart and re-initialisation scenarios (restart_scenarios.py).

Every line it prints that starts with "T " is a timing mark, "T <event> rank R attempt A wall W",
with W the wall clock (time.time()), so that marks of different processes compare:
  start        the interpreter is up (before import torch)
  pg_ready     init_process_group returned (the communicator is initialised: device_id given)
  first_coll   the first all_reduce completed on the host (torch.cuda.synchronize)
  fail         rank --fail-rank raises at step --fail-step (attempt 0 only)
  destroyed    a re-initialisation round destroyed the group (--rounds)
  round        a re-initialisation round's group is ready (--rounds)

Modes:
  --fail-rank R --fail-step S
      on attempt 0 (TORCHELASTIC_RESTART_COUNT), rank R raises at step S: torchrun stops the
      others and, with --max-restarts, starts attempt 1, which runs to the end.
  --stall-rank R --stall-step S --stall-sec T
      on attempts after the first, rank R stalls T s in Python (load_next_shard) at step S: its
      peers wait in the next collective, a straggler.
  --store-per-attempt
      init_process_group on torchrun's store under a prefix of the attempt: attempt 1 never
      reads a key attempt 0 left (the workaround of docs/torchrun-restart-race.md).
  --restart-root-delay-sec D
      on attempts after the first, rank 0 (the root) waits D s before init_process_group, so that
      rank 1 reads the unique id attempt 0 left under the same key: a certain stale id.
  --rounds K [--root-delay-sec D]
      destroys and re-creates the default group K times in the same processes, rank 0 waiting
      D s before each re-creation: rank 1 reads the id the previous group left.
  --probe-key
      before and after init_process_group, reads the default group's unique-id key from
      torchrun's store (a client of MASTER_ADDR:MASTER_PORT, as torch's env:// rendezvous
      makes) and prints "T probe ... key <key> set <0|1> value <its first 8 bytes>".
"""

import argparse
import datetime
import os
import sys
import time

START = time.time()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

# Where torch 2.15's ProcessGroupNCCL2 publishes the default group's unique id, as its TCPStore
# client sends it (with the client's leading "/"): init_process_group's PrefixStore("default_pg"),
# the group name "0", the device "cuda", then "0/nccl_storekey_0". PrefixStore joins with "/".
UNIQUE_ID_KEY = "default_pg/0//cuda//0/nccl_storekey_0"


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def mark(event, rank, attempt, extra=""):
    say(f"T {event} rank {rank} attempt {attempt} wall {time.time():.6f}{extra}")


def probe_key(rank, attempt):
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                          timeout=datetime.timedelta(seconds=30))
    present = store.check([UNIQUE_ID_KEY])
    value = bytes(store.get(UNIQUE_ID_KEY)[:8]).hex() if present else "-"
    mark("probe", rank, attempt, f" key {UNIQUE_ID_KEY} set {int(present)} value {value}")


def attempt_store(attempt):
    """torchrun's store under a prefix of this attempt: no key of an earlier attempt is read."""
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                          timeout=datetime.timedelta(seconds=60))
    return dist.PrefixStore(f"attempt{attempt}", store)


def load_next_shard(seconds):
    """Where a worker waits for its input (a slow filesystem, a stuck reader)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.05)


def all_reduce_once(device):
    t = torch.ones(16, device=device)
    dist.all_reduce(t)
    torch.cuda.synchronize(device)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--fail-rank", type=int, default=-1)
    parser.add_argument("--fail-step", type=int, default=-1)
    parser.add_argument("--rounds", type=int, default=0)
    parser.add_argument("--root-delay-sec", type=float, default=0.0)
    parser.add_argument("--probe-key", action="store_true")
    parser.add_argument("--restart-root-delay-sec", type=float, default=0.0)
    parser.add_argument("--store-per-attempt", action="store_true")
    parser.add_argument("--stall-rank", type=int, default=-1)
    parser.add_argument("--stall-step", type=int, default=-1)
    parser.add_argument("--stall-sec", type=float, default=0.0)
    args = parser.parse_args()

    rank = int(os.environ["RANK"])
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    say(f"T start rank {rank} attempt {attempt} wall {START:.6f} pid {os.getpid()}")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    if args.probe_key:
        probe_key(rank, attempt)
    if attempt > 0 and rank == 0 and args.restart_root_delay_sec > 0:
        time.sleep(args.restart_root_delay_sec)
    if args.store_per_attempt:
        dist.init_process_group("nccl", device_id=device, store=attempt_store(attempt), rank=rank,
                                world_size=int(os.environ["WORLD_SIZE"]))
    else:
        dist.init_process_group("nccl", device_id=device)
    mark("pg_ready", rank, attempt)
    if args.probe_key:
        probe_key(rank, attempt)
    all_reduce_once(device)
    mark("first_coll", rank, attempt)
    for step in range(args.steps):
        if attempt == 0 and rank == args.fail_rank and step == args.fail_step:
            mark("fail", rank, attempt)
            raise RuntimeError(f"rank {rank}: planted failure at step {step} of attempt {attempt}")
        if attempt > 0 and rank == args.stall_rank and step == args.stall_step:
            mark("stall", rank, attempt)
            load_next_shard(args.stall_sec)
        all_reduce_once(device)
    for round_number in range(1, args.rounds + 1):
        dist.destroy_process_group()
        mark("destroyed", rank, attempt, f" {round_number}")
        if rank == 0 and args.root_delay_sec > 0:
            time.sleep(args.root_delay_sec)
        dist.init_process_group("nccl", device_id=device)
        all_reduce_once(device)
        mark("round", rank, attempt, f" {round_number}")
    dist.barrier(device_ids=[local_rank])
    say(f"rank {rank} done: attempt {attempt}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
