#!/usr/bin/env python3
"""Every error code the sim runtime names reads exactly as in the real libcudart.so.13:
cudaGetErrorName and cudaGetErrorString, compared code by code (the sim answers
"cudaErrorUnknown" for codes it never returns; those are skipped).
usage: error_text_check.py SIM_LIBCUDART REAL_LIBCUDART DRIVER_TYPES_H"""
import ctypes
import json
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


def main():
    sim_path, real_path, header = sys.argv[1:4]
    codes = sorted({int(v) for v in re.findall(r"cudaError\w+\s*=\s*(\d+)", open(header).read())})
    sim, real = texts(sim_path, codes), texts(real_path, codes)
    known = [c for c in codes if sim[c][0] != "cudaErrorUnknown" or c == 999]
    bad = [c for c in known if sim[c] != real[c]]
    for c in bad:
        print(f"FAIL: code {c}: sim {sim[c]} real {real[c]}")
    print(f"{len(known)} codes named by the sim, {len(bad)} differ from the real library")
    return 1 if bad or len(known) < 10 else 0


if __name__ == "__main__":
    sys.exit(main())
