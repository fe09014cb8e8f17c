# Every dependency comes from a Debian package (scripts/setup installs them) or from the
# CUDA Toolkit image under /usr/local/cuda. Missing pieces fail here with a clear message.

set(CUDAToolkit_ROOT "/usr/local/cuda" CACHE PATH "CUDA Toolkit root")
find_package(CUDAToolkit)
if(NOT CUDAToolkit_FOUND)
  message(FATAL_ERROR
    "ncclwatch: CUDA Toolkit not found. Install it or pass -DCUDAToolkit_ROOT=/path/to/cuda "
    "(headers are needed for cuda_runtime_api.h; no GPU is needed).")
endif()

find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${NCCL_ROOT}/include ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include
  DOC "Directory holding nccl.h")
if(NOT NCCL_INCLUDE_DIR)
  message(FATAL_ERROR
    "ncclwatch: nccl.h not found. Looked in ${CUDAToolkit_INCLUDE_DIRS} and /usr/local/cuda/include. "
    "Pass -DNCCL_ROOT=/path/to/nccl (the directory with include/nccl.h).")
endif()

# The real libraries, used only by pass-through fidelity tests. Absent is fine.
find_library(NCCL_REAL_LIBRARY NAMES libnccl.so.2 nccl
  HINTS ${NCCL_ROOT}/lib ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64 NO_CACHE)
find_library(CUDART_REAL_LIBRARY NAMES libcudart.so.13 cudart
  HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64 NO_CACHE)
find_program(NVCC_EXECUTABLE nvcc HINTS ${CUDAToolkit_BIN_DIR} /usr/local/cuda/bin)
# NVIDIA's driver stub (stubs/libcuda.so): the real driver's exports, each answering
# CUDA_ERROR_STUB_LIBRARY. Empty when the toolkit has none.
set(NCCLWATCH_CUDA_DRIVER_STUB "")
foreach(_dir IN LISTS CUDAToolkit_LIBRARY_DIR CUDAToolkit_LIBRARY_ROOT)
  if(NOT NCCLWATCH_CUDA_DRIVER_STUB AND EXISTS ${_dir}/stubs/libcuda.so)
    set(NCCLWATCH_CUDA_DRIVER_STUB ${_dir}/stubs/libcuda.so)
  endif()
endforeach()

# Header-only inside the preload (see preload/CMakeLists.txt), normal elsewhere.
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(absl REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Catch2 2 REQUIRED)
find_package(Threads REQUIRED)
find_path(LIBUNWIND_INCLUDE_DIR libunwind.h)
if(NOT LIBUNWIND_INCLUDE_DIR)
  message(FATAL_ERROR "ncclwatch: libunwind.h not found; run scripts/setup (Debian package libunwind-dev).")
endif()
find_package(benchmark QUIET)

# Headers from the CUDA image for targets that must not link libcudart (the sim, the preload).
add_library(ncclwatch_cuda_headers INTERFACE)
target_include_directories(ncclwatch_cuda_headers SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS} ${NCCL_INCLUDE_DIR})
