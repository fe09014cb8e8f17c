#include "bench/analyze/synthetic_job.h"

#include <string>

namespace ncclwatch::bench {
namespace {

constexpr int kRanksPerHost = 8;
constexpr uint64_t kRecordsPerComm = 64;
constexpr uint64_t kWorldSeq = 100000;

detect::CommFacts Comm(uint64_t hash, int rank, int nranks, uint64_t last_enqueued, uint64_t last_completed,
                     const char* op) {
  detect::CommFacts c;
  c.comm_hash = hash;
  c.rank = rank;
  c.nranks = nranks;
  c.device = rank % kRanksPerHost;
  c.init_started_ns = 1'000'000;
  c.init_done_ns = 2'000'000;
  c.last_enqueued_seq = last_enqueued;
  c.last_completed_seq = last_completed;
  for (uint64_t s = last_enqueued - kRecordsPerComm + 1; s <= last_enqueued; ++s) {
    detect::RecordFacts r;
    r.seq = s;
    r.op = op;
    r.count = 25'165'824;
    r.datatype = 7;
    r.redop = 0;
    r.stream = 0x55d0c0de0000;
    r.enqueue_ns = 10'000'000 + s * 1'000'000;
    r.complete_ns = s <= last_completed ? r.enqueue_ns + 400'000 : 0;
    c.records.push_back(r);
  }
  return c;
}

void AddThreads(dump::RankDump& d) {
  for (int t = 0; t < 8; ++t) {
    dump::NativeThread thread;
    thread.tid = d.process.pid + t;
    thread.name = t == 0 ? "python3" : "pt_worker_" + std::to_string(t);
    thread.state = "S";
    thread.answered = true;
    for (int f = 0; f < 20; ++f) {
      dump::NativeFrame frame;
      frame.pc = 0x7f0000000000ull + static_cast<uint64_t>(f) * 0x40;
      frame.function = f < 3 ? "pthread_cond_wait" : "c10d::ProcessGroupNCCL::frame_" + std::to_string(f);
      frame.module = f < 3 ? "/lib/x86_64-linux-gnu/libc.so.6" : "/opt/venv/lib/libtorch_cuda.so";
      frame.offset = 0x1000 + static_cast<uint64_t>(f);
      frame.internal = f == 0 && t == 0;
      thread.frames.push_back(frame);
    }
    d.threads.push_back(std::move(thread));
  }
  d.python.available = true;
  PythonThread main_thread;
  main_thread.thread_id = 139'900'000'000ull + static_cast<uint64_t>(d.process.pid);
  main_thread.current = true;
  for (int f = 0; f < 15; ++f) {
    main_thread.frames.push_back({"/opt/app/train.py", 100 + f, "step_" + std::to_string(f)});
  }
  d.python.threads.push_back(std::move(main_thread));
}

}  // namespace

dump::RankDump SyntheticRankDump(int rank, int nranks, int straggler) {
  dump::RankDump d;
  int host = rank / kRanksPerHost;
  d.incident.id = "bench";
  d.incident.trigger = "local";
  d.incident.job_id = "bench-job";
  d.incident.detected_mono_ns = 50'000'000'000ull;
  d.incident.detected_unix_ns = 1'700'000'000'000'000'000ull;
  d.incident.detected_iso = "2023-11-14T22:13:20Z";
  d.process.global_rank = rank;
  d.process.local_rank = rank % kRanksPerHost;
  d.process.world_size = nranks;
  d.process.host = "node" + std::to_string(host);
  d.process.pid = 10000 + rank;
  d.process.device = rank % kRanksPerHost;
  d.process.exe = "/opt/venv/bin/python3";
  d.process.cmdline = {"python3", "-u", "train.py", "--config", "big.yaml"};
  d.environment.nccl_env = {{"NCCL_DEBUG", "WARN"}, {"NCCL_SOCKET_IFNAME", "eth0"}, {"NCCL_IB_HCA", "mlx5"}};
  d.environment.nvidia_driver = "535.154.05";
  d.environment.kernel_release = "6.1.0-18-amd64";
  bool late = rank == straggler;
  d.comms.push_back(Comm(0xabcdef0123456789ull, rank, nranks, late ? kWorldSeq - 1 : kWorldSeq, kWorldSeq - 1,
                         "AllReduce"));
  d.comms.push_back(Comm(0x1000 + static_cast<uint64_t>(host), rank % kRanksPerHost, kRanksPerHost, 5000, 5000,
                         "AllGather"));
  AddThreads(d);
  return d;
}

}  // namespace ncclwatch::bench
