"""What the CUDA graph examples (graph_allreduce.py, graphed_callables.py) share: joining the
process group, values made on the host, and the eager check that ends them."""

import datetime
import faulthandler
import os
import signal

import torch
import torch.distributed as dist


def say(text):
    """One line to stdout in a single write, so the lines of ranks sharing a pipe never mix
    (print writes the text and its newline apart when Python runs unbuffered)."""
    os.write(1, (text + "\n").encode())


def init_rank(timeout_sec=600):
    """Joins the NCCL process group on LOCAL_RANK's GPU, with torch's collective timeout of
    `timeout_sec`; returns (device, rank, world size).

    On SIGTERM (a timeout) the Python stacks are dumped to stderr first, so a hung replay shows
    where the rank waits."""
    faulthandler.register(signal.SIGTERM, chain=True)
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device, timeout=datetime.timedelta(seconds=timeout_sec))
    return device, dist.get_rank(), dist.get_world_size()


def on_device(value, count, device):
    """`count` copies of `value`, filled on the host and copied over: kernels compute nothing on
    the sim, copies do."""
    return torch.full((count,), float(value)).to(device)


def finish(rank, world, device, count, what):
    """Ends the example: an eager all_reduce checks that the communicator is still in step with
    the replays on every rank, then the rank leaves the process group and prints
    "rank R done: N <what>s". Returns the exit code."""
    check = on_device(rank + 1, 4, device)
    dist.all_reduce(check)
    got = check.cpu().tolist()
    if got != [float(world * (world + 1) // 2)] * 4:
        say(f"rank {rank} eager all_reduce after the {what}s WRONG: {got}")
        return 1
    dist.barrier()
    dist.destroy_process_group()
    say(f"rank {rank} done: {count} {what}s")
    return 0
