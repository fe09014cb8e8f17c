# Sanitizer and fuzzing builds (scripts/test --sanitize, scripts/fuzz; see fuzz/README.md).
#
#   -DNCCLWATCH_SANITIZE=address,undefined   ASan + UBSan; any UBSan finding aborts (no recovery)
#   -DNCCLWATCH_SANITIZE=thread              TSan
#   -DNCCLWATCH_FUZZ=ON                      clang only: every target gets libFuzzer coverage and
#                                            fuzz/ builds real libFuzzer binaries (otherwise fuzz/
#                                            builds corpus-replay drivers)
#
# Flags go on every target of the build, so a sanitizer build lives in its own directory
# (build-asan, build-tsan, build-fuzz). NCCLWATCH_SANITIZER_PRELOAD names the runtime a process
# that is not instrumented would need first in LD_PRELOAD (empty when none). Tests that inject
# libncclwatch.so do not run sanitized: see scripts/lib/sanitize-test.sh for why.
set(NCCLWATCH_SANITIZE "" CACHE STRING "Sanitizers for every target: address,undefined | address | undefined | thread")
option(NCCLWATCH_FUZZ "Build fuzz/ as libFuzzer binaries (clang only)" OFF)
set(NCCLWATCH_SANITIZER_PRELOAD "")

if(NCCLWATCH_SANITIZE)
  string(REPLACE "," ";" _ncclwatch_sanitizers "${NCCLWATCH_SANITIZE}")
  foreach(_s IN LISTS _ncclwatch_sanitizers)
    if(NOT _s MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "NCCLWATCH_SANITIZE: '${_s}' is not one of address, undefined, thread")
    endif()
  endforeach()
  if("thread" IN_LIST _ncclwatch_sanitizers AND "address" IN_LIST _ncclwatch_sanitizers)
    message(FATAL_ERROR "NCCLWATCH_SANITIZE: thread and address cannot be combined")
  endif()
  add_compile_options(-fsanitize=${NCCLWATCH_SANITIZE} -fno-omit-frame-pointer)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 reports false maybe-uninitialized warnings in libstdc++'s <regex> (pulled in by
    # Catch2) once sanitizer instrumentation changes inlining; with -Werror a fresh sanitizer
    # build would stop there. The plain build keeps the warning.
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
  add_link_options(-fsanitize=${NCCLWATCH_SANITIZE})
  if("undefined" IN_LIST _ncclwatch_sanitizers)
    # A UBSan report is an error that fails the test, not a warning in its log.
    add_compile_options(-fno-sanitize-recover=undefined)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # Not part of GCC's "undefined" group: a double too large for its integer type.
      add_compile_options(-fsanitize=float-cast-overflow -fno-sanitize-recover=float-cast-overflow)
    endif()
  endif()
  if("thread" IN_LIST _ncclwatch_sanitizers AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC warns that TSan does not model std::atomic_thread_fence (core/shm/seqlock.h). Every
    # field a seqlock guards is itself a std::atomic, so no race report can hinge on a fence.
    add_compile_options(-Wno-tsan)
  endif()
  set(_ncclwatch_runtime "")
  if("address" IN_LIST _ncclwatch_sanitizers)
    set(_ncclwatch_runtime libasan.so)
  elseif("thread" IN_LIST _ncclwatch_sanitizers)
    set(_ncclwatch_runtime libtsan.so)
  endif()
  if(_ncclwatch_runtime AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${_ncclwatch_runtime}
                    OUTPUT_VARIABLE _ncclwatch_runtime_path OUTPUT_STRIP_TRAILING_WHITESPACE)
    file(REAL_PATH "${_ncclwatch_runtime_path}" NCCLWATCH_SANITIZER_PRELOAD)
    if(NOT EXISTS "${NCCLWATCH_SANITIZER_PRELOAD}")
      message(FATAL_ERROR "NCCLWATCH_SANITIZE: ${_ncclwatch_runtime} not found (Debian: libasan8 / libtsan2)")
    endif()
  elseif(_ncclwatch_runtime)
    # clang links its runtime statically into executables only, which leaves the shared libraries
    # (linked with --no-undefined) unresolved: they get the shared runtime, found by RPATH. So a
    # clang build is for the fuzzers (executables that load none of them); g++ builds run the suite.
    string(REPLACE ".so" "" _ncclwatch_runtime_name "${_ncclwatch_runtime}")
    string(REPLACE "lib" "" _ncclwatch_runtime_name "${_ncclwatch_runtime_name}")
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.${_ncclwatch_runtime_name}-x86_64.so
                    OUTPUT_VARIABLE NCCLWATCH_SANITIZER_PRELOAD OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT EXISTS "${NCCLWATCH_SANITIZER_PRELOAD}")
      message(FATAL_ERROR "NCCLWATCH_SANITIZE: clang's ${_ncclwatch_runtime_name} runtime not found (libclang-rt-14-dev)")
    endif()
    get_filename_component(_ncclwatch_runtime_dir "${NCCLWATCH_SANITIZER_PRELOAD}" DIRECTORY)
    string(APPEND CMAKE_SHARED_LINKER_FLAGS " -shared-libsan -Wl,-rpath,${_ncclwatch_runtime_dir}")
    string(APPEND CMAKE_MODULE_LINKER_FLAGS " -shared-libsan -Wl,-rpath,${_ncclwatch_runtime_dir}")
  endif()
  message(STATUS "ncclwatch: sanitizers ${NCCLWATCH_SANITIZE}; preload runtime '${NCCLWATCH_SANITIZER_PRELOAD}'")
endif()

if(NCCLWATCH_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NCCLWATCH_FUZZ needs clang (libFuzzer): configure with CXX=clang++-14 CC=clang-14")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
