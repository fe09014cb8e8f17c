// Offsets into CPython 3.11's structures that preload/call_sites/python_frames_311.cc reads.
#ifndef NCCLWATCH_PRELOAD_CALL_SITES_PYTHON_LAYOUT_311_H_
#define NCCLWATCH_PRELOAD_CALL_SITES_PYTHON_LAYOUT_311_H_

#include <cstddef>
#include <cstdint>

namespace ncclwatch::preload::python311 {

// CPython 3.11, x86_64 and aarch64 (LP64), release builds: offsetof() in its headers
// (Include/cpython/pystate.h, Include/internal/pycore_frame.h, Include/cpython/code.h,
// Include/cpython/unicodeobject.h). tests/preload/python_layout_311_test.cc checks
// them against the installed 3.11 headers.
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

}  // namespace ncclwatch::preload::python311

#endif  // NCCLWATCH_PRELOAD_CALL_SITES_PYTHON_LAYOUT_311_H_
