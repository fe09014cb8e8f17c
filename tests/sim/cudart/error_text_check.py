#!/usr/bin/env python3
"""Every error code the sim runtime names reads exactly as in the real libcudart.so.13:
cudaGetErrorName and cudaGetErrorString, compared code by code (the sim answers
"cudaErrorUnknown" for codes it never returns; those are left out).
Run by pytest with SIM_LIBCUDART, REAL_LIBCUDART and DRIVER_TYPES_H in the environment
(tests/sim/cudart/CMakeLists.txt)."""
import json
import os
import re
import subprocess
import sys


def texts(lib_path, codes):
    """{code: [name, string]} from lib_path, read in a child so the two libraries never meet."""
    prog = ("import ctypes,json,sys\n"
            f"lib=ctypes.CDLL({lib_path!r})\n"
            "lib.cudaGetErrorName.restype=lib.cudaGetErrorString.restype=ctypes.c_char_p\n"
            f"print(json.dumps({{c:[lib.cudaGetErrorName(c).decode(),lib.cudaGetErrorString(c).decode()] for c in {codes!r}}}))")
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, check=True).stdout
    return {int(k): v for k, v in json.loads(out).items()}


def test_error_texts_match_the_real_library():
    sim_path, real_path, header = (os.environ[k] for k in ("SIM_LIBCUDART", "REAL_LIBCUDART", "DRIVER_TYPES_H"))
    codes = sorted({int(v) for v in re.findall(r"cudaError\w+\s*=\s*(\d+)", open(header).read())})
    sim, real = texts(sim_path, codes), texts(real_path, codes)
    known = [c for c in codes if sim[c][0] != "cudaErrorUnknown" or c == 999]
    assert len(known) >= 10, f"the sim names only {len(known)} codes: the test is not reading its library"
    bad = {c: {"sim": sim[c], "real": real[c]} for c in known if sim[c] != real[c]}
    assert not bad, f"{len(bad)} of {len(known)} codes differ from the real library: {bad}"
