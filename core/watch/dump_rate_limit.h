// A token bucket bounding how many dumps one process writes, whatever asks for them.
//
// Trigger files can be forged by anyone who can write to the dump directory (a shared file
// system), and each dump costs a stack capture of every thread (signals, up to 300 ms) and
// up to a few MiB of files. The watchdog keeps two buckets (numbers in watchdog.cc):
//   * trigger-file dumps: 1, refilled every 60 s. A hang is one incident that lasts
//     minutes until the job is killed, so one dump per minute on behalf of other hosts
//     never loses a genuine one; 1000 forged triggers cost one dump.
//   * all dumps: 4, refilled every 60 s; a local incident and the related ones the
//     grouper does not merge fit, a flapping detector does not fill the disk.
#ifndef NCCLWATCH_CORE_WATCH_DUMP_RATE_LIMIT_H_
#define NCCLWATCH_CORE_WATCH_DUMP_RATE_LIMIT_H_

#include <cstdint>

namespace ncclwatch::watch {

class DumpRateLimiter {
 public:
  // Starts full: `burst` tokens, one more every `refill_ns` up to `burst`.
  DumpRateLimiter(uint32_t burst, uint64_t refill_ns) : burst_(burst), refill_ns_(refill_ns), tokens_(burst) {}

  // Whether a dump may be written at `now_ns` (monotonic); takes a token when it may.
  bool TryTake(uint64_t now_ns);
  // Whether TryTake would succeed, without taking.
  bool Available(uint64_t now_ns);

 private:
  void Refill(uint64_t now_ns);

  uint32_t burst_;
  uint64_t refill_ns_;
  uint32_t tokens_;
  uint64_t last_refill_ns_ = 0;
  bool started_ = false;
};

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_DUMP_RATE_LIMIT_H_
