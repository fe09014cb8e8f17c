#include "core/stacks/python_call_site.h"

#include <string>

namespace ncclwatch {
namespace {

bool HasPackageDir(std::string_view file, std::string_view package) {
  for (std::string_view packages : {"site-packages/", "dist-packages/"}) {
    if (file.find(std::string(packages) + std::string(package) + "/") != std::string_view::npos) return true;
  }
  return false;
}

// ".../lib/python3.11/x.py" or ".../lib/python3.11/json/x.py", not ".../lib/python3.11/site-packages/...".
bool IsStandardLibrary(std::string_view file) {
  constexpr std::string_view kLib = "/lib/python";
  for (size_t at = file.find(kLib); at != std::string_view::npos; at = file.find(kLib, at + 1)) {
    const size_t version_end = file.find('/', at + kLib.size());
    if (version_end == std::string_view::npos) return false;
    const std::string_view version = file.substr(at + kLib.size(), version_end - at - kLib.size());
    if (version.empty() || version.find_first_not_of("0123456789.") != std::string_view::npos) continue;
    const std::string_view rest = file.substr(version_end + 1);
    return rest.rfind("site-packages/", 0) != 0 && rest.rfind("dist-packages/", 0) != 0;
  }
  return false;
}

}  // namespace

bool IsLibraryPythonFile(std::string_view file) {
  return file.empty() || file.front() == '<' || HasPackageDir(file, "torch") || HasPackageDir(file, "ncclwatch") ||
         IsStandardLibrary(file);
}

std::string CallSiteText(std::string_view file, int line, std::string_view function) {
  std::string text;
  text.reserve(file.size() + function.size() + 16);
  text.append(file).append(":").append(std::to_string(line)).append(" in ").append(function);
  return text;
}

}  // namespace ncclwatch
