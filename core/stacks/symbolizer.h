// Maps program counters to function, module and offset, outside any signal
// handler. Uses libncclwatch_symbolizer.so (abseil, reads .symtab) when it can
// be loaded, else dladdr (dynamic symbols only) plus abi::__cxa_demangle.
#ifndef NCCLWATCH_CORE_STACKS_SYMBOLIZER_H_
#define NCCLWATCH_CORE_STACKS_SYMBOLIZER_H_

#include <cstdint>
#include <string>

#include "core/status/status.h"

namespace ncclwatch::stacks_internal {

struct Symbol {
  std::string function;  // Demangled; empty when unknown.
  std::string module;
  uintptr_t offset = 0;  // pc minus module load base.
};

// `exact` is true for an interrupted pc, false for a return address (looked
// up one byte earlier so a call at the end of a function names its caller).
Symbol SymbolizePc(uintptr_t pc, bool exact);

// Loads the helper once. Search order: $NCCLWATCH_SYMBOLIZER (a path; "none"
// disables the helper), then the directory of the object containing this
// code, then ../lib from there.
// Returns "absl" or "dladdr" (the fallback, when the helper is unavailable).
const char* LoadSymbolizer();
// Why the helper is unavailable (after LoadSymbolizer); ok when it is loaded.
Status SymbolizerHelperStatus();

// Demangles an Itanium C++ name; returns it unchanged when it is not one.
std::string Demangle(const std::string& name);

}  // namespace ncclwatch::stacks_internal

#endif  // NCCLWATCH_CORE_STACKS_SYMBOLIZER_H_
