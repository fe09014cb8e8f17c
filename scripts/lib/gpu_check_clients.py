#!/usr/bin/env python3
"""The static-CUDA-runtime clients of scripts/gpu-check: gpu_check_clients.py cupy|jax [--spin-sec S].

CuPy and JAX/XLA carry NVIDIA's runtime statically and reach the driver's host syncs only through
cuGetProcAddress (or XLA's dlsym of libcuda.so.1). Each client first makes a one-rank NCCL
communicator through ctypes (libnccl.so.2 of the nvidia-nccl wheel, or --nccl PATH), which
activates ncclwatch in the process, then runs a loop of small steps with host syncs, then blocks
in one sync of each kind behind --spin-sec of device work, printing "blocked <kind>" before each:
the watcher (stall threshold below --spin-sec) should dump a sync_stuck naming the driver's call.
  cupy  stream.synchronize(), event.synchronize(), Device().synchronize() behind a kernel that
        spins on clock64()
  jax   block_until_ready() behind a jitted loop of matmuls calibrated to last --spin-sec
"""

import argparse
import ctypes
import glob
import os
import site
import sys
import time


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def find_nccl(explicit):
    if explicit:
        return explicit
    roots = site.getsitepackages() + [site.getusersitepackages()]
    for root in roots:
        hits = sorted(glob.glob(os.path.join(root, "nvidia", "**", "libnccl.so.2"), recursive=True))
        if hits:
            return hits[0]
    return "libnccl.so.2"


def one_rank_comm(path):
    """ncclCommInitRank of a world of 1, through ctypes (dlopen + dlsym, as pynccl does)."""
    nccl = ctypes.CDLL(path)
    uid = ctypes.create_string_buffer(128)
    rc = nccl.ncclGetUniqueId(uid)
    if rc != 0:
        raise SystemExit(f"ncclGetUniqueId failed: {rc}")
    comm = ctypes.c_void_p()

    class UniqueId(ctypes.Structure):
        _fields_ = [("internal", ctypes.c_char * 128)]

    rc = nccl.ncclCommInitRank(ctypes.byref(comm), 1, UniqueId(uid.raw), 0)
    if rc != 0:
        raise SystemExit(f"ncclCommInitRank failed: {rc}")
    say(f"nccl comm from {path}")
    return nccl, comm


def run_cupy(args):
    import cupy as cp

    cp.cuda.Device(0).use()
    nccl, comm = one_rank_comm(find_nccl(args.nccl))
    x = cp.ones(1 << 20, dtype=cp.float32)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        for _ in range(args.steps):
            (x * 2).sum()
            stream.synchronize()
    say(f"loop {args.steps} syncs")
    spin = cp.RawKernel(r'''
extern "C" __global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
}''', "spin")
    hz = cp.cuda.runtime.getDeviceProperties(0)["clockRate"] * 1000
    cycles = cp.int64(int(args.spin_sec * hz))
    with stream:
        spin((1,), (1,), (cycles,))
        say("blocked stream")
        stream.synchronize()
        spin((1,), (1,), (cycles,))
        event = cp.cuda.Event()
        event.record(stream)
        say("blocked event")
        event.synchronize()
        spin((1,), (1,), (cycles,))
        say("blocked device")
        cp.cuda.Device(0).synchronize()
    nccl.ncclCommDestroy(comm)


def run_jax(args):
    import jax
    import jax.numpy as jnp

    jax.devices()  # the CUDA backend first, then NCCL on its context
    nccl, comm = one_rank_comm(find_nccl(args.nccl))
    a = jnp.ones((4096, 4096), dtype=jnp.float32) * 1e-3
    step = jax.jit(lambda m: (m @ m) * 1e-3)
    for _ in range(args.steps):
        step(a).block_until_ready()
    say(f"loop {args.steps} syncs")

    def loop(m, n):
        return jax.lax.fori_loop(0, n, lambda i, b: (b @ m) * 1e-3, m)

    spin = jax.jit(loop, static_argnums=1)
    spin(a, 10).block_until_ready()  # compile, and time the step
    t0 = time.perf_counter()
    spin(a, 50).block_until_ready()
    per_iter = max((time.perf_counter() - t0) / 50, 1e-5)
    n = int(args.spin_sec / per_iter)
    say(f"blocked block_until_ready ({n} matmuls, {per_iter * 1000:.2f} ms each)")
    spin(a, n).block_until_ready()
    nccl.ncclCommDestroy(comm)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("client", choices=["cupy", "jax"])
    ap.add_argument("--spin-sec", type=float, default=6.0)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--nccl", default="", help="libnccl.so.2 to use (default: the nvidia-nccl wheel's)")
    args = ap.parse_args()
    (run_cupy if args.client == "cupy" else run_jax)(args)
    say("done")


if __name__ == "__main__":
    main()
