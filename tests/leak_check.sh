#!/usr/bin/env bash
# Fails if a test left behind a process started from this build tree, or a /dev/shm
# entry of the sim or of ncclwatch owned by this user. Runs after every other test.
set -u
build=$(cd "${1:?usage: leak_check.sh BUILD_DIR}" && pwd)
bad=0
# Give processes killed by the last tests a moment to be reaped.
for _ in 1 2 3 4 5 6 7 8 9 10; do
  leftovers=()
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [ "$pid" = "$$" ] && continue
    [ "$(stat -c %u "$p" 2>/dev/null)" = "$(id -u)" ] || continue
    state=$(awk '{print $3}' "$p/stat" 2>/dev/null)
    [ "$state" = "Z" ] && continue
    cmd=$( { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null)
    exe=$(readlink "$p/exe" 2>/dev/null)
    case "$cmd $exe" in
      *leak_check.sh*|*ctest*) continue ;;
      *"$build/"*) leftovers+=("$pid: $cmd") ;;
    esac
  done
  [ ${#leftovers[@]} -eq 0 ] && break
  sleep 0.5
done
if [ ${#leftovers[@]} -gt 0 ]; then
  echo "leak_check: processes left behind:"; printf '  %s\n' "${leftovers[@]}"; bad=1
fi
shm=$(find /dev/shm -maxdepth 1 -user "$(id -u)" \( -name 'ncclsim*' -o -name 'ncclwatch*' \) 2>/dev/null)
if [ -n "$shm" ]; then
  echo "leak_check: /dev/shm entries left behind:"; echo "$shm" | sed 's/^/  /'; bad=1
fi
[ $bad -eq 0 ] && echo "leak_check: no processes or shared memory left behind"
exit $bad
