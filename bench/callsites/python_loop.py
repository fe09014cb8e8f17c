"""ncclAllReduce issued from Python through ctypes, as a training loop issues it through torch:
python_loop.py DEPTH BATCHES. The call is made DEPTH frames of "library" code below the loop
(functions of a pseudo-file, "<frozen bench_library>", which the call-site rule skips as it
skips torch's files), so the walk passes DEPTH frames to reach the user's. Prints one "sample NS" line per batch of 128 calls (host ns
per call). Run over the sim in no-op mode (NCCLSIM_NOOP=1, the sim's lib directory on
LD_LIBRARY_PATH), with or without the preload and NCCLWATCH_CALL_SITES=1: the difference is
the cost of recording each call site (bench/runner/call_sites.py).

ctypes releases the GIL around each call, as torch does around its collectives.
"""

import ctypes
import sys
import time

CALLS_PER_BATCH = 128


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


def set_up():
    nccl = ctypes.CDLL("libnccl.so.2")
    cudart = ctypes.CDLL("libcudart.so.13")
    uid = UniqueId()
    comm, stream, buf = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    steps = [nccl.ncclGetUniqueId(ctypes.byref(uid)), nccl.ncclCommInitRank(ctypes.byref(comm), 1, uid, 0),
             cudart.cudaStreamCreate(ctypes.byref(stream)), cudart.cudaMalloc(ctypes.byref(buf), 1024)]
    if any(steps):
        sys.exit(f"python_loop: set-up failed: {steps}")
    all_reduce = nccl.ncclAllReduce
    all_reduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                           ctypes.c_void_p, ctypes.c_void_p]
    return lambda: all_reduce(buf, buf, 256, 7, 0, comm, stream)  # float32, sum


LIBRARY = {}
exec(compile("def nested(depth, fn):\n    return fn() if depth <= 1 else nested(depth - 1, fn)\n",
             "<frozen bench_library>", "exec"), LIBRARY)


def batch(call, depth):
    nested = LIBRARY["nested"]
    start = time.perf_counter_ns()
    for _ in range(CALLS_PER_BATCH):
        nested(depth, call)
    return (time.perf_counter_ns() - start) / CALLS_PER_BATCH


def main():
    depth, batches = int(sys.argv[1]), int(sys.argv[2])
    call = set_up()
    for _ in range(5):  # warm-up: the first calls resolve symbols and fill the caches
        batch(call, depth)
    for _ in range(batches):
        print(f"sample {batch(call, depth):.1f}")


if __name__ == "__main__":
    main()
