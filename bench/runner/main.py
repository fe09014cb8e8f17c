"""Runs every benchmark section of ncclwatch and prints one table: figure, value, goal, met?.

usage: python3 bench/runner/main.py --build-dir DIR [--quick] [--only SECTION,...] [--markdown FILE]
Normally started by scripts/bench, which builds first.
"""

import argparse
import os
import subprocess
import sys
import time
import traceback

import analyzer
import call_sites
import detection
import dump_cost
import exporter_scrape
import hooks
import machine
import step_time
import multihost
import teardown
from results import Results

SECTIONS = {
    "hooks": hooks,
    "step": step_time,
    "detect": detection,
    "dump": dump_cost,
    "analyze": analyzer,
    "exporter": exporter_scrape,
    "teardown": teardown,
    "multihost": multihost,
    "callsites": call_sites,
}


GPU_SECTIONS = ("hooks", "step", "detect")


def real_library_path():
    """Directories of the real libnccl.so.2 and CUDA runtime, for --gpu (NCCLWATCH_GPU_LIB_PATH wins)."""
    if os.environ.get("NCCLWATCH_GPU_LIB_PATH"):
        return os.environ["NCCLWATCH_GPU_LIB_PATH"]
    dirs = []
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=30).stdout
        for line in out.splitlines():
            if "libnccl.so.2 " in line and "=>" in line:
                dirs.append(os.path.dirname(line.split("=>")[1].strip()))
                break
    except OSError:
        pass
    dirs.append(os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64"))
    return ":".join(dirs)


class Context:
    def __init__(self, build_dir, quick, gpu=False):
        self.build_dir, self.quick, self.gpu = build_dir, quick, gpu
        self.preload = os.path.join(build_dir, "lib", "libncclwatch.so")
        self.tag = f"bench{os.getpid()}"
        self.source_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def bin(self, name):
        return os.path.join(self.build_dir, "bin", name)

    def example(self, name):
        return os.path.join(self.build_dir, "examples", name)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", required=True)
    p.add_argument("--quick", action="store_true", help="fewer repeats and sizes (about 2 minutes)")
    p.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated subset of {','.join(SECTIONS)}")
    p.add_argument("--markdown", help="also write the machine line and the table to this file")
    p.add_argument("--gpu", action="store_true",
                   help="real NCCL and CUDA (scripts/bench checks for a GPU first); hooks, step and detect only")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    ctx = Context(os.path.abspath(args.build_dir), args.quick, args.gpu)
    if args.gpu:
        # The benchmarks and examples find the sim by RUNPATH, which LD_LIBRARY_PATH overrides.
        os.environ["LD_LIBRARY_PATH"] = real_library_path()
        print(f"gpu: real libraries from {os.environ['LD_LIBRARY_PATH']}")
        args.only = ",".join(s for s in args.only.split(",") if s in GPU_SECTIONS)
    results = Results()
    started = time.monotonic()
    where = machine.describe()
    print(f"machine: {where}")
    for key in args.only.split(","):
        module = SECTIONS[key]
        print(f"\n== {module.SECTION} ==", flush=True)
        t0 = time.monotonic()
        try:
            module.run(ctx, results)
        except Exception as e:  # one broken section must not hide the others' figures
            traceback.print_exc()
            results.add(module.SECTION, "(section)", f"failed: {type(e).__name__}: {e}", "", False)
        print(f"  ({time.monotonic() - t0:.0f} s)", flush=True)
    total = time.monotonic() - started
    table = results.table()
    missed = results.missed()
    summary = (f"{len(results.figures)} figures, {len(missed)} miss their goal; "
               f"benchmarks took {total:.0f} s{' (--quick)' if args.quick else ''}")
    print(f"\n{table}\n\n{summary}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"Machine: {where}\n\n{table}\n\n{summary}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
