#!/usr/bin/env python3
"""torch.cuda.make_graphed_callables over a function whose forward and backward each run a
collective: the forward and the backward pass are captured as two CUDA graphs, and every step
replays them (the backward one from autograd's device thread), as graphed training steps do.

Run it under torchrun, on real GPUs or on the sim:
  scripts/sim-exec $TORCH_VENV/bin/python -m torch.distributed.run --nproc-per-node 2 \\
      examples/torch/graphed_callables.py --steps 20

The function is y = all_reduce(x.clone()); its backward is dx = all_reduce(dy.clone()). Both are
copies and collectives only (kernels compute nothing on the sim), so results are checkable: at
step S rank R feeds x = R + S and dy = 2 (R + S), and every rank must get y = sum of x and
x.grad = sum of dy over the ranks. After the steps an eager all_reduce checks the communicator is
still in step with the replays.

Prints "rank R step S ok" per step and "rank R done: N steps" at the end; exits 1 on a wrong
value. On SIGTERM the Python stacks are dumped to stderr first.
"""

import argparse
import sys

import torch
import torch.distributed as dist

from graph_common import finish, init_rank, on_device, say


class AllReduceSum(torch.autograd.Function):
    """Sum over the ranks, forward and backward (the backward of a sum is a sum)."""

    @staticmethod
    def forward(ctx, x):
        y = x.clone()
        dist.all_reduce(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        g = grad.clone()
        dist.all_reduce(g)
        return g


def summed(x):
    return AllReduceSum.apply(x)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--count", type=int, default=1024, help="float32 elements per rank")
    args = parser.parse_args()
    device, rank, world = init_rank()
    # The communicator exists before the captures (make_graphed_callables warms up eagerly too).
    dist.barrier()

    sample = torch.zeros(args.count, device=device, requires_grad=True)
    graphed = torch.cuda.make_graphed_callables(summed, (sample,))

    for step in range(1, args.steps + 1):
        x = on_device(rank + step, args.count, device).requires_grad_()
        y = graphed(x)
        y.backward(on_device(2 * (rank + step), args.count, device))
        want_y = float(sum(r + step for r in range(world)))
        got_y, got_grad = y.detach().cpu(), x.grad.cpu()
        if not bool((got_y == want_y).all()) or not bool((got_grad == 2 * want_y).all()):
            say(f"rank {rank} step {step} WRONG: y {got_y[:2].tolist()} (want {want_y}), "
                f"grad {got_grad[:2].tolist()} (want {2 * want_y})")
            return 1
        say(f"rank {rank} step {step} ok")

    return finish(rank, world, device, args.steps, "step")


if __name__ == "__main__":
    sys.exit(main())
