#!/usr/bin/env python3
"""Where the driver's host syncs lead when found as a static CUDA runtime finds them, over the sim.

pytest entry_points_test.py: build/bin/entry_point_probe (tests/preload/entry_point_probe.cc) with
and without the preload. Without it, every lookup leads to the sim's libcuda.so.1 function of the
ABI variant the driver picked (cuStreamSynchronize_ptsz for per-thread default streams,
cuCtxSynchronize_v2 at 13000, cuGetProcAddress_v2 for itself). With it, every lookup of a hooked
function leads into libncclwatch.so (cuGetProcAddress asked for itself included), and every other
lookup to the very function the driver answered.
"""

import os
import re
import subprocess

from ncclwatch_test.paths import BUILD, PRELOAD, SIM_LIB

PROBE = os.path.join(BUILD, "bin", "entry_point_probe")
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
    env = dict(os.environ, LD_LIBRARY_PATH=SIM_LIB, NCCLWATCH_JOB_ID=f"entry-points-{os.getpid()}")
    env.pop("LD_PRELOAD", None)
    if preloaded:
        env["LD_PRELOAD"] = PRELOAD
    r = subprocess.run([PROBE, os.path.join(SIM_LIB, "libcudart.so.13")], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, f"probe exit {r.returncode}: {r.stderr[-500:]}"
    return r.stdout.splitlines()


def lookups(lines):
    out = {}
    for line in lines:
        m = LINE.match(line)
        if m:
            out[(m[1], m[2], m[3], m[4])] = (int(m[5]), m[7], m[8])
    return out


def test_lookups_lead_to_our_hooks_and_nothing_else_changes():
    plain, hooked = lookups(run(False)), lookups(run(True))
    assert len(plain) == 40 and set(plain) == set(hooked), f"40 lookups each way: {len(plain)}, {len(hooked)}"
    wrong = []
    for key, (rc, lib, fn) in sorted(plain.items()):
        how, symbol, version, flags = key
        # cudaGetDriverEntryPoint asks for the runtime's own version, 13000, whatever the probe's.
        want = DRIVER_ANSWER[(symbol, "13000" if how == "cudaGetDriverEntryPoint" else version, flags)]
        if (rc, lib, fn) != (0, "libcuda.so.1", want):
            wrong.append(f"without the preload {key}: {rc} {lib} {fn}, want {want}")
        h_rc, h_lib, h_fn = hooked[key]
        if h_rc != rc:
            wrong.append(f"{key}: rc {h_rc} with the preload, {rc} without")
        if symbol in HOOKED and h_lib != "libncclwatch.so":
            wrong.append(f"with the preload {key} leads to {h_lib} {h_fn}, not to our hook")
        if symbol not in HOOKED and (h_lib, h_fn) != (lib, fn):
            wrong.append(f"with the preload {key} leads to {h_lib} {h_fn}, not to {lib} {fn}")
    assert not wrong, "\n".join(wrong)


def test_dlsym_in_the_driver_hands_out_our_hooks():
    for line in run(True):
        if line.startswith("dlsym "):
            name = line.split()[1]
            want = "libcuda.so.1" if name == "cuMemAlloc_v2" else "libncclwatch.so"
            assert line.split("-> ")[1].startswith(want), f"with the preload, {line} (want {want})"
