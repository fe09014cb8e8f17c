#!/usr/bin/env bash
# Runs a torch test with the pinned venv's python: run.sh SCRIPT [ARGS...].
# A missing venv is a failure, never a skip: the torch tests are the suite's reference client.
set -euo pipefail
source "$NCCLWATCH_SOURCE_DIR/scripts/lib/torch-venv.sh"
venv=$(ncclwatch_torch_venv)
if ! ncclwatch_torch_venv_ready "$venv"; then
  echo "FAIL: no PyTorch venv at $venv; run scripts/setup --torch (scripts/test does)" >&2
  exit 1
fi
exec "$venv/bin/python" "$@"
