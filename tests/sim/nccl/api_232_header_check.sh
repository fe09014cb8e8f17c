#!/usr/bin/env bash
# Compiles api_232_header_check.cc against the real NCCL 2.32.3 headers: every type and
# signature of sim/nccl/nccl_api_232.h must match them (static_asserts).
# usage: NCCLWATCH_NCCL_232_HEADER=.../nccl.h api_232_header_check.sh CXX SIM_NCCL_DIR CUDA_INCLUDE_DIR
set -u
cxx=$1 sim_dir=$2 cuda_include=$3 header=${NCCLWATCH_NCCL_232_HEADER:-${NCCLWATCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ncclwatch}/nccl-2.32.3/include/nccl.h}
if [[ -z "$header" || ! -f "$header" ]]; then
  echo "FAIL: no NCCL 2.32.3 nccl.h (NCCLWATCH_NCCL_232_HEADER); run scripts/fetch-nccl-header 2.32.3 and reconfigure"
  exit 1
fi
include=$(dirname "$header")
if ! "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"$include" -I"$sim_dir" -isystem "$cuda_include" \
     "$(dirname "$0")/api_232_header_check.cc"; then
  echo "FAIL: sim/nccl/nccl_api_232.h does not match $header"
  exit 1
fi
echo "ok: nccl_api_232.h matches $header"
