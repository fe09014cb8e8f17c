#!/usr/bin/env python3
"""A Python training rank over NCCL through ctypes, shaped like a PyTorch DDP loop.

Loads libcudart.so.13 and libnccl.so.2 with ctypes (RTLD_LOCAL, as Python extensions' libraries
are) from --lib-dir (e.g. build/sim/lib for the CPU sim), shares the ncclUniqueId through a file in
--id-dir (rank 0 writes it atomically, the others wait for it), then runs --steps steps of a
gradient AllReduce followed by a host sync (`loss.item()`). Ranks come from torchrun's
environment (RANK, LOCAL_RANK, WORLD_SIZE), e.g. `scripts/launch -n 2 -- python3 ddp_rank.py ...`.

--straggler-rank/--straggler-step/--straggler-sec make one rank stall in Python code
(restore_data_loader_state -> skip_samples_to_resume_position) before its AllReduce.
"""

import argparse
import ctypes
import os
import sys
import time

NCCL_UNIQUE_ID_BYTES = 128
NCCL_FLOAT32 = 7
NCCL_SUM = 0
CUDA_MEMCPY_HOST_TO_DEVICE = 1


class UniqueId(ctypes.Structure):
    # c_ubyte, not c_char: a c_char array reads back as bytes cut at the first NUL.
    _fields_ = [("internal", ctypes.c_ubyte * NCCL_UNIQUE_ID_BYTES)]


class Api:
    """Functions of a library loaded RTLD_LOCAL, called the way a Python extension calls them.

    An extension module linked against libnccl.so.2 (torch._C) reaches NCCL through its PLT,
    i.e. through the process's global scope first, where an LD_PRELOAD library (ncclwatch)
    sits; ctypes' own lookup on the library handle would bypass it. So a name is looked up in
    the global scope first, then in the library itself."""

    _global = ctypes.CDLL(None)

    def __init__(self, lib):
        self._lib = lib

    def __getattr__(self, name):
        try:
            fn = getattr(Api._global, name)
        except AttributeError:
            fn = getattr(self._lib, name)
        setattr(self, name, fn)
        return fn


def check(what, rc):
    if rc != 0:
        sys.exit(f"[rank {os.environ.get('RANK', '0')}] ddp_rank.py: {what} failed with {rc}")


def share_unique_id(nccl, rank, id_dir, timeout_sec=60):
    path = os.path.join(id_dir, "nccl_unique_id")
    uid = UniqueId()
    if rank == 0:
        check("ncclGetUniqueId", nccl.ncclGetUniqueId(ctypes.byref(uid)))
        tmp = f"{path}.tmp.{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(ctypes.string_at(ctypes.byref(uid), NCCL_UNIQUE_ID_BYTES))
        os.replace(tmp, path)
        return uid
    deadline = time.monotonic() + timeout_sec
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            sys.exit(f"[rank {rank}] ddp_rank.py: no unique id in {path}")
        time.sleep(0.05)
    with open(path, "rb") as f:
        data = f.read(NCCL_UNIQUE_ID_BYTES)
    if len(data) != NCCL_UNIQUE_ID_BYTES:
        sys.exit(f"[rank {rank}] ddp_rank.py: {path} holds {len(data)} bytes, not {NCCL_UNIQUE_ID_BYTES}")
    ctypes.memmove(ctypes.byref(uid), data, NCCL_UNIQUE_ID_BYTES)
    return uid


def skip_samples_to_resume_position(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.1)


def restore_data_loader_state(seconds):
    skip_samples_to_resume_position(seconds)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib-dir", required=True, help="directory of libnccl.so.2 and libcudart.so.13")
    p.add_argument("--id-dir", required=True, help="directory shared by the ranks for the unique id")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--step-ms", type=float, default=20)
    p.add_argument("--count", type=int, default=4096)
    p.add_argument("--straggler-rank", type=int, default=-1)
    p.add_argument("--straggler-step", type=int, default=-1)
    p.add_argument("--straggler-sec", type=float, default=30)
    p.add_argument("--os-exit-rank", type=int, default=-1,
                   help="rank that leaves with os._exit(7) (no atexit handlers) at --os-exit-step")
    p.add_argument("--os-exit-step", type=int, default=-1)
    args = p.parse_args()

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", str(rank)))

    cudart = Api(ctypes.CDLL(os.path.join(args.lib_dir, "libcudart.so.13")))
    nccl = Api(ctypes.CDLL(os.path.join(args.lib_dir, "libnccl.so.2")))

    ndev = ctypes.c_int(0)
    check("cudaGetDeviceCount", cudart.cudaGetDeviceCount(ctypes.byref(ndev)))
    check("cudaSetDevice", cudart.cudaSetDevice(local_rank % max(ndev.value, 1)))
    stream = ctypes.c_void_p()
    check("cudaStreamCreate", cudart.cudaStreamCreate(ctypes.byref(stream)))
    nbytes = args.count * 4
    grads = ctypes.c_void_p()
    check("cudaMalloc", cudart.cudaMalloc(ctypes.byref(grads), ctypes.c_size_t(nbytes)))
    host = (ctypes.c_float * args.count)(*([1.0] * args.count))

    uid = share_unique_id(nccl, rank, args.id_dir)
    comm = ctypes.c_void_p()
    check("ncclCommInitRank", nccl.ncclCommInitRank(ctypes.byref(comm), world, uid, rank))

    for step in range(args.steps):
        if rank == args.os_exit_rank and step == args.os_exit_step:
            os._exit(7)
        if rank == args.straggler_rank and step == args.straggler_step:
            restore_data_loader_state(args.straggler_sec)
        time.sleep(args.step_ms / 1000.0)
        check("cudaMemcpy", cudart.cudaMemcpy(grads, host, ctypes.c_size_t(nbytes), CUDA_MEMCPY_HOST_TO_DEVICE))
        check("ncclAllReduce", nccl.ncclAllReduce(grads, grads, ctypes.c_size_t(args.count), NCCL_FLOAT32,
                                                  NCCL_SUM, comm, stream))
        check("cudaStreamSynchronize", cudart.cudaStreamSynchronize(stream))

    check("ncclCommDestroy", nccl.ncclCommDestroy(comm))
    cudart.cudaFree(grads)
    cudart.cudaStreamDestroy(stream)
    return 0


if __name__ == "__main__":
    sys.exit(main())
