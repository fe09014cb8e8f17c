#!/usr/bin/env python3
"""A small PyTorch training job, written the way users write them: torchrun, ProcessGroupNCCL,
DDP (with BatchNorm and broadcast_buffers) or FSDP2 (fully_shard).

Run it under torchrun, on real GPUs or on the sim:
  scripts/sim-exec build/bin/ncclwatch run --stall 5 -- \\
      $TORCH_VENV/bin/python -m torch.distributed.run --nproc-per-node 2 examples/torch/train.py

Planted faults, for ncclwatch's tests and demo (all off by default):
  --straggler-rank R --straggler-step S --straggler-sec T
      rank R spends T s in its data loader before step S ("restoring the data-loader position
      after a resume", field report 2). The time goes to Python: RestoreDataLoaderState ->
      skip_samples_to_resume_position. With --straggler-raise it then raises (a data loader
      that gave up): the rank exits 1 and torchrun stops the others.
  --pg-timeout-sec T
      init_process_group(timeout=T): torch's own watchdog aborts a rank whose collective
      outlives T (SIGABRT), and torchrun then stops the others.
  --uneven-rank R --uneven-steps N
      uneven inputs: rank R's data runs out after N steps; it leaves the loop, destroys its
      process group and exits 0 while the others go on (what DDP's Join context manager is for).
  --extra-forward-rank R --extra-forward-step S
      after step S, rank R alone runs one more forward (a validation pass on rank 0 only); with
      broadcast_buffers that forward issues collectives the others do not (field report 5). Then
      rank R destroys its process group and exits 0.
  NCCLSIM_FAULT (the sim's own fault injection) plants transport and init hangs.

The model is elementwise (scale, shift, tanh, BatchNorm): the sim runs no kernels, and keeping
the model free of matrix multiplies keeps cuBLAS out of the job (sim/driver/README.md).
Prints one line per rank at the end: "rank R done: S steps".
"""

import argparse
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn


class ElementwiseBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(width))
        self.shift = nn.Parameter(torch.zeros(width))
        self.norm = nn.BatchNorm1d(width)

    def forward(self, x):
        return self.norm(torch.tanh(x * self.scale + self.shift))


class Net(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.blocks = nn.ModuleList(ElementwiseBlock(width) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def skip_samples_to_resume_position(seconds):
    """Where a resumed job replays its data order to reach the checkpoint's position."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.05)


def RestoreDataLoaderState(seconds):  # noqa: N802 - the name a user's stack would show
    skip_samples_to_resume_position(seconds)


def say(line):
    # One write per line: ranks share torchrun's stdout, and print() writes the text and the
    # newline separately, so two ranks' lines could run together.
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def announce_onset(rank, step):
    # The benchmarks time detection from here (wall clock, comparable with dump files' mtimes).
    say(f"straggler onset: rank {rank} step {step} wall {time.time():.6f}")


def load_batch(args, rank, step, device):
    if rank == args.straggler_rank and step == args.straggler_step:
        announce_onset(rank, step)
        RestoreDataLoaderState(args.straggler_sec)
        if args.straggler_raise:
            raise RuntimeError(f"rank {rank}: data loader state could not be restored")
    generator = torch.Generator().manual_seed(1000 * rank + step)
    return torch.randn(args.batch, args.width, generator=generator).to(device)


def wrap(model, args, device):
    if args.mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        return DistributedDataParallel(model, device_ids=[device.index], broadcast_buffers=True,
                                       bucket_cap_mb=args.bucket_mb)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    mesh = init_device_mesh("cuda", (dist.get_world_size(),))
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["ddp", "fsdp2"], default="ddp")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--bucket-mb", type=float, default=0.002,
                        help="DDP bucket size; small, so that each step issues several AllReduces")
    parser.add_argument("--straggler-rank", type=int, default=-1)
    parser.add_argument("--straggler-step", type=int, default=-1)
    parser.add_argument("--straggler-sec", type=float, default=0.0)
    parser.add_argument("--straggler-raise", action="store_true",
                        help="the straggler raises after its stall, as a data loader that gave up")
    parser.add_argument("--uneven-rank", type=int, default=-1)
    parser.add_argument("--uneven-steps", type=int, default=-1)
    parser.add_argument("--extra-forward-rank", type=int, default=-1)
    parser.add_argument("--extra-forward-step", type=int, default=-1)
    parser.add_argument("--print-every", type=int, default=0,
                        help="each rank prints 'rank R step S' every N steps (tests wait for training)")
    parser.add_argument("--pg-timeout-sec", type=float, default=0.0,
                        help="ProcessGroupNCCL timeout (default: torch's own, 10 min)")
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    timeout = {"timeout": datetime.timedelta(seconds=args.pg_timeout_sec)} if args.pg_timeout_sec > 0 else {}
    dist.init_process_group("nccl", device_id=device, **timeout)
    rank = dist.get_rank()
    # What the tests compare ncclwatch's communicator name with: torch 2.15 passes the group's
    # name as ncclConfig_t.commName.
    world = dist.group.WORLD
    say(f"rank {rank} process group: name {world.group_name} desc {getattr(world, 'group_desc', '-')}")

    torch.manual_seed(0)
    model = wrap(Net(args.width, args.depth).to(device), args, device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    steps = args.uneven_steps if rank == args.uneven_rank else args.steps
    for step in range(steps):
        x = load_batch(args, rank, step, device)
        loss = model(x).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss.item()  # the host waits for the step, as a training loop's logging does
        if args.print_every > 0 and step % args.print_every == 0:
            say(f"rank {rank} step {step}")
        if rank == args.extra_forward_rank and step == args.extra_forward_step:
            with torch.no_grad():
                model(x).square().mean().item()  # validation on this rank only
            steps = step + 1
            break
    if steps != args.steps:  # left early: no final barrier, the others are still training
        say(f"rank {rank} leaves after {steps} steps")
        dist.destroy_process_group()
        return
    dist.barrier()
    say(f"rank {rank} done: {args.steps} steps")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
