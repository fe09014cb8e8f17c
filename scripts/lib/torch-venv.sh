# Sourced by scripts: where the pinned PyTorch venv lives, and whether it is complete.
#
# TORCH_VENV overrides the location. The default is a per-user cache directory outside the
# checkout, keyed by a hash of torch-pins.txt and the Python version, so that a clean clone and
# CI on the same machine reuse it, and a change of pins makes a new one.

ncclwatch_torch_pins="$(dirname "${BASH_SOURCE[0]}")/torch-pins.txt"

ncclwatch_cache_dir() {
  echo "${NCCLWATCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ncclwatch}"
}

ncclwatch_torch_venv() {
  if [[ -n "${TORCH_VENV:-}" ]]; then echo "$TORCH_VENV"; return; fi
  local py key
  py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  key=$( { cat "$ncclwatch_torch_pins"; echo "python $py"; } | sha256sum | cut -c1-12)
  echo "$(ncclwatch_cache_dir)/torch-venv-$key"
}

# A venv counts as complete only once setup wrote its stamp after every install step succeeded.
ncclwatch_torch_venv_ready() {
  [[ -f "$1/.ncclwatch-complete" && -x "$1/bin/python" ]]
}
