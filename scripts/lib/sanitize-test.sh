# scripts/test --sanitize[=short]: the suite under ASan+UBSan (build-asan), the watcher under
# TSan (build-tsan), and the fuzz targets under libFuzzer (build-fuzz, via scripts/fuzz).
# Sourced by scripts/test; defines ncclwatch_sanitize_test MODE, MODE = full | short.
#
# What runs where, and why (see also fuzz/README.md):
#  * Nothing that injects libncclwatch.so with LD_PRELOAD runs sanitized (watchdog_*, the
#    preload_* end-to-end and do-no-harm tests, example.*, torch). A sanitizer runtime resolves its
#    interceptors with dlsym(RTLD_NEXT, ...) while it initializes; the preload interposes dlsym
#    (preload/dlsym_hook.cc), so that lookup runs the preload's instrumented hook before the runtime
#    is ready and the process dies (TSan: SIGSEGV in __tsan_func_entry called from the dlsym hook,
#    with LD_PRELOAD=libtsan.so.2:libncclwatch.so as well). Python hosts (stacks_python_*) are not
#    instrumented either. These are listed as not covered.
#  * ASan+UBSan: unit tests, the CLI tests, the sim tests and the corpus replays of fuzz/.
#  * TSan: what is multi-threaded and runs without the preload: the shm segment (lock-free
#    writers and readers) and the CUDA runtime sim (stream threads, events, host functions); in
#    full mode the other sims and the watchdog's logic too. Not stacks_test: under TSan it sees
#    TSan's own thread (3 threads where it expects 2), a test-side race (capture_test.cc:35, a
#    plain int incremented by several threads), timed_mutex unlocks TSan did not see locked
#    (libtsan lacks pthread_mutex_clocklock), and a crash in libunwind.so.8's thread-exit
#    destructor inside TSan; reported to the core/stacks owner.
#  * Every process writes its sanitizer reports to <build>/sanitizer-logs/, and any report there
#    fails the stage.

ncclwatch_sanitize_excluded_torch() {
  echo "sanitize: torch tests (ctest label torch) are not run under sanitizers: torch and python are not instrumented"
  echo "sanitize: tests that inject libncclwatch.so (watchdog_*, preload e2e, example.*) are not run either:"
  echo "sanitize:   the runtimes' own dlsym lookups reach the preload's dlsym hook before they are initialized"
}

# ncclwatch_sanitize_configure BUILD_DIR SANITIZERS [cmake args...]
ncclwatch_sanitize_configure() {
  local build=$1 sanitizers=$2
  shift 2
  local cuda=${CUDA_HOME:-/usr/local/cuda}
  local nccl232=${NCCLWATCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ncclwatch}/nccl-2.32.3/include/nccl.h
  local header_args=()
  [[ -f "$nccl232" ]] && header_args=(-DNCCLWATCH_NCCL_232_HEADER="$nccl232")
  # -O1 -g, as the sanitizers recommend: at -O0 the scale and timing tests (cli_test's 2^20 ranks,
  # detect_healthy) ran 100x slower than release and missed their deadlines.
  cmake -S "$root" -B "$build" -G Ninja -DCUDAToolkit_ROOT="$cuda" "${header_args[@]}" \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-O1 -DCMAKE_CXX_FLAGS=-O1 -DNCCLWATCH_SANITIZE="$sanitizers" "$@" >/dev/null
}

