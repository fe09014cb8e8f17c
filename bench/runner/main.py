"""Runs every benchmark section of ncclwatch and prints one table: figure, value, goal, met?.

usage: python3 bench/runner/main.py --build-dir DIR [--quick] [--only SECTION,...] [--markdown FILE]
Normally started by scripts/bench, which builds first.
"""

import argparse
import os
import sys
import time
import traceback

import analyzer
import detection
import dump_cost
import exporter_scrape
import hooks
import machine
import step_time
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
}


class Context:
    def __init__(self, build_dir, quick):
        self.build_dir, self.quick = build_dir, quick
        self.preload = os.path.join(build_dir, "lib", "libncclwatch.so")
        self.tag = f"bench{os.getpid()}"

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
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    ctx = Context(os.path.abspath(args.build_dir), args.quick)
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
