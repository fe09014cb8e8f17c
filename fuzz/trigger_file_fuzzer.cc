// Fuzz target: trigger files (core/watch/trigger_file.h), which other hosts write into a
// shared dump directory. Input: the file's text. A parsed trigger, formatted and parsed
// again, is the same trigger (the protocol is one key=value per line, values on one line).
#include <cstdint>
#include <optional>
#include <string>

#include "core/watch/trigger_file.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ncclwatch::watch::Trigger;
  const std::optional<Trigger> parsed =
      ncclwatch::watch::ParseTrigger(std::string(reinterpret_cast<const char*>(data), size));
  if (!parsed) return 0;
  FUZZ_CHECK(!parsed->incident_id.empty());
  const std::optional<Trigger> again = ncclwatch::watch::ParseTrigger(ncclwatch::watch::FormatTrigger(*parsed));
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(again->incident_id == parsed->incident_id);
  FUZZ_CHECK(again->verdict.kind == parsed->verdict.kind);
  FUZZ_CHECK(again->verdict.comm_hash == parsed->verdict.comm_hash);
  FUZZ_CHECK(again->verdict.seq == parsed->verdict.seq);
  FUZZ_CHECK(again->verdict.op == parsed->verdict.op);
  FUZZ_CHECK(again->verdict.culprit_ranks == parsed->verdict.culprit_ranks);
  FUZZ_CHECK(again->verdict.other_ranks == parsed->verdict.other_ranks);
  FUZZ_CHECK(again->verdict.partial == parsed->verdict.partial);
  FUZZ_CHECK(again->verdict.summary == parsed->verdict.summary);
  FUZZ_CHECK(again->host == parsed->host);
  FUZZ_CHECK(again->pid == parsed->pid);
  return 0;
}
