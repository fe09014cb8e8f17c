#!/usr/bin/env bash
# End-to-end checks of scripts/launch and examples/ddp_loop. Usage: launch_test.sh CASE
set -u
src=${NCCLWATCH_SOURCE_DIR:?}
build=${NCCLWATCH_BUILD_DIR:?}
launch=$src/scripts/launch
ddp=$build/examples/ddp_loop
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
expect_status() {  # expect_status WANT GOT WHAT
  [[ "$2" -eq "$1" ]] || fail "$3: exit status $2, expected $1"
}

case "$1" in
env_and_status)
  "$launch" -n 3 --env EXTRA=x --rank-env 1:ONLY1=y -- sh -c \
    'echo "$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT $TORCHELASTIC_RUN_ID $EXTRA ${ONLY1:-}" > '"$tmp"'/r$RANK; exit $((RANK * 2))'
  expect_status 4 $? "worst status of ranks exiting 0, 2, 4"
  for r in 0 1 2; do
    read -r rank lrank ws lws addr port runid extra only1 < "$tmp/r$r" || fail "rank $r wrote nothing"
    [[ "$rank" == "$r" && "$lrank" == "$r" && "$ws" == 3 && "$lws" == 3 ]] || fail "rank $r env: $(cat "$tmp/r$r")"
    [[ "$addr" == 127.0.0.1 && "$port" =~ ^[0-9]+$ && -n "$runid" && "$extra" == x ]] || fail "rank $r env: $(cat "$tmp/r$r")"
    if [[ $r == 1 ]]; then [[ "$only1" == y ]] || fail "--rank-env not applied to rank 1"
    else [[ -z "$only1" ]] || fail "--rank-env leaked to rank $r"; fi
  done
  ports=$(cut -d' ' -f6 "$tmp"/r* | sort -u | wc -l)
  [[ $ports -eq 1 ]] || fail "ranks disagree on MASTER_PORT"
  "$launch" -n 2 -- sh -c 'kill -9 $$'
  expect_status 137 $? "a rank killed by SIGKILL"
  ;;
timeout)
  start=$(date +%s)
  "$launch" -n 2 --timeout 1 -- sleep 30
  expect_status 124 $? "--timeout"
  (( $(date +%s) - start < 10 )) || fail "--timeout did not stop the ranks promptly"
  ;;
signal_forwarding)
  "$launch" -n 2 -- sh -c 'trap "echo got-term > '"$tmp"'/term\$RANK; exit 7" TERM; while :; do sleep 0.1; done' &
  pid=$!
  sleep 1
  kill -TERM $pid
  wait $pid
  expect_status 7 $? "ranks exiting 7 on the forwarded SIGTERM"
  [[ -f $tmp/term0 && -f $tmp/term1 ]] || fail "SIGTERM did not reach every rank"
  ;;
bad_usage)
  "$launch" -n 2 2>"$tmp/err"; expect_status 2 $? "no command"
  grep -q "no command" "$tmp/err" || fail "no clear error for a missing command"
  "$launch" -n 0 -- true 2>/dev/null; expect_status 2 $? "-n 0"
  "$launch" -n 1 -- /nonexistent/cmd 2>"$tmp/err"; expect_status 127 $? "missing executable"
  "$launch" --help | grep -q "torchrun" || fail "--help"
  ;;
ddp_4_ranks)
  "$launch" -n 4 --timeout 90 -- "$ddp" --steps 30 --bcast-every 5 > "$tmp/out"
  expect_status 0 $? "4-rank ddp_loop"
  grep -q "step 30/30 ok" "$tmp/out" || fail "rank 0 did not report the last step: $(cat "$tmp/out")"
  ;;
ddp_8_ranks)
  "$launch" -n 8 --timeout 90 -- "$ddp" --steps 10 --tp 4 --step-ms 5 --quiet
  expect_status 0 $? "8-rank ddp_loop with TP groups of 4"
  ;;
ddp_single_rank)
  env -u RANK -u WORLD_SIZE -u MASTER_PORT "$ddp" --steps 5 --quiet
  expect_status 0 $? "ddp_loop without a launcher"
  ;;
straggler_completes)
  # A straggler only delays its peers; the job still finishes.
  start=$(date +%s)
  "$launch" -n 2 --timeout 90 -- "$ddp" --steps 6 --straggler-rank 1 --straggler-step 2 --straggler-sec 2 --quiet
  expect_status 0 $? "ddp_loop with a 2 s straggler"
  (( $(date +%s) - start >= 2 )) || fail "the straggler did not delay the job"
  ;;
planted_divergence_hangs)
  # Field report 5: an extra Broadcast on one rank leaves the job hanging, as real NCCL does.
  "$launch" -n 2 --timeout 3 -- "$ddp" --steps 10 --extra-bcast-rank 1 --extra-bcast-step 2 --quiet 2>/dev/null
  expect_status 124 $? "extra Broadcast on one rank"
  "$launch" -n 2 --timeout 3 -- "$ddp" --steps 10 --transport-hang 3 --quiet 2>/dev/null
  expect_status 124 $? "--transport-hang 3"
  ;;
bad_flags)
  "$ddp" --mismatch-kind nonsense 2>/dev/null; [[ $? -ne 0 ]] || fail "bad --mismatch-kind accepted"
  "$ddp" --transport-hang soon 2>/dev/null; expect_status 2 $? "bad --transport-hang"
  RANK=5 WORLD_SIZE=2 "$ddp" 2>"$tmp/err"; expect_status 2 $? "RANK >= WORLD_SIZE"
  grep -q "RANK must be below WORLD_SIZE" "$tmp/err" || fail "no clear error for RANK >= WORLD_SIZE"
  ;;
*) fail "unknown case $1" ;;
esac
echo "PASS: $1"
