#!/usr/bin/env python3
"""One CUDA graph of several collectives on two communicators, replayed: the world group's
all_reduce and broadcast, and an all_reduce on a second process group over the same ranks (a
communicator of its own, as a tensor-parallel group is), captured together in one
torch.cuda.CUDAGraph.

Run it under torchrun, on real GPUs or on the sim:
  scripts/sim-exec $TORCH_VENV/bin/python -m torch.distributed.run --nproc-per-node 2 \\
      examples/torch/graph_two_comms.py --replays 20

Before replay K rank R writes R + K into `a` and 10 (R + K) into `b`; the graph sums `a` over the
world, broadcasts it from rank 0 into `c`, and sums `b` over the second group. After each replay
every rank checks a = c = sum(R + K) and b = 10 sum(R + K), and prints "rank R replay K ok".
With --hold-file P it then waits until P exists (so that `ncclwatch status` reads the replays of
a live job), checks both communicators once more eagerly, and prints "rank R done: N replays".
"""

import argparse
import os
import sys
import time

import torch
import torch.distributed as dist

from graph_common import finish, init_rank, on_device, say


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=20)
    parser.add_argument("--count", type=int, default=1024, help="float32 elements per rank")
    parser.add_argument("--hold-file", default="")
    args = parser.parse_args()
    device, rank, world = init_rank()
    second = dist.new_group(list(range(world)))

    a = torch.zeros(args.count, device=device)
    b = torch.zeros(args.count, device=device)
    c = torch.zeros(args.count, device=device)
    # Both communicators exist before the capture: each group's first collective creates it.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        dist.all_reduce(a)
        dist.broadcast(c, src=0)
        dist.all_reduce(b, group=second)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        dist.all_reduce(a)
        c.copy_(a)
        dist.broadcast(c, src=0)
        dist.all_reduce(b, group=second)

    for replay in range(1, args.replays + 1):
        a.copy_(on_device(rank + replay, args.count, device))
        b.copy_(on_device(10 * (rank + replay), args.count, device))
        graph.replay()
        want = float(sum(r + replay for r in range(world)))
        got_a, got_b, got_c = a.cpu(), b.cpu(), c.cpu()
        if not (bool((got_a == want).all()) and bool((got_c == want).all()) and bool((got_b == 10 * want).all())):
            say(f"rank {rank} replay {replay} WRONG: a {got_a[:2].tolist()} c {got_c[:2].tolist()} "
                f"b {got_b[:2].tolist()}, want {want} and {10 * want}")
            return 1
        say(f"rank {rank} replay {replay} ok")

    if args.hold_file:
        say(f"rank {rank} holding")
        while not os.path.exists(args.hold_file):
            time.sleep(0.1)
    check = on_device(rank + 1, 4, device)
    dist.all_reduce(check, group=second)
    if check.cpu().tolist() != [float(world * (world + 1) // 2)] * 4:
        say(f"rank {rank} eager all_reduce on the second group WRONG: {check.cpu().tolist()}")
        return 1
    return finish(rank, world, device, args.replays, "replay")


if __name__ == "__main__":
    sys.exit(main())
