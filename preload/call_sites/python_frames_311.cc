#include "preload/call_sites/python_frames_311.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/stacks/python_call_site.h"
#include "preload/call_sites/python_layout_311.h"
#include "preload/observe/thread_heap.h"

namespace ncclwatch::preload {
namespace {

using namespace python311;  // NOLINT(build/namespaces): the layout's names, in this file only

// Deeper stacks are not walked further (CPython's own traceback dumper stops at 100).
constexpr int kMaxFrames = 256;

template <typename T>
T At(const void* base, size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof value);
  return value;
}

}  // namespace

Status PythonFrames311::Resolve() {
  const auto is_initialized = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
  const auto version = reinterpret_cast<const char* (*)()>(dlsym(RTLD_DEFAULT, "Py_GetVersion"));
  if (is_initialized == nullptr || version == nullptr || is_initialized() == 0) {
    return Status::Error("this process runs no Python interpreter");
  }
  const std::string_view v = version();
  if (v.rfind("3.11.", 0) != 0) {
    return Status::Error("Python " + std::string(v.substr(0, v.find(' '))) + " is not supported (3.11 is)");
  }
  this_thread_state_ = reinterpret_cast<void* (*)()>(dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState"));
  addr_to_line_ = reinterpret_cast<int (*)(const void*, int)>(dlsym(RTLD_DEFAULT, "PyCode_Addr2Line"));
  code_type_ = dlsym(RTLD_DEFAULT, "PyCode_Type");
  unicode_type_ = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  if (this_thread_state_ == nullptr || addr_to_line_ == nullptr || code_type_ == nullptr || unicode_type_ == nullptr) {
    return Status::Error("this Python lacks PyGILState_GetThisThreadState, PyCode_Addr2Line, PyCode_Type or "
                         "PyUnicode_Type");
  }
  return OkStatus();
}

namespace {

// The text of a str, empty when it is not one or has no UTF-8 form cached (never computed here:
// that would allocate under someone else's GIL).
std::string_view Text(const void* object, const void* unicode_type) {
  if (object == nullptr || At<const void*>(object, kObjectType) != unicode_type) return {};
  const auto state = At<uint32_t>(object, kUnicodeState);
  if ((state & kStateCompact) == 0) return {};
  if ((state & kStateAscii) != 0) {
    return {static_cast<const char*>(object) + kAsciiData, static_cast<size_t>(At<int64_t>(object, kUnicodeLength))};
  }
  const auto* utf8 = At<const char*>(object, kCompactUtf8);
  return utf8 == nullptr ? std::string_view() : std::string_view(utf8, At<int64_t>(object, kCompactUtf8Length));
}

// Per thread: code object -> user code or not. A freed code object whose address is reused
// could inherit its predecessor's class: at worst one wrong call site, never a bad read.
struct UserCodeCache {
  static constexpr size_t kSize = 64;
  const void* code[kSize] = {};
  bool user[kSize] = {};
};

}  // namespace

PythonFrameRef PythonFrames311::InnermostUserFrame() const {
  UserCodeCache& cache = ThisThreadHeap<UserCodeCache>();
  const void* tstate = this_thread_state_();
  if (tstate == nullptr) return {};  // a native thread
  const void* cframe = At<const void*>(tstate, kThreadStateCFrame);
  const void* frame = cframe == nullptr ? nullptr : At<const void*>(cframe, kCFrameCurrentFrame);
  for (int depth = 0; frame != nullptr && depth < kMaxFrames; ++depth, frame = At<const void*>(frame, kFramePrevious)) {
    const void* code = At<const void*>(frame, kFrameCode);
    if (code == nullptr || At<const void*>(code, kObjectType) != code_type_) return {};
    const auto* first = static_cast<const char*>(code) + kCodeAdaptive;
    const auto* instr = At<const char*>(frame, kFramePrevInstr);
    // An incomplete frame (just pushed, not yet running) has no line: as CPython, skip it.
    if (At<char>(frame, kFrameOwner) != kOwnedByGenerator && instr < first + 2 * At<int>(code, kCodeFirstTraceable)) {
      continue;
    }
    const size_t slot = (reinterpret_cast<uintptr_t>(code) >> 4) % UserCodeCache::kSize;
    if (cache.code[slot] != code) {
      cache.code[slot] = code;
      cache.user[slot] = !IsLibraryPythonFile(Text(At<const void*>(code, kCodeFilename), unicode_type_));
    }
    if (cache.user[slot]) return {code, instr};
  }
  return {};
}

std::string PythonFrames311::SiteText(const PythonFrameRef& frame) const {
  const auto* first = static_cast<const char*>(frame.code) + kCodeAdaptive;
  const int line = addr_to_line_(frame.code, static_cast<int>(static_cast<const char*>(frame.instr) - first));
  return CallSiteText(Text(At<const void*>(frame.code, kCodeFilename), unicode_type_), line,
                      Text(At<const void*>(frame.code, kCodeName), unicode_type_));
}

}  // namespace ncclwatch::preload
