// How core/ reports an error: one shape for every fallible function.
//
//   Status       ok, or an error: one line saying what failed and why, naming the file or
//                setting ("cannot write /d/x.trigger: No space left on device"), and the
//                errno when a system call failed (0 otherwise). For functions with no value.
//   Result<T>    a T, or the Status that says why there is none. For functions with a value.
//   Result<T, E> the same with an error type E of the caller's domain, for a caller that must
//                act on more than a line (e.g. shm::SegmentRejection: skip an incomplete
//                segment silently, warn once about a forged one). E has a `why` line.
//
// Rules:
// - No exceptions out of core's public functions: the preload calls core from interposed
//   C functions and from signal-safe paths, and an exception crossing the C ABI would
//   terminate the job we watch. A function that calls throwing code (the standard library
//   allocating, nlohmann::json) catches at its own boundary and returns the error; such
//   functions are noexcept.
// - An error is returned, never logged by core: the caller knows whether to log it once,
//   show it, or ignore it. Where a library reports from deep inside (the segment reader), it
//   goes through a sink the caller installs (shm::SetSegmentWarningSink).
// - Warnings are not errors: a function that succeeds with caveats (a setting rejected and
//   its default used) returns its value and appends one line per caveat to a
//   `std::vector<std::string>* warnings` the caller may pass (settings::ParseSettings).
// - std::optional<T> alone is for "there is none" (nothing to read, not one of ours), where no
//   caller has a use for the reason.
//
// Neither type allocates when ok. Both are [[nodiscard]]: an ignored error is a bug.
#ifndef NCCLWATCH_CORE_STATUS_STATUS_H_
#define NCCLWATCH_CORE_STATUS_STATUS_H_

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace ncclwatch {

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok

  // An error. `message` must not be empty: it is what the user reads.
  static Status Error(std::string message, int error_number = 0) {
    Status s;
    s.message_ = message.empty() ? std::string("unknown error") : std::move(message);
    s.error_number_ = error_number;
    return s;
  }

  bool ok() const { return message_.empty(); }
  // One line; empty when ok.
  const std::string& message() const { return message_; }
  // errno of the failed system call; 0 when ok or not a system call's failure.
  int error_number() const { return error_number_; }

 private:
  std::string message_;
  int error_number_ = 0;
};

inline Status OkStatus() { return Status(); }

template <typename T, typename E = Status>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit, as `return value;`
  Result(E error) : error_(std::move(error)) {}  // NOLINT: implicit, as `return Status::Error(...);`

  bool ok() const { return value_.has_value(); }
  // The error; a default E when ok.
  const E& error() const { return error_; }

  // The value; calling these on an error is a bug and aborts (core never throws).
  T& value() & { return Checked(), *value_; }
  const T& value() const& { return Checked(), *value_; }
  T&& value() && { return Checked(), std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  // The value, or `fallback` when there is none (the error is then dropped: the caller had no
  // use for it).
  T value_or(T fallback) && { return value_ ? std::move(*value_) : std::move(fallback); }

 private:
  void Checked() const {
    if (!value_) std::abort();
  }
  std::optional<T> value_;
  E error_;
};

}  // namespace ncclwatch

#endif  // NCCLWATCH_CORE_STATUS_STATUS_H_
