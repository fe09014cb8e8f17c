# Experiment hook (not part of ncclwatch): before the job's destroy_process_group, plant a
# straggler on one marker AllReduce (ncclwatch dumps every rank's records while rank 0 waits in
# it), then write Flight Recorder's whole trace of this rank as JSON.
# On torch 2.15 on the sim the in-process dump came back empty (tools/README.md, "Matching Flight
# Recorder"); the FR trace that counts is the one FR writes on a process-group timeout.
import os

if os.environ.get("SEQEXP_OUT") and "LOCAL_RANK" in os.environ:
    import torch.distributed as dist

    _destroy = dist.destroy_process_group

    def _destroy_after_marker(*args, **kwargs):
        import time
        import torch
        rank = dist.get_rank()
        if rank != 0:
            time.sleep(float(os.environ.get("SEQEXP_SLEEP", "6")))
        marker = torch.ones(7, device="cuda")
        dist.all_reduce(marker)
        torch.cuda.synchronize()
        c10d = torch._C._distributed_c10d
        dump_json = getattr(c10d, "_dump_fr_trace_json", None) or c10d._dump_nccl_trace_json
        trace = dump_json(includeCollectives=True, onlyActive=False)
        with open(os.path.join(os.environ["SEQEXP_OUT"], f"fr_rank{rank}.json"), "wb" if isinstance(trace, bytes) else "w") as f:
            f.write(trace)
        return _destroy(*args, **kwargs)

    dist.destroy_process_group = _destroy_after_marker

    if os.environ.get("SEQEXP_PG_TIMEOUT_SEC"):
        # A process-group timeout for jobs without an option for it (pipeline.py): FR dumps on it.
        import datetime

        _init = dist.init_process_group

        def _init_with_timeout(*args, **kwargs):
            kwargs["timeout"] = datetime.timedelta(seconds=float(os.environ["SEQEXP_PG_TIMEOUT_SEC"]))
            return _init(*args, **kwargs)

        dist.init_process_group = _init_with_timeout
