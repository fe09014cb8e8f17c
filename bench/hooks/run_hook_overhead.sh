#!/usr/bin/env bash
# Prints the median added host time per call of the preload's hooks (NCCLSIM_NOOP=1).
# usage: run_hook_overhead.sh BENCH_BINARY LIBNCCLWATCH
set -eu
bench=$1 preload=$2
export NCCLSIM_NOOP=1 NCCLWATCH_JOB_ID="bench-$$"
plain=$("$bench")
hooked=$(LD_PRELOAD=$preload "$bench")
echo "without preload:"; echo "$plain" | sed 's/^/  /'
echo "with preload:"; echo "$hooked" | sed 's/^/  /'
paste <(echo "$plain") <(echo "$hooked") | awk '
  $1 == "event_calls_ns" { events = $2; next }
  { added[$1] = $4 - $2; printf "added %s %.1f ns\n", $1, $4 - $2 }
  END { printf "of which CUDA runtime calls for the completion event: %.1f ns; hook itself: %.1f ns\n",
               events, added["ncclAllReduce_ns"] - events }'
