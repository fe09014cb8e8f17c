#!/usr/bin/env bash
# Pass-through fidelity: fidelity_probe prints the same return codes and results with
# and without LD_PRELOAD=libncclwatch.so, over the sim and over the real CUDA libraries
# (which fail on this GPU-less machine, the driver being NVIDIA's stub; the codes are
# compared, never hard-coded).
# usage: fidelity_check.sh sim|real PROBE PRELOAD LIB_DIR [DRIVER_STUB]
# real: exits 77 (ctest: skipped) when LIB_DIR has no libnccl.so.2 or DRIVER_STUB is missing.
set -u
mode=$1 probe=$2 preload=$3 lib_dir=$4 stub=${5:-}
job="fidelity-$$"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

run() {  # run NAME LIBDIR [ENV...]
  local name=$1 dir=$2; shift 2
  env NCCLWATCH_JOB_ID="$job" NCCL_SOCKET_IFNAME=lo LD_LIBRARY_PATH="$dir" "$@" \
    timeout 60 "$probe" >"$work/$name.out" 2>"$work/$name.err"
  echo "exit=$?" >>"$work/$name.out"
}

compare() {  # compare BASE OTHER
  if ! diff -u "$work/$1.out" "$work/$2.out"; then
    echo "FAIL: $2 differs from $1"; sed 's/^/  stderr: /' "$work/$2.err"; fail=1
  else
    echo "ok: $2 matches $1 ($(grep -c rc= "$work/$1.out") calls)"
  fi
}

if [ "$mode" = sim ]; then
  run sim_plain "$lib_dir"
  run sim_preload "$lib_dir" LD_PRELOAD="$preload"
  run sim_disabled "$lib_dir" LD_PRELOAD="$preload" NCCLWATCH_DISABLE=1
  grep -q '^value ' "$work/sim_plain.out" || { echo "FAIL: the sim run did no collective"; cat "$work/sim_plain.err"; fail=1; }
  grep -q '^cuStreamSynchronize rc=0 ' "$work/sim_plain.out" || { echo "FAIL: the sim run made no driver sync"; fail=1; }
  grep -q '^cuGetProcAddress_v2(cuStreamSynchronize, 13000, 2) rc=0 .* -> cuStreamSynchronize_ptsz$' "$work/sim_plain.out" ||
    { echo "FAIL: the sim run found no cuStreamSynchronize_ptsz"; fail=1; }
  compare sim_plain sim_preload
  compare sim_plain sim_disabled
else
  if [ ! -e "$lib_dir/libnccl.so.2" ] || [ ! -e "$stub" ]; then
    echo "SKIPPED: no real libnccl.so.2 in '$lib_dir' or no driver stub '$stub'"
    exit 77
  fi
  # The stub answers every driver call with CUDA_ERROR_STUB_LIBRARY, as libcuda.so.1.
  mkdir "$work/stub" && ln -s "$stub" "$work/stub/libcuda.so.1"
  run real_plain "$lib_dir:$work/stub"
  run real_preload "$lib_dir:$work/stub" LD_PRELOAD="$preload"
  grep -q '^ncclCommInitRank rc=' "$work/real_plain.out" || { echo "FAIL: real run incomplete"; fail=1; }
  compare real_plain real_preload
fi

left=$(find /dev/shm -maxdepth 1 -name "ncclwatch.$(id -u).$job.*" 2>/dev/null)
[ -z "$left" ] || { echo "FAIL: segments left behind: $left"; fail=1; }
exit $fail
