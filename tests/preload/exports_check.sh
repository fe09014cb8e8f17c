#!/usr/bin/env bash
# libncclwatch.so exports exactly the hooked API (capture begin/end, driver syncs, entry-point lookups and CUDA graph calls included), dlsym and _exit, unversioned, and depends on nothing
# but the C runtime (static libstdc++/libgcc, no libunwind, abseil, CUDA or NCCL).
# usage: exports_check.sh LIBNCCLWATCH
set -u
lib=$1
fail=0
expected="dlsym _exit cudaDeviceSynchronize cudaEventSynchronize cudaStreamSynchronize cudaStreamSynchronize_ptsz
ncclAllGather ncclAllReduce ncclAlltoAll ncclBcast ncclBroadcast ncclCommAbort ncclCommDestroy
ncclCommFinalize ncclCommGetAsyncError ncclCommInitAll ncclCommInitRank ncclCommInitRankConfig
ncclCommInitRankScalable ncclCommRevoke ncclCommShrink ncclCommSplit ncclGather ncclGetUniqueId
ncclGroupEnd ncclGroupSimulateEnd ncclGroupStart ncclRecv ncclReduce ncclReduceScatter ncclScatter ncclSend
ncclAllReduceConfig ncclBroadcastConfig ncclReduceConfig ncclAllGatherConfig ncclReduceScatterConfig
ncclAlltoAllConfig ncclGatherConfig ncclScatterConfig ncclPutSignal ncclSignal ncclWaitSignal
ncclCommGrow ncclCommSuspend ncclCommResume ncclCommGetUniqueId ncclSetEncryption
cudaStreamBeginCapture cudaStreamBeginCapture_ptsz cudaStreamBeginCaptureToGraph cudaStreamBeginCaptureToGraph_ptsz cudaStreamEndCapture cudaStreamEndCapture_ptsz
cuStreamBeginCapture cuStreamBeginCapture_ptsz cuStreamBeginCapture_v2 cuStreamBeginCapture_v2_ptsz cuStreamBeginCaptureToGraph cuStreamBeginCaptureToGraph_ptsz cuStreamEndCapture cuStreamEndCapture_ptsz
cuStreamSynchronize cuStreamSynchronize_ptsz cuEventSynchronize cuCtxSynchronize cuCtxSynchronize_v2
cuGetProcAddress cuGetProcAddress_v2 cudaGetDriverEntryPoint cudaGetDriverEntryPoint_ptsz
cudaGetDriverEntryPointByVersion cudaGetDriverEntryPointByVersion_ptsz
cudaGraphInstantiate cudaGraphInstantiateWithFlags cudaGraphInstantiateWithParams cudaGraphInstantiateWithParams_ptsz cudaGraphExecUpdate cudaGraphExecDestroy cudaGraphDestroy cudaGraphLaunch cudaGraphLaunch_ptsz
cuGraphInstantiate cuGraphInstantiate_v2 cuGraphInstantiateWithFlags cuGraphInstantiateWithParams cuGraphInstantiateWithParams_ptsz cuGraphExecUpdate cuGraphExecUpdate_v2 cuGraphExecDestroy cuGraphDestroy cuGraphLaunch cuGraphLaunch_ptsz"
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
want=$(echo $expected | tr ' ' '\n' | sort)
if [ "$exported" != "$want" ]; then
  echo "FAIL: exported symbols differ from the hooked API:"; diff <(echo "$want") <(echo "$exported"); fail=1
else
  echo "ok: exports exactly $(echo "$want" | wc -l) hooked symbols"
fi
if nm -D --defined-only "$lib" | grep -q '@'; then echo "FAIL: versioned exports"; fail=1; fi
if readelf -V "$lib" | grep -q 'Version definition'; then echo "FAIL: defines symbol versions"; fail=1; fi
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for n in $needed; do
  case "$n" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|ld-linux*.so.*|librt.so.*) ;;
    *) echo "FAIL: unexpected NEEDED $n"; fail=1 ;;
  esac
done
echo "NEEDED: $needed"
if nm -D "$lib" | grep -E 'GLIBCXX|CXXABI|GCC_[0-9]|_Unwind_' ; then
  echo "FAIL: depends on the host's libstdc++/libgcc_s"; fail=1
fi
exit $fail
