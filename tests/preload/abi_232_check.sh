#!/usr/bin/env bash
# Compiles abi_232_check.cc against the real NCCL 2.32.3 headers (scripts/fetch-nccl-header
# 2.32.3): the preload's table and its own 2.29+ declarations must match them.
# usage: NCCLWATCH_NCCL_232_HEADER=.../nccl.h abi_232_check.sh CXX SOURCE_DIR CUDA_INCLUDE_DIR
set -u
cxx=$1 source=$2 cuda_include=$3
header=${NCCLWATCH_NCCL_232_HEADER:-${NCCLWATCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ncclwatch}/nccl-2.32.3/include/nccl.h}
if [[ ! -f "$header" ]]; then
  echo "FAIL: no NCCL 2.32.3 nccl.h (NCCLWATCH_NCCL_232_HEADER); run scripts/fetch-nccl-header 2.32.3 and reconfigure"
  exit 1
fi
if ! "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"$(dirname "$header")" -I"$source" \
     -isystem "$cuda_include" "$(dirname "$0")/abi_232_check.cc"; then
  echo "FAIL: preload/hooks/nccl_api_table.h or nccl_abi_232.h does not match $header"
  exit 1
fi
echo "ok: the preload's NCCL table and 2.29+ declarations match $header"