# ncclwatch_sanitize_ctest BUILD_DIR [ctest args...]: ctest with every sanitizer report logged
# under BUILD_DIR/sanitizer-logs; fails when ctest fails or any report was written.
ncclwatch_sanitize_ctest() {
  local build=$1 logs status=0
  shift
  logs=$build/sanitizer-logs
  rm -rf "$logs"
  mkdir -p "$logs"
  (
    cd "$build"
    # verify_asan_link_order=0: cli_test's `ncclwatch run -- env` preloads a sanitized stand-in
    # library (tests/cli/fake_preload.c, empty) into /usr/bin/env; only ASan's check that its
    # runtime comes first objects to that.
    export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=1:log_path=$logs/asan:${ASAN_OPTIONS_EXTRA:-}"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$logs/ubsan"
    export TSAN_OPTIONS="second_deadlock_stack=1:log_path=$logs/tsan:${TSAN_OPTIONS_EXTRA:-}"
    ctest --output-on-failure -j "${CTEST_JOBS:-2}" "$@"
  ) || status=1
  if compgen -G "$logs/*" >/dev/null; then
    echo "sanitize: sanitizer reports in $logs:"
    for f in "$logs"/*; do
      echo "---- $f"
      head -60 "$f"
    done
    status=1
  fi
  return $status
}

# Tests that inject libncclwatch.so (see above) or run python hosts: never run sanitized.
ncclwatch_sanitize_not_covered='^(watchdog_.*|preload_(e2e|rtld_local|missing_real|dlsym|fidelity|inert|exports|reach_.*)|example\..*|stacks_python_.*)$'

# ASan+UBSan over the unit tests, the CLI and the corpus replays (short), or everything that can
# run instrumented (full).
ncclwatch_sanitize_asan() {
  local mode=$1 build=$root/build-asan
  local short_tests='^(format_test|dump_test|analyze_test|core_shm|core_watch_.*|detect_.*|preload_reach_view|cli_test|fuzz_replay\..*)$'
  ncclwatch_sanitize_configure "$build" address,undefined
  if [[ $mode == short ]]; then
    cmake --build "$build" -j "${BUILD_JOBS:-2}" --target format_test dump_test analyze_test core_shm_tests \
      core_watch_tests detect_tests preload_reach_view_tests cli_test fuzz_dump_reader fuzz_shm_segment fuzz_env \
      fuzz_trigger_file fuzz_fault_spec
    echo "sanitize: ASan+UBSan (build-asan): unit tests, CLI tests and fuzz corpus replays"
    ncclwatch_sanitize_ctest "$build" -R "$short_tests"
  else
    cmake --build "$build" -j "${BUILD_JOBS:-2}"
    echo "sanitize: ASan+UBSan (build-asan): every test but labels torch, compat (they inject the preload) and $ncclwatch_sanitize_not_covered"
    ncclwatch_sanitize_ctest "$build" -LE "^(torch|compat)$" -E "$ncclwatch_sanitize_not_covered"
  fi
}

# TSan over the lock-free shm segment and the cudart sim (short), plus the other sims, the
# detector and the watchdog's logic (full).
ncclwatch_sanitize_tsan() {
  local mode=$1 build=$root/build-tsan
  ncclwatch_sanitize_configure "$build" thread
  if [[ $mode == short ]]; then
    cmake --build "$build" -j "${BUILD_JOBS:-2}" --target core_shm_tests sim_cudart_tests
    echo "sanitize: TSan (build-tsan): core_shm, sim_cudart.unit"
    ncclwatch_sanitize_ctest "$build" -R '^(core_shm|sim_cudart\.unit)$'
  else
    cmake --build "$build" -j "${BUILD_JOBS:-2}"
    echo "sanitize: TSan (build-tsan): core_shm, sim_*, detect_*, core_watch_*"
    ncclwatch_sanitize_ctest "$build" -R '^(core_shm|sim_.*|detect_.*|core_watch_.*)$' \
      -E "$ncclwatch_sanitize_not_covered"
  fi
}

ncclwatch_sanitize_test() {
  local mode=$1 start=$SECONDS status=0
  "$root/scripts/setup"
  ncclwatch_sanitize_excluded_torch
  ncclwatch_sanitize_asan "$mode" || status=1
  ncclwatch_sanitize_tsan "$mode" || status=1
  local seconds=30
  [[ $mode == short ]] && seconds=${NCCLWATCH_FUZZ_SECONDS:-10}
  "$root/scripts/fuzz" --seconds "$seconds" || status=1
  echo "sanitize: $mode stage took $((SECONDS - start)) s; $([[ $status == 0 ]] && echo passed || echo FAILED)"
  return $status
}
