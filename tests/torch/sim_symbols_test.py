#!/usr/bin/env python3
"""Every symbol that torch 2.15's shared objects import from the CUDA runtime, the CUDA driver or
NCCL is defined by the sim's stand-in for that library.

Which library a symbol comes from is decided by the real libraries, not by its name: the
venv's own libcudart.so.13 and libnccl.so.2 (torch's pinned wheels) and the driver stub of the
CUDA toolkit. A sim that lacks one of them makes torch fail at import (RTLD_NOW) or later.
"""

import glob
import os
import subprocess
import sys

import torch

BUILD = os.environ["NCCLWATCH_BUILD_DIR"]
SIM = os.path.join(BUILD, "sim", "lib")
TORCH_LIB = os.path.dirname(torch.__file__)
NVIDIA = os.path.join(os.path.dirname(TORCH_LIB), "nvidia")
CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")

REAL = {
    "cudart": os.path.join(NVIDIA, "cu13", "lib", "libcudart.so.13"),
    "nccl": os.path.join(NVIDIA, "nccl", "lib", "libnccl.so.2"),
    "driver": os.path.join(CUDA, "lib64", "stubs", "libcuda.so"),
}
SIM_LIBS = {
    "cudart": os.path.join(SIM, "libcudart.so.13"),
    "nccl": os.path.join(SIM, "libnccl.so.2"),
    "driver": os.path.join(SIM, "libcuda.so.1"),
}


def dynamic_symbols(path, defined):
    flag = "--defined-only" if defined else "--undefined-only"
    out = subprocess.run(["nm", "-D", flag, path], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def main():
    failures = 0
    torch_libs = glob.glob(os.path.join(TORCH_LIB, "lib", "*.so")) + glob.glob(os.path.join(TORCH_LIB, "_C*.so"))
    if not torch_libs:
        print(f"FAIL: no torch libraries under {TORCH_LIB}")
        return 1
    wanted = set()
    for lib in torch_libs:
        wanted |= dynamic_symbols(lib, defined=False)
    for name in ("cudart", "nccl", "driver"):
        for path in (REAL[name], SIM_LIBS[name]):
            if not os.path.exists(path):
                print(f"FAIL: {path} missing")
                return 1
        imported = wanted & dynamic_symbols(REAL[name], defined=True)
        missing = sorted(imported - dynamic_symbols(SIM_LIBS[name], defined=True))
        print(f"{name}: torch imports {len(imported)} symbols from {REAL[name]}; sim lacks {len(missing)}")
        for sym in missing:
            print(f"  FAIL: {sym} not defined by {SIM_LIBS[name]}")
        failures += len(missing)
        if not imported:
            print(f"FAIL: found no {name} imports at all; the test is not looking where torch is")
            failures += 1
    print("passed" if not failures else f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
