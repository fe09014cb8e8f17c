#!/usr/bin/env python3
"""entry_points_check.py PROBE PRELOAD SIM_LIB_DIR: where the driver's host syncs lead, over the sim.

Without the preload, every lookup leads to the sim's libcuda.so.1 function of the ABI variant the
driver picked (cuStreamSynchronize_ptsz for per-thread default streams, cuCtxSynchronize_v2 at
13000, cuGetProcAddress_v2 for itself). With it, every lookup of a hooked function leads into
libncclwatch.so (cuGetProcAddress asked for itself included), and every other lookup to the very
function the driver answered. Exit 0 pass, 1 fail.
"""

import os
import re
import subprocess
import sys

from ncclwatch_test.checks import check, failures

probe, preload, sim_dir = sys.argv[1:4]
HOOKED = {"cuStreamSynchronize", "cuEventSynchronize", "cuCtxSynchronize", "cuGetProcAddress",
          "cuStreamBeginCapture"}
# What the sim's driver answers (sim/driver/README.md, cudaTypedefs.h versions).
DRIVER_ANSWER = {
    ("cuStreamSynchronize", "13000", "0"): "cuStreamSynchronize",
    ("cuStreamSynchronize", "13000", "2"): "cuStreamSynchronize_ptsz",
    ("cuEventSynchronize", "13000", "0"): "cuEventSynchronize",
    ("cuCtxSynchronize", "12000", "0"): "cuCtxSynchronize",
    ("cuCtxSynchronize", "13000", "0"): "cuCtxSynchronize_v2",
    ("cuGetProcAddress", "13000", "0"): "cuGetProcAddress_v2",
    ("cuGetProcAddress", "11030", "0"): "cuGetProcAddress",
    ("cuStreamBeginCapture", "13000", "0"): "cuStreamBeginCapture_v2",
    ("cuMemAlloc", "13000", "0"): "cuMemAlloc_v2",
    ("cuStreamQuery", "13000", "2"): "cuStreamQuery_ptsz",
}
LINE = re.compile(r"^(\S+) (\S+) (\d+) (\d+) rc=(-?\d+) status=(-?\d+) -> (\S+) (\S+)$")


def run(preloaded):
    env = dict(os.environ, LD_LIBRARY_PATH=sim_dir, NCCLWATCH_JOB_ID=f"entry-points-{os.getpid()}")
    env.pop("LD_PRELOAD", None)
    if preloaded:
        env["LD_PRELOAD"] = preload
    r = subprocess.run([probe, os.path.join(sim_dir, "libcudart.so.13")], env=env, capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, f"probe exit {r.returncode}: {r.stderr[-500:]}")
    return r.stdout.splitlines()


def lookups(lines):
    out = {}
    for line in lines:
        m = LINE.match(line)
        if m:
            out[(m[1], m[2], m[3], m[4])] = (int(m[5]), m[7], m[8])
    return out


plain, hooked = lookups(run(False)), lookups(run(True))
check(len(plain) == 40 and set(plain) == set(hooked), f"40 lookups each way: {len(plain)}, {len(hooked)}")
for key, (rc, lib, fn) in sorted(plain.items()):
    how, symbol, version, flags = key
    # cudaGetDriverEntryPoint asks for the runtime's own version, 13000, whatever the probe's.
    want = DRIVER_ANSWER[(symbol, "13000" if how == "cudaGetDriverEntryPoint" else version, flags)]
    check(rc == 0 and lib == "libcuda.so.1" and fn == want, f"without the preload {key}: {rc} {lib} {fn}, want {want}")
    h_rc, h_lib, h_fn = hooked[key]
    check(h_rc == rc, f"{key}: rc {h_rc} with the preload, {rc} without")
    if symbol in HOOKED:
        check(h_lib == "libncclwatch.so", f"with the preload {key} leads to {h_lib} {h_fn}, not to our hook")
    else:
        check((h_lib, h_fn) == (lib, fn), f"with the preload {key} leads to {h_lib} {h_fn}, not to {lib} {fn}")
for line in run(True):
    if line.startswith("dlsym "):
        name = line.split()[1]
        want = "libcuda.so.1" if name == "cuMemAlloc_v2" else "libncclwatch.so"
        check(line.split("-> ")[1].startswith(want), f"with the preload, {line} (want {want})")
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
