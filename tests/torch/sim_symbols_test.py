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

import pytest
import torch

from ncclwatch_test.paths import SIM_LIB as SIM
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


def torch_imports():
    """Every undefined dynamic symbol of torch's shared objects."""
    torch_libs = glob.glob(os.path.join(TORCH_LIB, "lib", "*.so")) + glob.glob(os.path.join(TORCH_LIB, "_C*.so"))
    assert torch_libs, f"no torch libraries under {TORCH_LIB}"
    wanted = set()
    for lib in torch_libs:
        wanted |= dynamic_symbols(lib, defined=False)
    return wanted


@pytest.mark.parametrize("name", ["cudart", "nccl", "driver"])
def test_sim_defines_what_torch_imports(name):
    for path in (REAL[name], SIM_LIBS[name]):
        assert os.path.exists(path), f"{path} missing"
    imported = torch_imports() & dynamic_symbols(REAL[name], defined=True)
    assert imported, f"found no {name} imports at all; the test is not looking where torch is"
    missing = sorted(imported - dynamic_symbols(SIM_LIBS[name], defined=True))
    print(f"{name}: torch imports {len(imported)} symbols from {REAL[name]}; sim lacks {len(missing)}")
    assert not missing, f"not defined by {SIM_LIBS[name]}: {missing}"
