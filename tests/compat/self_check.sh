#!/usr/bin/env bash
# scripts/compat fails when it should, with one line per failure, and writes the matrix.
# usage: self_check.sh BUILD_DIR LIBNCCL NOISY_PRELOAD
set -uo pipefail
build=$1 nccl=$2 noisy=$3
compat="$(cd "$(dirname "$0")/../.." && pwd)/scripts/compat"
listed="$(dirname "$0")/../../preload/not_hooked.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect STATUS STDERR-PATTERN LINES|any -- ARGS...: exit status, a stderr line matching, the count.
expect() {
  local status=$1 pattern=$2 lines=$3; shift 4
  "$compat" --build-dir "$build" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  [[ $got -eq $status ]] || fail "compat $* exited $got, expected $status: $(head -c 300 "$work/err")"
  grep -qE -- "$pattern" "$work/err" || fail "compat $*: stderr lacks /$pattern/: $(head -c 300 "$work/err")"
  grep -qv '^compat: ' "$work/err" && fail "compat $*: a stderr line without the 'compat: ' prefix"
  [[ $lines == any || $(wc -l <"$work/err") -eq $lines ]] || fail "compat $*: expected $lines stderr line(s), got $(wc -l <"$work/err")"
}

# The image's library passes and yields one Markdown row for its version.
"$compat" --build-dir "$build" --library "$nccl" --markdown "$work/COMPAT.md" >"$work/out" 2>"$work/err" ||
  fail "the image's NCCL should pass: $(cat "$work/err")"
version=$(awk '$1 ~ /^[0-9]+\.[0-9]+\.[0-9]+$/ {print $1}' "$work/out")
[[ -n "$version" ]] || fail "no row with a version in: $(cat "$work/out")"
grep -qE "^\| $version \| .* \| yes \| [0-9]+/[0-9]+ NULL \|$" "$work/COMPAT.md" || fail "no passing row for $version in COMPAT.md"

# An export neither hooked nor listed: ncclGetVersion, taken out of the list.
grep -v '^ncclGetVersion ' "$listed" >"$work/not_hooked.txt"
expect 1 "ncclGetVersion is exported but neither hooked nor listed" 1 -- --library "$nccl" --not-hooked "$work/not_hooked.txt"

# A listed name without a reason is refused.
printf 'ncclGetVersion\n' >"$work/no_reason.txt"
expect 1 "no_reason.txt:1: 'ncclGetVersion' has no reason" 1 -- --library "$nccl" --not-hooked "$work/no_reason.txt"

# A preload that changes the job's output (its hooked set, empty, is listed to isolate that).
{ cat "$listed"; nm -D --defined-only "$nccl" | awk '$3 ~ /^nccl/ {print $3, "listed for the test"}'; } >"$work/all.txt"
expect 1 "pass-through differs with the preload: 'ncclGetVersion: .*' vs 'noisy preload was here'" any -- \
  --library "$nccl" --preload "$noisy" --not-hooked "$work/all.txt"

# A download that cannot succeed (no such release), into an empty cache: fails, one line.
NCCLWATCH_CACHE="$work/cache" expect 1 "^compat: cannot download nvidia-nccl-cu13==2.99.1 with pip" 1 -- --versions 2.99.1

expect 2 "--versions takes" 1 -- --versions 2.x
[[ $failures -eq 0 ]] && echo "compat self check: ok"
exit $((failures > 0))
