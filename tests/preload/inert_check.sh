#!/usr/bin/env bash
# Inertness: preloading libncclwatch.so into programs that never create a communicator
# changes nothing (exit status, output, thread count) and creates no shared memory.
# usage: inert_check.sh PRELOAD CC   (CC: the build's C compiler, run as a program like any other)
set -u
preload=$1 cc=$2
job="inert-$$"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

check() {  # check NAME CMD...
  local name=$1; shift
  NCCLWATCH_JOB_ID=$job timeout 60 "$@" >"$work/$name.plain" 2>&1; echo "exit=$?" >>"$work/$name.plain"
  NCCLWATCH_JOB_ID=$job LD_PRELOAD=$preload timeout 60 "$@" >"$work/$name.preload" 2>&1
  echo "exit=$?" >>"$work/$name.preload"
  if diff -u "$work/$name.plain" "$work/$name.preload"; then echo "ok: $name"; else echo "FAIL: $name"; fail=1; fi
}

check true /bin/true
check false /bin/false
check bash bash -c 'echo hello; ls /proc/self/task | wc -l; exit 7'
check python3 python3 -c 'import os, threading; print(len(os.listdir("/proc/self/task")), threading.active_count())'
check cc sh -c 'printf "int main(void){return 0;}\n" | "$0" -x c -o /dev/null - && echo compiled' "$cc"
# The library names what it would publish to; nothing of this job may exist.
left=$(find /dev/shm -maxdepth 1 -name "ncclwatch.*.$job.*" 2>/dev/null)
[ -z "$left" ] || { echo "FAIL: shared memory created: $left"; fail=1; }
exit $fail
