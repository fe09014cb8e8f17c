// The CUDA hooks, generated from cuda_api_table.h: one exported, unversioned function per row.
//
// cudaGraphInstantiate and cudaGraphExecUpdate are defined in their wider CUDA 11 form
// (cuda_api_table.h says why): the CUDA 12 header's declarations of them are renamed out of
// the way, here, before anything includes it.
#define cudaGraphInstantiate ncclwatch_cuda12_header_cudaGraphInstantiate
#define cudaGraphExecUpdate ncclwatch_cuda12_header_cudaGraphExecUpdate
#include <cuda_runtime_api.h>
#undef cudaGraphInstantiate
#undef cudaGraphExecUpdate
#include <cuda.h>

#include "preload/hooks/cuda_api_table.h"
#include "preload/hooks/cuda_hook.h"
#include "preload/hooks/hook_macros.h"
#include "preload/hooks/hot_path.h"

// Each exported name is its own hook: undo cuda.h's and cuda_runtime_api.h's renaming macros.
#undef cuStreamBeginCapture
#undef cuStreamBeginCaptureToGraph
#undef cuStreamEndCapture
#undef cudaStreamBeginCapture
#undef cudaStreamBeginCaptureToGraph
#undef cudaStreamEndCapture
#undef cuGraphInstantiate
#undef cuGraphInstantiateWithParams
#undef cuGraphExecUpdate
#undef cuGraphLaunch
#undef cudaGraphInstantiateWithParams
#undef cudaGraphLaunch

// A host sync sits on the step's path with the ops (hot_path.h); captures are rare.
#define NCCLWATCH_CUDA_KIND_ATTRIBUTES_sync NCCLWATCH_HOT
#define NCCLWATCH_CUDA_KIND_ATTRIBUTES_capture
#define NCCLWATCH_CUDA_KIND_ATTRIBUTES_graph
#define NCCLWATCH_CUDA_KIND_ATTRIBUTES_graph_launch
#define NCCLWATCH_DEFINE_CUDA_EXPORT(kind, library, result, name, params, args, missing, track) \
  NCCLWATCH_EXPORT NCCLWATCH_CUDA_KIND_ATTRIBUTES_##kind result name params {                   \
    NCCLWATCH_CUDA_HOOK_BODY(library, result, name, params, args, missing, track);             \
  }
NCCLWATCH_CUDA_API(NCCLWATCH_DEFINE_CUDA_EXPORT)
NCCLWATCH_CUDA_GRAPH_API(NCCLWATCH_DEFINE_CUDA_EXPORT)
#undef NCCLWATCH_DEFINE_CUDA_EXPORT
