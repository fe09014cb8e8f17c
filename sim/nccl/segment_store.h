// Where a communicator's shared segment lives. By default a POSIX shared-memory object
// (/dev/shm), which only ranks of one host can see. With NCCLSIM_FABRIC_DIR set, a regular file
// in that directory, which ranks on different (simulated) hosts sharing a file system map
// together: the "fabric" between hosts. Shared futexes work on either mapping (their key is the
// file and offset, whatever the process or namespace).
#ifndef NCCLWATCH_SIM_NCCL_SEGMENT_STORE_H_
#define NCCLWATCH_SIM_NCCL_SEGMENT_STORE_H_

#include <cstdint>
#include <string>

namespace ncclsim {

class SegmentStore {
 public:
  // Reads NCCLSIM_FABRIC_DIR once, at construction.
  explicit SegmentStore(uint64_t comm_hash);

  // Creates the segment exclusively (create) or opens an existing one; returns an fd, or -1 with
  // errno set (EEXIST when creating a taken name, ENOENT when it is not there yet) and *error
  // set to a one-line reason. An existing segment must be a regular file owned by this user,
  // with no access for others.
  int Open(bool create, std::string* error) const;
  void Unlink() const;

  // "/ncclsim.<uid>.<hash>" in /dev/shm, or "<fabric dir>/ncclsim.<uid>.<hash>".
  const std::string& name() const { return name_; }
  bool fabric() const { return fabric_; }

 private:
  std::string name_;
  bool fabric_ = false;
};

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_SEGMENT_STORE_H_
