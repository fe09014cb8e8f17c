#!/usr/bin/env bash
# Kept for older instructions: the hook overhead is now the "hooks" section of scripts/bench,
# which alternates runs with and without the preload and pairs them (see BENCHMARKS.md).
set -eu
exec "$(cd "$(dirname "$0")/../.." && pwd)/scripts/bench" --only hooks
