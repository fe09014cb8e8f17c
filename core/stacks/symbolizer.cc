#include "core/stacks/symbolizer.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/stacks/armed_options.h"
#include "core/stacks/symbolizer_plugin.h"

namespace ncclwatch::stacks_internal {
namespace {

std::once_flag g_load_once;
ncclwatch_symbolizer_lookup_fn g_lookup = nullptr;
std::string g_load_error;

std::string ExecutablePath() {
  char buffer[4096];
  ssize_t length = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  return length > 0 ? std::string(buffer, static_cast<size_t>(length)) : std::string();
}

// dladdr names the main program by argv[0], which may be relative or empty.
std::string AbsoluteModulePath(const char* reported) {
  if (reported == nullptr || reported[0] == '\0') return ExecutablePath();
  if (reported[0] == '/') return reported;
  char* resolved = realpath(reported, nullptr);
  if (resolved == nullptr) return reported;
  std::string path(resolved);
  std::free(resolved);
  return path;
}

std::string DirectoryOfThisCode() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&SymbolizePc), &info) == 0) return {};
  std::string path = AbsoluteModulePath(info.dli_fname);
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::vector<std::string> CandidatePaths() {
  std::vector<std::string> paths;
  const std::string& overridden = ArmedOptions().symbolizer;
  if (overridden == "none") return paths;
  if (!overridden.empty()) paths.push_back(overridden);
  std::string directory = DirectoryOfThisCode();
  if (!directory.empty()) {
    paths.push_back(directory + "/" NCCLWATCH_SYMBOLIZER_FILE_NAME);
    paths.push_back(directory + "/../lib/" NCCLWATCH_SYMBOLIZER_FILE_NAME);
  }
  return paths;
}

void LoadPlugin() {
  for (const std::string& path : CandidatePaths()) {
    void* handle = dlopen(path.c_str(), RTLD_LOCAL | RTLD_NOW);
    if (handle == nullptr) {
      const char* reason = dlerror();
      g_load_error += path + ": " + (reason != nullptr ? reason : "dlopen failed") + "; ";
      continue;
    }
    g_lookup = reinterpret_cast<ncclwatch_symbolizer_lookup_fn>(dlsym(handle, NCCLWATCH_SYMBOLIZER_LOOKUP));
    if (g_lookup != nullptr) return;
    g_load_error += path + ": no " NCCLWATCH_SYMBOLIZER_LOOKUP "; ";
  }
  if (g_load_error.empty()) g_load_error = "disabled or no candidate path for " NCCLWATCH_SYMBOLIZER_FILE_NAME;
}

std::string LookupWithPlugin(uintptr_t pc) {
  char name[1024];
  if (g_lookup == nullptr || g_lookup(reinterpret_cast<const void*>(pc), name, sizeof(name)) == 0) return {};
  return Demangle(name);
}

}  // namespace

std::string Demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string result(demangled);
  std::free(demangled);
  return result;
}

const char* LoadSymbolizer() {
  std::call_once(g_load_once, LoadPlugin);
  return g_lookup != nullptr ? "absl" : "dladdr";
}

Status SymbolizerHelperStatus() {
  LoadSymbolizer();
  return g_lookup != nullptr || g_load_error.empty() ? OkStatus() : Status::Error(g_load_error);
}

Symbol SymbolizePc(uintptr_t pc, bool exact) {
  LoadSymbolizer();
  uintptr_t lookup = exact || pc == 0 ? pc : pc - 1;
  Symbol symbol;
  Dl_info info = {};
  if (dladdr(reinterpret_cast<void*>(lookup), &info) != 0) {
    symbol.module = AbsoluteModulePath(info.dli_fname);
    symbol.offset = pc - reinterpret_cast<uintptr_t>(info.dli_fbase);
  }
  symbol.function = LookupWithPlugin(lookup);
  if (symbol.function.empty() && info.dli_sname != nullptr) symbol.function = Demangle(info.dli_sname);
  return symbol;
}

}  // namespace ncclwatch::stacks_internal
