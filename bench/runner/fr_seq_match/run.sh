#!/usr/bin/env bash
# run.sh NAME SCRIPT ARGS...: one 2-rank torchrun job on the sim under `ncclwatch run --stall 3`, with
# Flight Recorder on; sitecustomize.py plants a straggler on a marker AllReduce before the job's
# destroy_process_group and writes FR's trace; show.py DIR prints both side by side.
# Experiment: torch seq vs ncclwatch #N; see tools/README.md "Matching Flight Recorder".
set -euo pipefail
name=$1; shift
W=$(cd "$(dirname "$0")/../../.." && pwd); V=$("$W/scripts/setup" --print-torch-venv)
out=${SEQEXP_DIR:-/tmp/seqexp}/$name; rm -rf "$out"; mkdir -p "$out/nw"
export SEQEXP_OUT=$out PYTHONPATH=$(cd "$(dirname "$0")" && pwd) OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 BUILD_DIR=$W/build
export TORCH_NCCL_TRACE_BUFFER_SIZE=20000 TORCH_FR_BUFFER_SIZE=20000
timeout 300 $W/scripts/sim-exec $W/build/bin/ncclwatch run --stall 3 --dump-dir "$out/nw" --job-id seqexp-$name -- \
  $V/bin/python -m torch.distributed.run --nproc-per-node 2 --master-addr 127.0.0.1 --master-port $((29000 + RANDOM % 900)) \
  "$@" > "$out/log" 2>&1 || echo "exit $?"
$W/build/bin/ncclwatch gc --job seqexp-$name >/dev/null 2>&1 || true
ls "$out" "$out/nw"
