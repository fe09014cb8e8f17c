# NVIDIA's NCCL wheels from PyPI, unpacked into a per-user cache. Sourced by
# scripts/fetch-nccl-header and scripts/compat; defines functions only.
#
# Cache layout (nothing here may be committed; the tests read it from the cache):
#   $NCCL_WHEEL_CACHE/nccl-VERSION/include/nccl.h   the wheel's headers
#   $NCCL_WHEEL_CACHE/nccl-VERSION/lib/libnccl.so.2 its library (only when asked for)
#   $NCCL_WHEEL_CACHE/nccl-VERSION/wheel            the wheel's file name, one line
# Each part is unpacked into a temporary directory and renamed into place, so a reader
# never sees half of one and two writers racing keep the first.

NCCL_WHEEL_CACHE=${NCCLWATCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ncclwatch}

# nccl_wheel_package VERSION: the PyPI package that ships VERSION: nvidia-nccl-cu13 from
# 2.27 on (its first release), nvidia-nccl-cu12 before.
nccl_wheel_package() {
  local major minor
  IFS=. read -r major minor _ <<<"$1"
  if (( major > 2 || (major == 2 && minor >= 27) )); then echo nvidia-nccl-cu13; else echo nvidia-nccl-cu12; fi
}

# nccl_wheel_valid_version VERSION: 2.32.3 or 2.25.1.post1 (PyPI re-uploads).
nccl_wheel_valid_version() { [[ "$1" =~ ^[0-9]+\.[0-9]+\.[0-9]+(\.post[0-9]+)?$ ]]; }

# nccl_wheel_fetch VERSION PART... (PART: include, lib): makes sure each part is in
# $NCCL_WHEEL_CACHE/nccl-VERSION/, downloading the wheel with pip only when one is missing.
# On failure prints one line to stderr and returns 1.
nccl_wheel_fetch() {
  local version=$1; shift
  local dir="$NCCL_WHEEL_CACHE/nccl-$version" missing=() part
  for part in "$@"; do
    case $part in
      include) [[ -f "$dir/include/nccl.h" ]] || missing+=(include) ;;
      lib) [[ -f "$dir/lib/libnccl.so.2" ]] || missing+=(lib) ;;
      *) echo "nccl_wheel_fetch: unknown part '$part'" >&2; return 1 ;;
    esac
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  local package work status=0
  package=$(nccl_wheel_package "$version")
  work=$(mktemp -d)
  _nccl_wheel_download "$package" "$version" "$work" && _nccl_wheel_install "$work" "$dir" "${missing[@]}" || status=1
  rm -rf "$work"
  return $status
}

_nccl_wheel_download() {
  local package=$1 version=$2 work=$3 wheel
  if ! python3 -m pip download --quiet --no-deps --only-binary=:all: "$package==$version" -d "$work" \
      >"$work/pip.log" 2>&1; then
    echo "cannot download $package==$version with pip: $(grep -m1 -i error "$work/pip.log" || tail -n1 "$work/pip.log")" >&2
    return 1
  fi
  wheel=$(find "$work" -maxdepth 1 -name '*.whl' | head -n1)
  [[ -n "$wheel" ]] || { echo "pip downloaded no wheel for $package==$version" >&2; return 1; }
}

# Unpacks the parts of the wheel in $work into $dir, each renamed into place.
_nccl_wheel_install() {
  local work=$1 dir=$2; shift 2
  local wheel part
  wheel=$(find "$work" -maxdepth 1 -name '*.whl' | head -n1)
  mkdir -p "$dir"
  for part in "$@"; do
    python3 - "$wheel" "$work/x" "$part" <<'PY' || { echo "cannot unpack $part/ from $(basename "$wheel")" >&2; return 1; }
import sys, zipfile
wheel, out, part = sys.argv[1:]
want = {"include": "/include/nccl.h", "lib": "/lib/libnccl.so.2"}[part]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if f"/{part}/" in n and not n.endswith("/")]
    if not any(n.endswith(want) for n in names):
        sys.exit(1)
    z.extractall(out, names)
PY
    local unpacked
    unpacked=$(find "$work/x" -type d -name "$part" -path "*/nvidia/*" | head -n1)
    rm -rf "$dir/$part.tmp.$$"
    cp -r "$unpacked" "$dir/$part.tmp.$$"
    mv -T "$dir/$part.tmp.$$" "$dir/$part" 2>/dev/null || rm -rf "$dir/$part.tmp.$$"  # lost a race: keep the winner's
  done
  basename "$wheel" >"$dir/wheel.tmp.$$" && mv -f "$dir/wheel.tmp.$$" "$dir/wheel"
}
