#include "core/analyze/thread_views.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/analyze/user_frames.h"
#include "core/detect/verdict.h"
#include "core/format/duration.h"
#include "core/format/hex.h"
#include "core/format/nccl_names.h"

namespace ncclwatch::analyze {
namespace {

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The interpreter's frame-evaluation loop: where Python frames run (3.8 to 3.13 name it
// _PyEval_EvalFrameDefault; 3.11+ runs several Python frames in one such C frame).
bool IsEvalFrame(const dump::NativeFrame& f) { return f.function.find("_PyEval_EvalFrame") != std::string::npos; }

bool IsInterpreterFrame(const dump::NativeFrame& f) { return Basename(f.module).rfind("libpython", 0) == 0; }

FrameView NativeView(const dump::NativeFrame& f) {
  FrameView v;
  v.function = f.function.empty() ? "??" : f.function;
  v.module = Basename(f.module);
  v.offset = f.offset;
  return v;
}

FrameView PythonView(const PythonFrame& f) {
  FrameView v;
  v.python = true;
  v.function = f.function;
  v.file = f.file;
  v.line = f.line;
  return v;
}

// Threads blocked in a CUDA sync come first, then the main thread, then the rest.
std::vector<const dump::NativeThread*> OrderThreads(const dump::RankDump& d) {
  std::set<int32_t> syncing;
  for (const auto& s : d.host_syncs) syncing.insert(s.tid);
  std::vector<const dump::NativeThread*> threads;
  for (const auto& t : d.threads) threads.push_back(&t);
  auto order = [&](const dump::NativeThread* t) { return syncing.count(t->tid) ? 0 : t->tid == d.process.pid ? 1 : 2; };
  std::stable_sort(threads.begin(), threads.end(), [&](const auto* a, const auto* b) { return order(a) < order(b); });
  return threads;
}

bool RunsInterpreter(const dump::NativeThread& t) {
  return std::any_of(t.frames.begin(), t.frames.end(), IsEvalFrame);
}

// Which native thread runs which Python thread. The Python capture names threads by Python's
// own id, not the kernel's, so the match is made only where it is unambiguous: one Python
// thread with frames and one native thread in the interpreter; or the Python thread whose
// outermost frame is the main script's <module>, on the process's main thread.
std::map<int32_t, const PythonThread*> MatchPythonThreads(const dump::RankDump& d) {
  std::map<int32_t, const PythonThread*> out;
  std::vector<const PythonThread*> python;
  for (const auto& t : d.python.threads) {
    if (!t.frames.empty()) python.push_back(&t);
  }
  std::vector<const dump::NativeThread*> interpreting;
  for (const auto& t : d.threads) {
    if (RunsInterpreter(t)) interpreting.push_back(&t);
  }
  if (python.size() == 1 && interpreting.size() == 1) {
    out[interpreting[0]->tid] = python[0];
    return out;
  }
  for (const dump::NativeThread* t : interpreting) {
    if (t->tid != d.process.pid) continue;
    for (const PythonThread* p : python) {
      if (p->frames.back().function == "<module>") out[t->tid] = p;
    }
  }
  return out;
}

// The frames worth reading, innermost first: ncclwatch's own, the capture's and the signal
// trampoline's are hidden, as are libc wait frames before the first user frame. With a Python
// thread merged in, the interpreter's own frames give way to the Python frames they run: the
// C function Python called (e.g. time_sleep) stays innermost, and the start-up frames below
// the outermost evaluation loop (Py_RunMain, ...) are hidden.
void FillFrames(const dump::NativeThread& t, const PythonThread* python, ThreadStackView* view) {
  size_t first_eval = t.frames.size(), last_eval = t.frames.size();
  if (python != nullptr) {
    for (size_t i = 0; i < t.frames.size(); ++i) {
      if (!IsEvalFrame(t.frames[i])) continue;
      if (first_eval == t.frames.size()) first_eval = i;
      last_eval = i;
    }
  }
  const bool merge = first_eval < t.frames.size();
  view->python_merged = merge;
  auto push = [&](FrameView f) {
    if (view->frames.size() < kMaxFramesPerThreadView) view->frames.push_back(std::move(f));
    else ++view->hidden_frames;
  };
  // The thread's start-up, outermost: libc's clone/start_thread, std::thread's unnamed
  // trampoline in libstdc++, _start, and with Python merged in, the interpreter's start-up.
  size_t outer_end = t.frames.size();
  while (outer_end > 0) {
    const dump::NativeFrame& f = t.frames[outer_end - 1];
    const bool start_up = IsSystemFrame(f) || f.function == "_start" ||
                          (f.function.empty() && Basename(f.module).rfind("libstdc++", 0) == 0) ||
                          (merge && outer_end - 1 > last_eval && IsInterpreterFrame(f));
    if (!start_up || (merge && outer_end - 1 <= first_eval)) break;
    --outer_end;
  }
  bool seen_user_frame = false;
  for (size_t i = 0; i < t.frames.size(); ++i) {
    const dump::NativeFrame& f = t.frames[i];
    if (merge && i == first_eval) {
      for (const PythonFrame& p : python->frames) push(PythonView(p));
      seen_user_frame = true;
    }
    const bool interpreter_plumbing =
        merge && IsInterpreterFrame(f) && (i >= first_eval || (seen_user_frame && i < first_eval));
    const bool hide = f.internal || IsNcclwatchFrame(f) || IsSignalTrampoline(f) ||
                      (!seen_user_frame && IsSystemFrame(f)) || interpreter_plumbing ||
                      (merge && i > first_eval && i <= last_eval) || i >= outer_end;
    if (hide) {
      ++view->hidden_frames;
      continue;
    }
    seen_user_frame = true;
    push(NativeView(f));
  }
}

std::string Signature(const ThreadStackView& v) {
  std::string sig = v.answered ? "A" : "U" + v.state;
  for (const FrameView& f : v.frames) {
    sig += "|" + f.function + "@" + (f.python ? f.file + ":" + std::to_string(f.line) : f.module + "+" + std::to_string(f.offset));
  }
  return sig;
}

// "cudaStreamSynchronize for 5.3 s" (its age at the dump's detection), else the innermost
// shown frame's function.
std::string BlockedIn(const dump::RankDump& d, ThreadStackView* v, int32_t tid) {
  for (const auto& s : d.host_syncs) {
    if (s.tid != tid) continue;
    v->in_host_sync = true;
    const uint64_t now = d.incident.detected_mono_ns;
    const bool known = s.blocked_since_ns != 0 && now != 0;
    return detect::SyncCallName(s) +
           (known ? " for " + format::FormatDuration(now > s.blocked_since_ns ? now - s.blocked_since_ns : 0) : "");
  }
  return v->frames.empty() ? "" : v->frames.front().function;
}

}  // namespace

ThreadViews BuildThreadViews(const dump::RankDump& d) {
  ThreadViews out;
  const std::map<int32_t, const PythonThread*> matched = MatchPythonThreads(d);
  std::map<std::string, size_t> by_signature;
  size_t shown = 0;
  auto add = [&](ThreadStackView v, const std::string& name) {
    const std::string sig = Signature(v);
    if (auto it = by_signature.find(sig); it != by_signature.end() && !v.tids.empty()) {
      ThreadStackView& same = out.views[it->second];
      same.tids.push_back(v.tids.front());
      if (std::find(same.names.begin(), same.names.end(), name) == same.names.end()) same.names.push_back(name);
      same.active = same.active || v.active;
      ++shown;
      return;
    }
    if (out.views.size() == kMaxThreadViewsPerProcess) return;
    by_signature.emplace(sig, out.views.size());
    out.views.push_back(std::move(v));
    ++shown;
  };
  // Python threads no native thread is known to run come first: without a match they are
  // the only place the user's code shows.
  std::set<const PythonThread*> matched_python;
  for (const auto& [tid, python] : matched) matched_python.insert(python);
  size_t python_only = 0;
  for (const auto& p : d.python.threads) {
    if (p.frames.empty() || matched_python.count(&p)) continue;
    ++python_only;
    ThreadStackView v;
    v.python_thread_id = p.thread_id;
    for (const PythonFrame& f : p.frames) {
      if (v.frames.size() < kMaxFramesPerThreadView) v.frames.push_back(PythonView(f));
      else ++v.hidden_frames;
    }
    v.blocked_in = v.frames.front().function;
    add(std::move(v), "");
  }
  for (const dump::NativeThread* t : OrderThreads(d)) {
    ThreadStackView v;
    v.tids.push_back(t->tid);
    v.names.push_back(t->name);
    v.state = t->state;
    v.answered = t->answered;
    v.active = t->state == "R";
    const auto match = matched.find(t->tid);
    const PythonThread* python = match == matched.end() ? nullptr : match->second;
    if (t->answered) FillFrames(*t, python, &v);
    if (t->tid == d.process.pid && d.python.available) v.python_name = "MainThread";
    if (t->answered && v.frames.empty()) continue;  // nothing of its own to show: counted below
    v.blocked_in = BlockedIn(d, &v, t->tid);
    add(std::move(v), t->name);
  }
  out.threads_total = d.threads.size() + python_only;
  out.threads_not_shown = out.threads_total - std::min(shown, out.threads_total);
  return out;
}

std::string FrameText(const FrameView& f) {
  if (f.python) return f.function + " (" + f.file + ":" + std::to_string(f.line) + ")";
  return f.function + " (" + (f.module.empty() ? std::string("?") : f.module) + "+" + format::FormatHex(f.offset) + ")";
}

std::string ThreadHeader(const ThreadStackView& v) {
  // In hex, as the dump text prints Python thread ids.
  if (v.tids.empty()) return "Python thread " + format::FormatHex(v.python_thread_id) + " (in " + v.blocked_in + ")";
  // Long lists keep their first two and last entries: "30328, 30329, ..., 30335".
  auto list = [](const std::vector<std::string>& items) {
    std::string text;
    for (size_t i = 0; i < items.size(); ++i) {
      if (items.size() > 4 && i >= 2 && i + 1 < items.size()) {
        if (i == 2) text += ", ...";
        continue;
      }
      text += (i ? ", " : "") + items[i];
    }
    return text;
  };
  std::vector<std::string> tids, names;
  for (int32_t tid : v.tids) tids.push_back(std::to_string(tid));
  for (const std::string& name : v.names) names.push_back("\"" + name + "\"");
  std::string out = (v.tids.size() == 1 ? "Thread " : "Threads ") + list(tids) + " " + list(names);
  std::vector<std::string> notes;
  if (!v.python_name.empty()) notes.push_back(v.python_name);
  if (v.tids.size() > 1) notes.push_back(std::to_string(v.tids.size()) + " threads");
  if (!v.answered) {
    notes.push_back("did not answer the capture signal; state " + v.state);
  } else {
    notes.push_back(v.active ? "active" : "idle");
    if (!v.blocked_in.empty()) notes.push_back((v.in_host_sync ? "blocked in " : "in ") + v.blocked_in);
  }
  out += " (";
  for (size_t i = 0; i < notes.size(); ++i) out += (i ? ", " : "") + notes[i];
  out += ")";
  if (v.tids.size() > 1) out += ": same stack";
  return out;
}

}  // namespace ncclwatch::analyze
