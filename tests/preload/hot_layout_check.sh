#!/usr/bin/env bash
# The hook's hot path stays compact (preload/hooks/hot_path.h): the functions every
# collective, group, P2P call and host sync (the runtime's, and the driver's that a static
# runtime calls) runs through lie in one span of at most 16 KB
# (four pages; spread over the library they were ~10 pages, each a cold miss after a compute
# phase), and the library's initial-exec TLS stays small enough for a dlopen'ed copy to load
# (glibc keeps 512 bytes of static TLS for those by default; we allow ourselves 128).
# usage: hot_layout_check.sh LIBNCCLWATCH
set -u
lib=$1
fail=0
# RealNccl (the common case), the tracker's RecordCompletion (tracker_record.h) with its Claim
# and DriverRecord, and the hooks' clock are inlined into these since 2026-11-26, and the group
# ends' depth count (group_depth.h) too, so they are no symbols of their own.
hot='^(ncclAllReduce|ncclSend|ncclGroupStart|ncclGroupEnd|cudaStreamSynchronize|cuStreamSynchronize)$
^ncclwatch::preload::(BeginOp|EndOp|SettleAll|BeginSync|SettleGroupRange|EndOutermostGroup|NextGroupKey)\(
^ncclwatch::preload::CommRegistry::Find\(
^ncclwatch::shm::CommSlot::Append\('
expected=15
# address, size, name of every defined text symbol (cold clones are the point of the split: not counted)
symbols=$(nm -C --defined-only -S "$lib" | awk '$3 ~ /^[tT]$/ { name = $4; for (i = 5; i <= NF; ++i) name = name " " $i; print $1, $2, name }' | grep -v '\[clone \.cold\]')
found=0; lo=; hi=
while read -r addr size name; do
  matched=0
  while read -r pattern; do
    [[ "$name" =~ $pattern ]] && matched=1
  done <<< "$hot"
  [ "$matched" = 1 ] || continue
  found=$((found + 1))
  start=$((16#$addr)); end=$((16#$addr + 16#$size))
  if [ -z "$lo" ] || [ "$start" -lt "$lo" ]; then lo=$start; fi
  if [ -z "$hi" ] || [ "$end" -gt "$hi" ]; then hi=$end; fi
done <<< "$symbols"
if [ "$found" -lt "$expected" ]; then
  echo "FAIL: found $found of the $expected hot-path functions (symbols renamed or stripped?)"; fail=1
else
  span=$((hi - lo))
  echo "hot path: $found functions in $span bytes"
  if [ "$span" -gt 16384 ]; then echo "FAIL: hot path spans $span bytes (> 16384)"; fail=1; fi
fi
tls=$(readelf -lW "$lib" | awk '$1 == "TLS" { print $6 }')
tls_bytes=$((${tls:-0}))
echo "static TLS: $tls_bytes bytes"
if [ "$tls_bytes" -gt 128 ]; then echo "FAIL: static TLS $tls_bytes bytes (> 128)"; fail=1; fi
exit $fail
