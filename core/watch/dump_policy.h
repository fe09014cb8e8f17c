// Which incidents this process has dumped already: one dump per rank per incident, however
// it learns about the incident (its own detector, a trigger file, both, repeatedly).
// Remembers at most `capacity` ids, forgetting the oldest first.
#ifndef NCCLWATCH_CORE_WATCH_DUMP_POLICY_H_
#define NCCLWATCH_CORE_WATCH_DUMP_POLICY_H_

#include <cstddef>
#include <deque>
#include <set>
#include <string>

namespace ncclwatch::watch {

class DumpPolicy {
 public:
  explicit DumpPolicy(size_t capacity = 1024) : capacity_(capacity) {}

  // True the first time an id is claimed: the caller then dumps it. False afterwards.
  bool Claim(const std::string& incident_id);
  bool Dumped(const std::string& incident_id) const { return claimed_.count(incident_id) != 0; }

 private:
  size_t capacity_;
  std::set<std::string> claimed_;
  std::deque<std::string> order_;
};

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_DUMP_POLICY_H_
