#include "preload/python_frames_311.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/stacks/python_call_site.h"

namespace ncclwatch::preload {
namespace {

// CPython 3.11, x86_64 and aarch64 (LP64), release builds: offsetof() in its headers
// (Include/cpython/pystate.h, Include/internal/pycore_frame.h, Include/cpython/code.h,
// Include/cpython/unicodeobject.h). tests/preload/python_frames_311_offsets.c checks them.
constexpr size_t kThreadStateCFrame = 56;       // PyThreadState::cframe
constexpr size_t kCFrameCurrentFrame = 8;       // _PyCFrame::current_frame
constexpr size_t kFrameCode = 32;               // _PyInterpreterFrame::f_code
constexpr size_t kFramePrevious = 48;           // _PyInterpreterFrame::previous
constexpr size_t kFramePrevInstr = 56;          // _PyInterpreterFrame::prev_instr
constexpr size_t kFrameOwner = 69;              // _PyInterpreterFrame::owner (char)
constexpr size_t kObjectType = 8;               // PyObject::ob_type
constexpr size_t kCodeFilename = 112;           // PyCodeObject::co_filename
constexpr size_t kCodeName = 120;               // PyCodeObject::co_name
constexpr size_t kCodeFirstTraceable = 168;     // PyCodeObject::_co_firsttraceable (int)
constexpr size_t kCodeAdaptive = 184;           // PyCodeObject::co_code_adaptive
constexpr size_t kUnicodeLength = 16;           // PyASCIIObject::length
constexpr size_t kUnicodeState = 32;            // PyASCIIObject::state (bit field)
constexpr size_t kAsciiData = 48;               // sizeof(PyASCIIObject): compact ASCII data
constexpr size_t kCompactUtf8Length = 48;       // PyCompactUnicodeObject::utf8_length
constexpr size_t kCompactUtf8 = 56;             // PyCompactUnicodeObject::utf8
constexpr uint32_t kStateCompact = 1u << 5;     // state.compact
constexpr uint32_t kStateAscii = 1u << 6;       // state.ascii
constexpr char kOwnedByGenerator = 1;           // FRAME_OWNED_BY_GENERATOR
// Deeper stacks are not walked further (CPython's own traceback dumper stops at 100).
constexpr int kMaxFrames = 256;

template <typename T>
T At(const void* base, size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof value);
  return value;
}

}  // namespace

bool PythonFrames311::Resolve(std::string* why) {
  const auto is_initialized = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
  const auto version = reinterpret_cast<const char* (*)()>(dlsym(RTLD_DEFAULT, "Py_GetVersion"));
  if (is_initialized == nullptr || version == nullptr || is_initialized() == 0) {
    *why = "this process runs no Python interpreter";
    return false;
  }
  const std::string_view v = version();
  if (v.rfind("3.11.", 0) != 0) {
    *why = "Python " + std::string(v.substr(0, v.find(' '))) + " is not supported (3.11 is)";
    return false;
  }
  this_thread_state_ = reinterpret_cast<void* (*)()>(dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState"));
  addr_to_line_ = reinterpret_cast<int (*)(const void*, int)>(dlsym(RTLD_DEFAULT, "PyCode_Addr2Line"));
  code_type_ = dlsym(RTLD_DEFAULT, "PyCode_Type");
  unicode_type_ = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  if (this_thread_state_ == nullptr || addr_to_line_ == nullptr || code_type_ == nullptr || unicode_type_ == nullptr) {
    *why = "this Python lacks PyGILState_GetThisThreadState, PyCode_Addr2Line, PyCode_Type or PyUnicode_Type";
    return false;
  }
  return true;
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

}  // namespace

std::string PythonFrames311::InnermostUserSite() const {
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
    const std::string_view file = Text(At<const void*>(code, kCodeFilename), unicode_type_);
    if (IsLibraryPythonFile(file)) continue;
    const int line = addr_to_line_(code, static_cast<int>(instr - first));
    return CallSiteText(file, line, Text(At<const void*>(code, kCodeName), unicode_type_));
  }
  return {};
}

}  // namespace ncclwatch::preload
