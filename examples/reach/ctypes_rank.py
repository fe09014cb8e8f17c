#!/usr/bin/env python3
"""A Python rank that reaches NCCL through ctypes alone, as vLLM/SGLang's pynccl does.

ctypes.CDLL(<lib-dir>/libnccl.so.2) (dlopen RTLD_LOCAL) and attribute lookup on that handle
(dlsym): nothing in the global scope, no extension module. Otherwise the loop of
examples/python/ddp_rank.py (whose helpers it reuses): AllReduce per step, then a host sync;
--straggler-* make one rank stall in Python code (restore_data_loader_state ->
skip_samples_to_resume_position) before its AllReduce. --config uses ncclAllReduceConfig
(NCCL 2.31) with a NULL config instead of ncclAllReduce.
"""

import argparse
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import ddp_rank  # noqa: E402  (shares the unique id, the stalling functions, the constants)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib-dir", required=True)
    p.add_argument("--id-dir", required=True)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--step-ms", type=float, default=20)
    p.add_argument("--count", type=int, default=1024)
    p.add_argument("--config", action="store_true")
    p.add_argument("--straggler-rank", type=int, default=-1)
    p.add_argument("--straggler-step", type=int, default=-1)
    p.add_argument("--straggler-sec", type=float, default=30)
    args = p.parse_args()

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", str(rank)))
    cudart = ctypes.CDLL(os.path.join(args.lib_dir, "libcudart.so.13"))
    nccl = ctypes.CDLL(os.path.join(args.lib_dir, "libnccl.so.2"))

    ndev = ctypes.c_int(0)
    ddp_rank.check("cudaGetDeviceCount", cudart.cudaGetDeviceCount(ctypes.byref(ndev)))
    ddp_rank.check("cudaSetDevice", cudart.cudaSetDevice(local_rank % max(ndev.value, 1)))
    stream = ctypes.c_void_p()
    ddp_rank.check("cudaStreamCreate", cudart.cudaStreamCreate(ctypes.byref(stream)))
    grads = ctypes.c_void_p()
    ddp_rank.check("cudaMalloc", cudart.cudaMalloc(ctypes.byref(grads), ctypes.c_size_t(args.count * 4)))

    uid = ddp_rank.share_unique_id(nccl, rank, args.id_dir)
    comm = ctypes.c_void_p()
    ddp_rank.check("ncclCommInitRank", nccl.ncclCommInitRank(ctypes.byref(comm), world, uid, rank))
    count = ctypes.c_size_t(args.count)
    for step in range(args.steps):
        if rank == args.straggler_rank and step == args.straggler_step:
            ddp_rank.restore_data_loader_state(args.straggler_sec)
        ddp_rank.time.sleep(args.step_ms / 1000.0)
        if args.config:
            rc = nccl.ncclAllReduceConfig(grads, grads, count, ddp_rank.NCCL_FLOAT32, ddp_rank.NCCL_SUM, comm,
                                          stream, None)
        else:
            rc = nccl.ncclAllReduce(grads, grads, count, ddp_rank.NCCL_FLOAT32, ddp_rank.NCCL_SUM, comm, stream)
        ddp_rank.check("ncclAllReduce", rc)
        ddp_rank.check("cudaStreamSynchronize", cudart.cudaStreamSynchronize(stream))
    ddp_rank.check("ncclCommDestroy", nccl.ncclCommDestroy(comm))
    return 0


if __name__ == "__main__":
    sys.exit(main())
