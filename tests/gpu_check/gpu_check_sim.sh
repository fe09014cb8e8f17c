#!/usr/bin/env bash
# scripts/gpu-check --sim --pack: exit 0, and its table says what the sim can and cannot show:
# every step passes, the ones that stand in for a GPU say what the sim did instead, and the
# clients it cannot run (CuPy, JAX) are skipped with the reason. The pack goes to the build directory, the table to a
# temporary one (printed, and kept with NCCLWATCH_TEST_KEEP=1).
set -u
src=$NCCLWATCH_SOURCE_DIR build=$NCCLWATCH_BUILD_DIR
out=$(mktemp -d /tmp/ncclwatch-gpu-check.XXXXXX)
[ -n "${NCCLWATCH_TEST_KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
fail=0
help=$("$src/scripts/gpu-check" --help) || { echo "FAIL: --help exit $?"; fail=1; }
grep -q 'run(carry=\["build-gpu"\]' <<<"$help" || { echo "FAIL: --help shows no run invocation"; fail=1; }
"$src/scripts/gpu-check" --sim --pack --pack-dir "$build/gpu-check-pack" --build-dir "$build" --out "$out" --stall 3
status=$?
table=$out/gpu-check.md
cat "$table" 2>/dev/null || { echo "FAIL: no table"; exit 1; }
[ "$status" = 0 ] || { echo "FAIL: gpu-check --sim exit $status"; fail=1; }
row() { grep "^| $1 " "$table" | cut -d'|' -f3 | tr -d ' '; }
for step in "1 reach" "2 healthy" "3 spin" "4 graphs" "5 cost" "6 static"; do
  [ "$(row "$step")" = PASS ] || { echo "FAIL: step $step: $(row "$step")"; fail=1; }
done
grep -q "^| 3 spin .*sim: kernels are no-ops" "$table" || { echo "FAIL: step 3 does not say what the sim did instead"; fail=1; }
grep -q "^| 4 graphs .*NCCLSIM_FAULT=hang:replay=2.*: the watcher says " "$table" ||
  { echo "FAIL: step 4 does not say what the watcher said of the hung replay"; fail=1; }
grep -q "^| 6 static .*CuPy and JAX skipped: " "$table" || { echo "FAIL: step 6 does not say why CuPy and JAX are skipped"; fail=1; }
grep -q "^| 6 static .*blocked in cuStreamSynchronize" "$table" || { echo "FAIL: step 6 did not see the C job's driver sync"; fail=1; }
for f in step1-doctor.txt step3-analyze.txt step5-bench.log; do
  [ -s "$out/$f" ] || { echo "FAIL: no raw log $f"; fail=1; }
done
size=$(du -sm "$build/gpu-check-pack" | cut -f1)
[ "$size" -le 64 ] || { echo "FAIL: the pack is $size MiB"; fail=1; }
exit $fail
