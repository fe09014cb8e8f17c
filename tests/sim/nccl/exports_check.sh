#!/usr/bin/env bash
# Checks libnccl.so.2 of the sim against NCCL's real API.
# The 2.32.3 nccl.h comes from $NCCLWATCH_NCCL_232_HEADER.
#   exports_check.sh declared SIM_LIB
#     every function that nccl.h and nccl_device/host.h of 2.32.3 declare is exported as a
#     strong pnccl<X> plus a weak ncclX, and nothing else is exported but ncclResetDebugInitInternal;
#   exports_check.sh real SIM_LIB REAL_LIB
#     every dynamic symbol of the real library (2.28.9 on this machine) is exported with the same
#     binding, and every further export is declared by 2.32.3.
set -u
mode=$1 sim=$2 real=${3:-} header=${NCCLWATCH_NCCL_232_HEADER:-${NCCLWATCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ncclwatch}/nccl-2.32.3/include/nccl.h}
if [[ -z "$header" || ! -f "$header" ]]; then
  echo "FAIL: no NCCL 2.32.3 nccl.h (NCCLWATCH_NCCL_232_HEADER); run scripts/fetch-nccl-header 2.32.3 and reconfigure"
  exit 1
fi
include=$(dirname "$header")
# Declarations start a line: [NCCL_EXTERN_C] <return type words and stars> [p]ncclName(
declared=$(grep -hoE '^\s*(NCCL_EXTERN_C\s+)?([A-Za-z_][A-Za-z0-9_]*[ *]+)+p?nccl[A-Za-z0-9_]+\s*\(' \
             "$include/nccl.h" "$include/nccl_device/host.h" |
           grep -oE 'nccl[A-Za-z0-9_]+\s*\($' | tr -d ' (' | LC_ALL=C sort -u)
[[ $(wc -l <<<"$declared") -gt 80 ]] || { echo "FAIL: found only $(wc -l <<<"$declared") declarations in $include"; exit 1; }
symbols() { nm -D --defined-only "$1" | awk '{print $3, $2}' | LC_ALL=C sort; }  # "name T|W"
sim_symbols=$(symbols "$sim")
want=$( { for f in $declared; do echo "p$f T"; echo "$f W"; done; echo "ncclResetDebugInitInternal T"; } | LC_ALL=C sort)
fail=0
case $mode in
  declared)
    if ! diff <(echo "$want") <(echo "$sim_symbols") >/dev/null; then
      echo "FAIL: the sim's exports differ from 2.32.3's declarations (< wanted, > exported):"
      diff <(echo "$want") <(echo "$sim_symbols") | grep '^[<>]'
      fail=1
    else
      echo "ok: $(wc -l <<<"$declared") declared functions exported as strong pnccl* + weak nccl*"
    fi ;;
  real)
    [[ -f "$real" ]] || { echo "FAIL: real library '$real' not found"; exit 1; }
    missing=$(LC_ALL=C comm -23 <(symbols "$real") <(echo "$sim_symbols"))
    [[ -z "$missing" ]] || { echo "FAIL: exported by $(basename "$real") but not by the sim:"; echo "$missing"; fail=1; }
    extra=$(LC_ALL=C comm -13 <(symbols "$real" | awk '{print $1}') <(echo "$sim_symbols" | awk '{print $1}') |
            sed 's/^pnccl/nccl/' | LC_ALL=C sort -u)
    undeclared=$(LC_ALL=C comm -23 <(echo "$extra") <(echo "$declared"))
    [[ -z "$undeclared" ]] || { echo "FAIL: exported by the sim, absent from $real and undeclared by 2.32.3:"; echo "$undeclared"; fail=1; }
    [[ $fail -eq 1 ]] || echo "ok: all $(symbols "$real" | wc -l) symbols of the real library exported; $(wc -l <<<"$extra") extra names, all declared by 2.32.3"
    ;;
  *) echo "FAIL: unknown mode '$mode'"; exit 1 ;;
esac
exit $fail
