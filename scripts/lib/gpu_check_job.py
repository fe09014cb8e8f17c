#!/usr/bin/env python3
"""The one-rank PyTorch jobs of scripts/gpu-check: gpu_check_job.py MODE [options].

One process, one GPU, one rank of a world of 1 (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from
the environment), ProcessGroupNCCL with device_id (eager init). Modes:
  idle      init, one all_reduce, then wait (for `ncclwatch doctor --pid`); prints "ready"
  healthy   --steps N of a small model (matmuls, or --elementwise on the sim) with an
            all_reduce of its gradients and a loss read-back; prints the steps run and a
            checksum of the result (--no-values: not the checksum, as on the sim, whose
            kernels compute nothing)
  spin      --warmup N all_reduce + item() steps, then a kernel that spins --spin-sec on the
            compute stream (torch.cuda._sleep), the all_reduce behind it, and item(): the
            collective pends on the device and the host blocks in cudaStreamSynchronize
  graph     capture an all_reduce into a CUDA graph, replay it --replays N times with a sync
  graph-spin  the same graph with the spinning kernel captured in front of the all_reduce,
            replayed once, then torch.cuda.synchronize()
  model     --steps N of the model, timed after --warmup steps; prints "step_ms X"
Every mode ends with "done" on stdout (the spinning ones only if nobody stops them first).
"""

import argparse
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def spin_cycles(seconds):
    """torch.cuda._sleep takes GPU clock cycles: the SM clock from the device's properties."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    hz = getattr(props, "clock_rate", 0) * 1000 or 2_000_000_000  # clock_rate is in kHz
    return int(seconds * hz)


class Model(torch.nn.Module):
    """Matmuls (nn.Linear: cuBLAS) or, on the sim where cuBLAS cannot start, elementwise layers."""

    def __init__(self, width, depth, elementwise):
        super().__init__()
        self.elementwise = elementwise
        if elementwise:
            self.scales = torch.nn.ParameterList(torch.nn.Parameter(torch.ones(width)) for _ in range(depth))
        else:
            self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        if self.elementwise:
            for s in self.scales:
                x = torch.tanh(x * s)
            return x
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def train_steps(args, device, steps, timed_from=None):
    """Runs `steps` steps; returns (checksum, ms per step over the steps from `timed_from` on)."""
    torch.manual_seed(0)
    model = Model(args.width, args.depth, args.elementwise).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(args.batch, args.width, device=device)
    start = None
    loss_value = 0.0
    for step in range(steps):
        if step == timed_from:
            torch.cuda.synchronize()
            start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = model(x).float().pow(2).mean()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        loss_value = loss.item()  # the host sync of every step (cudaStreamSynchronize)
    torch.cuda.synchronize()
    ms = (time.perf_counter() - start) * 1000 / (steps - timed_from) if start is not None else 0.0
    checksum = sum(float(p.detach().double().sum()) for p in model.parameters())
    return f"{checksum:.6e} {loss_value:.6e}", ms


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["idle", "healthy", "spin", "graph", "graph-spin", "model"])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--spin-sec", type=float, default=60.0)
    ap.add_argument("--replays", type=int, default=20)
    ap.add_argument("--idle-sec", type=float, default=60.0)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--elementwise", action="store_true", help="no matmuls (the sim runs no cuBLAS)")
    ap.add_argument("--no-values", action="store_true", help="print no device values (the sim computes none)")
    args = ap.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", device_id=device, timeout=datetime.timedelta(seconds=600))
    buf = torch.ones(1 << 16, device=device)

    if args.mode == "idle":
        dist.all_reduce(buf)
        torch.cuda.synchronize()
        say("ready")
        time.sleep(args.idle_sec)
    elif args.mode == "healthy":
        checksum, _ = train_steps(args, device, args.steps)
        say(f"steps {args.steps}")
        if not args.no_values:
            say(f"checksum {checksum}")
    elif args.mode == "model":
        _, ms = train_steps(args, device, args.warmup + args.steps, timed_from=args.warmup)
        say(f"step_ms {ms:.4f}")
    elif args.mode == "spin":
        for _ in range(args.warmup):
            dist.all_reduce(buf)
            buf.sum().item()
        say("spinning")
        torch.cuda._sleep(spin_cycles(args.spin_sec))
        dist.all_reduce(buf)
        buf.sum().item()
    else:  # graph, graph-spin
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up outside the capture, as torch's docs ask
            for _ in range(3):
                dist.all_reduce(buf)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            if args.mode == "graph-spin":
                torch.cuda._sleep(spin_cycles(args.spin_sec))
            dist.all_reduce(buf)
        say("captured")
        for _ in range(1 if args.mode == "graph-spin" else args.replays):
            graph.replay()
            torch.cuda.synchronize()
        say(f"replayed sum {float(buf[:16].sum()):.6e}")
    dist.destroy_process_group()
    say("done")


if __name__ == "__main__":
    main()
