#!/bin/sh
# systemd-analyze verify on deploy/systemd/ncclwatch-exporter.service, with ExecStart pointed at
# this build's ncclwatch (verify requires the binary to exist). Any warning about the unit fails.
# Usage: systemd_verify.sh SOURCE_DIR NCCLWATCH_BINARY
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s|/usr/local/bin/ncclwatch|$2|" "$1/deploy/systemd/ncclwatch-exporter.service" >"$tmp/ncclwatch-exporter.service"
out=$(systemd-analyze verify --man=no "$tmp/ncclwatch-exporter.service" 2>&1) || { echo "$out"; exit 1; }
# verify exits 0 on some problems it only prints; those about our unit count as failures.
if printf '%s\n' "$out" | grep -q "ncclwatch-exporter.service"; then echo "$out"; exit 1; fi
echo "systemd-analyze verify: ok"
