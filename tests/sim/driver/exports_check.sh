#!/usr/bin/env bash
# Usage: exports_check.sh <our libcuda.so.1> <real stub libcuda.so>
# Checks that our library exports exactly the stub's function names, that neither carries symbol
# versions (the real libcuda.so.1 has none), and that the SONAME is libcuda.so.1.
set -euo pipefail
ours=$1 stub=$2
exports() {  # defined global/weak dynamic symbols, one name a line
  readelf --dyn-syms -W "$1" | awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") && $4 == "FUNC" {print $8}' | sort -u
}
fail=0
if ! diff <(exports "$stub") <(exports "$ours") >/tmp/exports_check.$$; then
  echo "export names differ from the stub (< stub only, > ours only):"
  cat /tmp/exports_check.$$
  fail=1
fi
rm -f /tmp/exports_check.$$
n=$(exports "$ours" | wc -l)
[[ $n -gt 600 ]] || { echo "only $n exports"; fail=1; }
if exports "$ours" | grep -q '@'; then echo "versioned exports found"; fail=1; fi
if readelf -V -W "$ours" | grep -q 'Version definition'; then echo "has version definitions"; fail=1; fi
readelf -d "$ours" | grep -q 'SONAME.*\[libcuda.so.1\]' || { echo "SONAME is not libcuda.so.1"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok: $n exports, same names as $stub, unversioned, SONAME libcuda.so.1"
exit $fail
