#!/usr/bin/env bash
# dlsym of NCCL names with and without the preload, over the real NCCL 2.28.9 (no
# ncclPutSignal) and over the sim (2.32.3, has it): see dlsym_probe.cc for what is asserted.
# usage: dlsym_check.sh PROBE PRELOAD SIM_LIB_DIR REAL_LIB_DIR
set -u
probe=$1 preload=$2 sim_dir=$3 real_dir=$4
fail=0
run() {  # run NAME LIBDIR HOOK PUTSIGNAL [ENV...]
  local name=$1 dir=$2 hook=$3 put=$4; shift 4
  if out=$(env LD_LIBRARY_PATH="$dir" NCCLWATCH_JOB_ID="dlsym-check-$$" "$@" timeout 30 "$probe" "$hook" "$put" 2>&1); then
    echo "ok: $name: $out"
  else
    echo "FAIL: $name: $out"; fail=1
  fi
}
run real_plain "$real_dir" 0 0
run real_preload "$real_dir" 1 0 LD_PRELOAD="$preload"
run sim_plain "$sim_dir" 0 1
run sim_preload "$sim_dir" 1 1 LD_PRELOAD="$preload"
exit $fail
