#!/usr/bin/env bash
# Two copies of the sim's libnccl (distinct files, so two libraries) in one process under
# the preload: see two_nccl_probe.cc. usage: two_nccl_check.sh PROBE PRELOAD SIM_LIB_DIR
set -u
probe=$1 preload=$2 sim_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$(readlink -f "$sim_dir/libnccl.so.2")" "$work/libnccl-a.so.2"
cp "$(readlink -f "$sim_dir/libnccl.so.2")" "$work/libnccl-b.so.2"
env LD_LIBRARY_PATH="$sim_dir" LD_PRELOAD="$preload" NCCLWATCH_JOB_ID="two-nccl-$$" \
  timeout 60 "$probe" "$work/libnccl-a.so.2" "$work/libnccl-b.so.2"
