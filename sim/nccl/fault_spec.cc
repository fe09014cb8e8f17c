#include "fault_spec.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace ncclsim {
namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

bool ParseNonNegative(const std::string& s, long long* out) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < 0 || v > INT32_MAX) return false;
  *out = v;
  return true;
}

std::optional<FaultKind> ParseKind(const std::string& s) {
  if (s == "hang") return FaultKind::kHang;
  if (s == "slow") return FaultKind::kSlow;
  if (s == "error") return FaultKind::kError;
  if (s == "die") return FaultKind::kDie;
  if (s == "mismatch_completes") return FaultKind::kMismatchCompletes;
  if (s == "partition") return FaultKind::kPartition;
  return std::nullopt;
}

bool ParseParam(const std::string& p, Fault* f, bool* has_seq, bool* has_ms, std::string* err) {
  const size_t eq = p.find('=');
  if (eq == std::string::npos) {
    *err = "parameter '" + p + "' is not key=value";
    return false;
  }
  const std::string key = p.substr(0, eq), val = p.substr(eq + 1);
  long long v = 0;
  if (key == "hosts") {
    const size_t plus = val.find('+');
    f->host_a = val.substr(0, plus);
    f->host_b = plus == std::string::npos ? "" : val.substr(plus + 1);
    if (f->host_a.empty() || f->host_b.empty() || f->host_b.find('+') != std::string::npos ||
        f->host_a == f->host_b) {
      *err = "parameter '" + p + "' needs two different hosts: hosts=A+B";
      return false;
    }
    return true;
  }
  if (key == "seq" && val == "init") {
    f->at_init = true;
    *has_seq = true;
    return true;
  }
  if (!ParseNonNegative(val, &v)) {
    *err = "parameter '" + p + "' needs a non-negative integer";
    return false;
  }
  if (key == "seq") {
    if (v == 0) {
      *err = "seq is 1-based (or 'init')";
      return false;
    }
    f->seq = static_cast<uint64_t>(v);
    *has_seq = true;
  } else if (key == "replay") {
    if (v == 0) {
      *err = "replay is 1-based";
      return false;
    }
    f->replay = static_cast<uint64_t>(v);
  } else if (key == "rank") {
    f->rank = static_cast<int>(v);
  } else if (key == "comm") {
    f->comm_index = static_cast<int>(v);
  } else if (key == "ms") {
    f->ms = static_cast<int>(v);
    *has_ms = true;
  } else {
    *err = "unknown parameter '" + key + "' (expected seq, replay, rank, comm, ms or hosts)";
    return false;
  }
  return true;
}

std::optional<Fault> ParseOne(const std::string& text, std::string* err) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) {
    *err = "fault '" + text + "' lacks 'kind:'";
    return std::nullopt;
  }
  const auto kind = ParseKind(text.substr(0, colon));
  if (!kind) {
    *err = "unknown fault kind '" + text.substr(0, colon) + "' (expected hang, slow, error, die, mismatch_completes or partition)";
    return std::nullopt;
  }
  Fault f;
  f.kind = *kind;
  bool has_seq = false, has_ms = false;
  for (const auto& p : Split(text.substr(colon + 1), ',')) {
    if (!ParseParam(p, &f, &has_seq, &has_ms, err)) return std::nullopt;
  }
  if (f.replay != 0) {
    // Within a replay, seq counts the replay's ops and defaults to its first.
    if (!has_seq) f.seq = 1;
    has_seq = true;
    if (f.at_init || f.kind == FaultKind::kPartition) {
      *err = "replay= applies to hang, slow, error, die and mismatch_completes, with seq=N or no seq";
      return std::nullopt;
    }
  }
  if (!has_seq) {
    *err = "fault '" + text + "' needs seq=N, seq=init or replay=K";
    return std::nullopt;
  }
  if (f.kind == FaultKind::kSlow && !has_ms) {
    *err = "slow fault '" + text + "' needs ms=M";
    return std::nullopt;
  }
  if (f.kind != FaultKind::kSlow && f.kind != FaultKind::kPartition && has_ms) {
    *err = "ms= applies only to slow and partition faults";
    return std::nullopt;
  }
  f.has_ms = has_ms;
  const bool partition = f.kind == FaultKind::kPartition;
  if (partition != !f.host_a.empty()) {
    *err = partition ? "partition fault '" + text + "' needs hosts=A+B" : "hosts= applies only to partition faults";
    return std::nullopt;
  }
  if (f.at_init && f.kind != FaultKind::kHang && f.kind != FaultKind::kDie) {
    *err = "seq=init is supported for hang and die only";
    return std::nullopt;
  }
  return f;
}

}  // namespace

std::optional<std::vector<Fault>> ParseFaultSpec(const std::string& text, std::string* error) {
  std::vector<Fault> out;
  if (text.empty()) return out;
  for (const auto& item : Split(text, ';')) {
    std::string err;
    auto f = ParseOne(item, &err);
    if (!f) {
      *error = "NCCLSIM_FAULT: " + err;
      return std::nullopt;
    }
    out.push_back(*f);
  }
  return out;
}

const Fault* FindFault(const std::vector<Fault>& faults, FaultKind kind, int comm_index, int rank,
                       const FaultPoint& at) {
  for (const auto& f : faults) {
    if (f.kind != kind) continue;
    if (f.rank >= 0 && f.rank != rank) continue;
    if (f.comm_index >= 0 && f.comm_index != comm_index) continue;
    if (f.replay != 0) {
      if (f.replay != at.replay || f.seq != at.replay_seq) continue;
    } else if (at.seq == 0 ? !f.at_init : (f.at_init || f.seq != at.seq)) {
      continue;
    }
    return &f;
  }
  return nullptr;
}

}  // namespace ncclsim
