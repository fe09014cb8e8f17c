#!/usr/bin/env python3
"""A two-stage pipeline written the way pipeline schedules are: torchrun, ProcessGroupNCCL, and
dist.send / dist.recv (dist.isend / dist.irecv for micro-batches in flight) between the stages.

Each step, stage 0 sends --micro-batches activations to stage 1, and stage 1 sends as many
gradients back; then each stage reads its loss (the host waits for the step).

Run it under torchrun, on real GPUs or on the sim:
  scripts/sim-exec build/bin/ncclwatch run --stall 5 -- \\
      $TORCH_VENV/bin/python -m torch.distributed.run --nproc-per-node 2 examples/torch/pipeline.py

Planted faults, for ncclwatch's tests (all off by default):
  --stall-rank R --stall-step S
      stage R stalls in Python before its sends at step S (a slow data loader, a host-side
      hiccup): its peer waits in a Recv; the stage that did not send is the culprit.
  --recv-first-step S
      at step S stage 0 receives the gradients before it sends the activations, while stage 1
      receives first as always: both stages receive first, a schedule bug that deadlocks.
Prints one line per rank at the end: "rank R done: S steps".
"""

import argparse
import os
import sys
import time

import torch
import torch.distributed as dist


def say(line):
    sys.stdout.write(line + "\n")  # one write per line: the ranks share torchrun's stdout
    sys.stdout.flush()


def wait_for_the_next_batch_from_storage():
    """Where a stage stalls before its send (the stack a user would see)."""
    while True:
        time.sleep(0.05)


def send_all(tensors, peer):
    if len(tensors) == 1:
        dist.send(tensors[0], peer)
        return
    for work in [dist.isend(t, peer) for t in tensors]:
        work.wait()


def recv_all(tensors, peer):
    if len(tensors) == 1:
        dist.recv(tensors[0], peer)
        return
    for work in [dist.irecv(t, peer) for t in tensors]:
        work.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--micro-batches", type=int, default=1)
    parser.add_argument("--stall-rank", type=int, default=-1)
    parser.add_argument("--stall-step", type=int, default=-1)
    parser.add_argument("--recv-first-step", type=int, default=-1)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    rank = dist.get_rank()
    if dist.get_world_size() != 2:
        raise SystemExit("pipeline.py runs two stages: --nproc-per-node 2")
    peer = 1 - rank
    mb = args.micro_batches
    activations = [torch.zeros(args.width, device=device) for _ in range(mb)]
    grads = [torch.zeros(args.width, device=device) for _ in range(mb)]
    weight = torch.ones(args.width, device=device)
    for step in range(args.steps):
        if rank == args.stall_rank and step == args.stall_step:
            say(f"stall onset: rank {rank} step {step} wall {time.time():.6f}")
            wait_for_the_next_batch_from_storage()
        if rank == 0:
            for m in range(mb):
                activations[m] = torch.tanh(weight * (step + m))
            if step == args.recv_first_step:
                recv_all(grads, peer)  # the bug: stage 1 receives first too
                send_all(activations, peer)
            else:
                send_all(activations, peer)
                recv_all(grads, peer)
            loss = sum(g.sum() for g in grads)
        else:
            recv_all(activations, peer)
            for m in range(mb):
                grads[m] = activations[m] * 2
            send_all(grads, peer)
            loss = sum(a.sum() for a in activations)
        loss.item()  # the host waits for the step, as a training loop's logging does
    dist.barrier()
    say(f"rank {rank} done: {args.steps} steps")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
