// Writes seed images for shm_segment_fuzzer from a real SegmentWriter, so the seeds follow
// the layout of this build: make_shm_seeds OUT_DIR (run by scripts/fuzz --make-seeds).
// Each image is cut after its last non-zero byte; the fuzz target pads it back with zeros.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/shm/process_info.h"
#include "core/shm/segment_writer.h"
#include "core/shm/sync_slot.h"

namespace {

using namespace ncclwatch::shm;

// The mapping itself: it stays valid after CloseAndUnlink removed the name.
std::vector<char> Image(const SegmentWriter& segment) {
  const char* base = reinterpret_cast<const char*>(&segment.header());
  std::vector<char> bytes(base, base + segment.header().segment_bytes);
  while (!bytes.empty() && bytes.back() == 0) bytes.pop_back();
  return bytes;
}

bool Save(const std::string& path, const std::vector<char>& bytes, size_t limit) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(std::min(limit, bytes.size())));
  return static_cast<bool>(out);
}

void FillTwoComms(SegmentWriter& segment) {
  CommSlot world = segment.ClaimCommSlot().value();
  world.BeginInit(0x1000, 100);
  world.PublishIdentity({0xabcdef0123456789ull, 0, 1, 4, 1, 0, PackCommName("0:default_pg", 12)});
  world.FinishInit(true, 0, 200);
  for (uint64_t i = 0; i < 20; ++i) {  // wraps the 16-record ring
    const RecordRef ref = world.Append({Op::kAllReduce, 7, 0, 1024 + i, -1, 0x55}, 0, 300 + i);
    if (i < 18) world.MarkCompleted(ref, 400 + i);
  }
  CommSlot split = segment.ClaimCommSlot().value();
  split.BeginInit(0x2000, 500);
  split.PublishIdentity({0x1111, 0xabcdef0123456789ull, 0, 2, 1, 0, {}});
  split.FinishInit(true, 0, 600);
  split.Append({Op::kSend, 7, 0, 16, 1, 0x66}, 0, 700);  // claims peer 1
  split.Append({Op::kRecv, 7, 0, 16, 1, 0x66}, 0, 710);
  split.SetAsyncError(6, 800);
  SyncSlot* sync = segment.ClaimSyncSlot(static_cast<int>(gettid()));
  if (sync != nullptr) MarkSyncBlocked(*sync, SyncKind::kStream, SyncApi::kRuntime, 0x66, 1, 900);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_shm_seeds OUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  SegmentOptions options;
  options.uid = getuid();
  options.job_id = "fuzz-seed";
  options.pid = getpid();
  options.process_start_ticks = ProcessStartTicks(options.pid);
  options.host = "seedhost";
  options.rank = {1, 1, 4, RankSource::kTorchrun};
  options.ring_capacity = kMinRingCapacity;
  ncclwatch::Result<std::unique_ptr<SegmentWriter>> created = SegmentWriter::Create(options);
  if (!created.ok()) {
    std::fprintf(stderr, "make_shm_seeds: %s\n", created.error().message().c_str());
    return 1;
  }
  std::unique_ptr<SegmentWriter> segment = std::move(created).value();
  bool ok = Save(dir + "/empty_segment", Image(*segment), SIZE_MAX);
  FillTwoComms(*segment);
  const std::vector<char> full = Image(*segment);
  ok = Save(dir + "/two_comms_wrapped_ring", full, SIZE_MAX) && ok;
  ok = Save(dir + "/header_only", full, kHeaderBytes) && ok;
  segment->RecordExit(ExitHow::kSignal, 6);  // exit evidence: kept, marked exited
  ok = Save(dir + "/exited_two_comms", Image(*segment), SIZE_MAX) && ok;
  segment->CloseAndUnlink();
  ok = Save(dir + "/closed_two_comms", Image(*segment), SIZE_MAX) && ok;
  return ok ? 0 : 1;
}
