// The CPython 3.11 offsets the call-site walk reads (preload/call_sites/python_layout_311.h), checked
// against the installed 3.11 headers (libpython3.11-dev): a wrong one fails the build here.
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "preload/call_sites/python_layout_311.h"

namespace l = ncclwatch::preload::python311;

static_assert(PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 11, "needs the 3.11 headers");
static_assert(offsetof(PyThreadState, cframe) == l::kThreadStateCFrame);
static_assert(offsetof(_PyCFrame, current_frame) == l::kCFrameCurrentFrame);
static_assert(offsetof(_PyInterpreterFrame, f_code) == l::kFrameCode);
static_assert(offsetof(_PyInterpreterFrame, previous) == l::kFramePrevious);
static_assert(offsetof(_PyInterpreterFrame, prev_instr) == l::kFramePrevInstr);
static_assert(offsetof(_PyInterpreterFrame, owner) == l::kFrameOwner);
static_assert(offsetof(PyObject, ob_type) == l::kObjectType);
static_assert(offsetof(PyCodeObject, co_filename) == l::kCodeFilename);
static_assert(offsetof(PyCodeObject, co_name) == l::kCodeName);
static_assert(offsetof(PyCodeObject, _co_firsttraceable) == l::kCodeFirstTraceable);
static_assert(offsetof(PyCodeObject, co_code_adaptive) == l::kCodeAdaptive);
static_assert(offsetof(PyASCIIObject, length) == l::kUnicodeLength);
static_assert(offsetof(PyASCIIObject, state) == l::kUnicodeState);
static_assert(sizeof(PyASCIIObject) == l::kAsciiData);
static_assert(offsetof(PyCompactUnicodeObject, utf8_length) == l::kCompactUtf8Length);
static_assert(offsetof(PyCompactUnicodeObject, utf8) == l::kCompactUtf8);
static_assert(FRAME_OWNED_BY_GENERATOR == l::kOwnedByGenerator);
static_assert(sizeof(_Py_CODEUNIT) == 2);  // the walk counts 2 bytes per instruction

// The state bits are a bit field: their positions are the compiler's, checked at run time.
int main() {
  PyASCIIObject compact{};
  compact.state.compact = 1;
  PyASCIIObject ascii{};
  ascii.state.ascii = 1;
  uint32_t compact_bits = 0, ascii_bits = 0;
  std::memcpy(&compact_bits, reinterpret_cast<const char*>(&compact) + l::kUnicodeState, sizeof compact_bits);
  std::memcpy(&ascii_bits, reinterpret_cast<const char*>(&ascii) + l::kUnicodeState, sizeof ascii_bits);
  if (compact_bits != l::kStateCompact || ascii_bits != l::kStateAscii) {
    std::printf("FAIL: state bits compact 0x%x (expected 0x%x), ascii 0x%x (expected 0x%x)\n", compact_bits,
                l::kStateCompact, ascii_bits, l::kStateAscii);
    return 1;
  }
  std::printf("PASS: CPython 3.11 layout as preload/call_sites/python_layout_311.h has it\n");
  return 0;
}
