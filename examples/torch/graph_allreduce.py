#!/usr/bin/env python3
"""dist.all_reduce captured in a CUDA graph (torch.cuda.CUDAGraph) and replayed, the way
decode loops and graphed training steps run their collectives.

Run it under torchrun, on real GPUs or on the sim:
  scripts/sim-exec $TORCH_VENV/bin/python -m torch.distributed.run --nproc-per-node 2 \\
      examples/torch/graph_allreduce.py --replays 30

Each rank captures, on a side stream, one graph of two ops: a device-to-device copy of its input
buffer into the output buffer, then an all_reduce (sum) of the output buffer. Before each replay
it writes rank + 1 + replay into the input (a host-to-device copy), and after it reads the output
back and checks it is the sum over the ranks: the copy and the collective ran again, in order, on
every rank. After the replays an eager all_reduce checks that the communicator is still in step.
Kernels compute nothing on the sim, so the graph holds only copies and the collective.

Prints "rank R replay K ok" after each checked replay and "rank R done: N replays" at the end;
exits 1 on a wrong value. On SIGTERM (a timeout) the Python stacks are dumped to stderr first,
so a replay that hangs (NCCLSIM_FAULT=hang:replay=K) shows where the rank waits.

Faults of the job itself, for the watcher's tests (tests/torch/graph_watch_scenarios.py):
  --stall-rank R --stall-replay K [--stall-sec S]  rank R waits S s for its next request before
                                                   replay K (a decode server whose rank 1 is idle)
  --mismatch-rank R                                rank R captures an all_reduce of half the buffer
  --stop-flag                                      after each replay an eager all_reduce of a
                                                   stop flag, as a decode loop asks whether all
                                                   ranks are done (torch watches it, not the replay)
  --pg-timeout-sec S                               torch's collective timeout (default 600)
"""

import argparse
import sys
import time

import torch
import torch.distributed as dist

from graph_common import finish, init_rank, on_device, say


def wait_for_next_request(seconds):
    """The rank has no request to serve yet: its peers launch the next replay without it."""
    time.sleep(seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=30)
    parser.add_argument("--count", type=int, default=4096, help="float32 elements per rank")
    parser.add_argument("--stall-rank", type=int, default=-1)
    parser.add_argument("--stall-replay", type=int, default=0)
    parser.add_argument("--stall-sec", type=float, default=3600)
    parser.add_argument("--mismatch-rank", type=int, default=-1)
    parser.add_argument("--stop-flag", action="store_true")
    parser.add_argument("--pg-timeout-sec", type=float, default=600)
    args = parser.parse_args()
    device, rank, world = init_rank(args.pg_timeout_sec)
    stop = torch.zeros(1, device=device)

    static_in = torch.zeros(args.count, device=device)
    static_out = torch.zeros(args.count, device=device)
    # Warm up on a side stream, as torch's CUDA graph notes advise: the communicator is created
    # by the first collective, which must not happen during capture.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        static_out.copy_(static_in)
        dist.all_reduce(static_out)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out.copy_(static_in)
        # A rank that captures another op than its peers (--mismatch-rank): every replay mismatches.
        dist.all_reduce(static_out[: args.count // 2] if rank == args.mismatch_rank else static_out)

    for replay in range(1, args.replays + 1):
        if rank == args.stall_rank and replay == args.stall_replay:
            wait_for_next_request(args.stall_sec)
        static_in.copy_(on_device(rank + 1 + replay, args.count, device))
        graph.replay()
        if args.stop_flag:
            dist.all_reduce(stop)  # eager: queued behind the replay's collective on the communicator
        got = static_out.cpu()
        want = float(sum(r + 1 + replay for r in range(world)))
        if not bool((got == want).all()):
            say(f"rank {rank} replay {replay} WRONG: got {got[:4].tolist()}..., want {want}")
            return 1
        say(f"rank {rank} replay {replay} ok")

    return finish(rank, world, device, args.replays, "replay")


if __name__ == "__main__":
    sys.exit(main())
