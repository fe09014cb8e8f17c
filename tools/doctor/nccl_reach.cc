#include "tools/doctor/nccl_reach.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/settings/settings.h"
#include "tools/doctor/elf_inspect.h"

namespace ncclwatch::tools {
namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

bool IsPreloadLibrary(const std::string& path) { return BaseName(path).rfind("libncclwatch.so", 0) == 0; }

// Files mapped in the process, once each, in address order.
std::vector<std::string> MappedFiles(int pid, bool* readable) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  *readable = static_cast<bool>(maps);
  std::vector<std::string> files;
  std::set<std::string> seen;
  std::string line;
  while (std::getline(maps, line)) {
    size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string file = line.substr(slash);
    if (seen.insert(file).second) files.push_back(file);
  }
  return files;
}

std::string EnvironmentValue(int pid, const std::string& name) {
  const settings::EnvVars env = settings::ReadEnvironmentOf(pid);
  const auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

std::vector<std::string> Split(const std::string& text, const std::string& separators) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : text + separators.substr(0, 1)) {
    if (separators.find(c) == std::string::npos) {
      part += c;
    } else if (!part.empty()) {
      parts.push_back(part);
      part.clear();
    }
  }
  return parts;
}

// ld.so loads LD_PRELOAD's entries, then /etc/ld.so.preload's, all ahead of every NEEDED.
std::vector<std::string> Preloads(int pid) {
  std::vector<std::string> entries = Split(EnvironmentValue(pid, "LD_PRELOAD"), ": \t");
  std::ifstream file("/etc/ld.so.preload");
  std::stringstream text;
  text << file.rdbuf();
  for (const auto& entry : Split(text.str(), ": \t\n")) entries.push_back(entry);
  return entries;
}

bool PreloadedAheadOfNccl(const std::vector<std::string>& preloads) {
  for (const auto& entry : preloads) {
    if (IsPreloadLibrary(entry)) return true;
    if (IsNcclLibraryName(entry)) return false;
  }
  return false;
}

std::string VersionOf(const std::string& path, const ElfFacts& facts) {
  std::string base = BaseName(path);
  const std::string prefix = "libnccl.so.";
  if (base.rfind(prefix, 0) == 0 && std::count(base.begin(), base.end(), '.') >= 4) return base.substr(prefix.size());
  return facts.nccl_version;
}

// The mapped objects and what their dynamic sections say, indexed by the names a DT_NEEDED
// entry can use (file name and soname).
class LoadedObjects {
 public:
  explicit LoadedObjects(const std::vector<std::string>& files) {
    for (const auto& file : files) {
      if (file.find(" (deleted)") != std::string::npos) continue;
      Result<ElfFacts> facts = InspectElf(file);
      if (!facts.ok()) continue;  // not an object we can read: nothing to say about it
      by_name_[BaseName(file)] = file;
      if (!facts->soname.empty()) by_name_[facts->soname] = file;
      facts_.emplace(file, std::move(facts).value());
    }
  }
  const ElfFacts* Facts(const std::string& file) const {
    auto it = facts_.find(file);
    return it == facts_.end() ? nullptr : &it->second;
  }
  std::string ByName(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? "" : it->second;
  }
  const std::map<std::string, ElfFacts>& All() const { return facts_; }

  // child -> the object whose DT_NEEDED first named it, breadth first from `root`.
  std::map<std::string, std::string> NeededClosure(const std::string& root) const {
    std::map<std::string, std::string> parent{{root, ""}};
    std::deque<std::string> queue{root};
    while (!queue.empty()) {
      std::string file = queue.front();
      queue.pop_front();
      const ElfFacts* facts = Facts(file);
      for (const auto& name : facts ? facts->needed : std::vector<std::string>{}) {
        std::string child = ByName(name);
        if (!child.empty() && parent.emplace(child, file).second) queue.push_back(child);
      }
    }
    return parent;
  }

 private:
  std::map<std::string, ElfFacts> facts_;
  std::map<std::string, std::string> by_name_;
};

// Whether `dir` is one of the colon-separated `paths` ($ORIGIN is `origin`).
bool ListsDirectory(const std::string& paths, const std::string& origin, const std::string& dir) {
  for (auto entry : Split(paths, ":")) {
    for (const std::string token : {"${ORIGIN}", "$ORIGIN"}) {
      if (entry.rfind(token, 0) == 0) entry = origin + entry.substr(token.size());
    }
    if (RealPath(entry) == dir) return true;
  }
  return false;
}

// ld.so's order: RPATH (the object's, then the program's) unless the object has a RUNPATH,
// LD_LIBRARY_PATH, RUNPATH, then the system path.
std::string SearchPath(const LoadedObjects& objects, int pid, const std::string& exe, const std::string& needer,
                       const std::string& nccl) {
  std::string dir = RealPath(DirName(nccl));
  const ElfFacts* facts = objects.Facts(needer);
  const ElfFacts* program = objects.Facts(exe);
  if (facts && facts->runpath.empty()) {
    if (ListsDirectory(facts->rpath, DirName(needer), dir)) return "RPATH " + facts->rpath + " of " + needer;
    if (program && ListsDirectory(program->rpath, DirName(exe), dir)) return "RPATH " + program->rpath + " of " + exe;
  }
  if (ListsDirectory(EnvironmentValue(pid, "LD_LIBRARY_PATH"), ".", dir)) return "LD_LIBRARY_PATH";
  if (facts && ListsDirectory(facts->runpath, DirName(needer), dir)) {
    return "RUNPATH " + facts->runpath + " of " + needer;
  }
  return "the system search path (ld.so.cache, /lib, /usr/lib)";
}

void Arrive(const LoadedObjects& objects, const std::map<std::string, std::string>& closure,
            const std::vector<std::string>& preloads, LoadedNccl* nccl) {
  for (const auto& entry : preloads) {
    if (RealPath(entry) == RealPath(nccl->path)) {
      nccl->arrival = NcclArrival::kPreloaded;
      return;
    }
  }
  auto in_closure = closure.find(nccl->path);
  if (in_closure != closure.end() && !in_closure->second.empty()) {
    nccl->needed_by = in_closure->second;
    nccl->arrival = closure.at(nccl->needed_by).empty() ? NcclArrival::kNeededByProgram : NcclArrival::kNeededInClosure;
    return;
  }
  const ElfFacts* own = objects.Facts(nccl->path);
  for (const auto& [file, facts] : objects.All()) {
    for (const auto& name : facts.needed) {
      if (name == BaseName(nccl->path) || (own && name == own->soname)) {
        nccl->needed_by = file;
        nccl->arrival = NcclArrival::kNeededByDlopened;
        return;
      }
    }
  }
  nccl->arrival = NcclArrival::kDlopened;
}

std::string ReadExe(int pid) {
  char target[PATH_MAX];
  ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), target, sizeof(target) - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : "";
}

}  // namespace

Result<ProcessReach> InspectProcessReach(int pid) {
  ProcessReach reach;
  bool readable = false;
  std::vector<std::string> files = MappedFiles(pid, &readable);
  if (!readable) return Status::Error("no such process " + std::to_string(pid) + " (or no permission to read its maps)");
  reach.exe = ReadExe(pid);
  LoadedObjects objects(files);
  auto closure = objects.NeededClosure(reach.exe);
  std::vector<std::string> preloads = Preloads(pid);
  for (const auto& [file, facts] : objects.All()) {
    if (IsPreloadLibrary(file)) {
      reach.preload_mapped = true;
    } else if (IsNcclLibraryName(file)) {
      LoadedNccl nccl;
      nccl.path = file;
      nccl.version = VersionOf(file, facts);
      Arrive(objects, closure, preloads, &nccl);
      if (!nccl.needed_by.empty()) nccl.search = SearchPath(objects, pid, reach.exe, nccl.needed_by, file);
      reach.nccls.push_back(nccl);
    } else if (facts.defines_nccl_symbol && reach.static_nccl_in.empty()) {
      reach.static_nccl_in = file;
    }
  }
  reach.preload_ahead = reach.preload_mapped && PreloadedAheadOfNccl(preloads);
  return reach;
}

std::string DescribeArrival(const LoadedNccl& nccl, const std::string& exe) {
  switch (nccl.arrival) {
    case NcclArrival::kPreloaded: return "LD_PRELOAD (or /etc/ld.so.preload) names it";
    case NcclArrival::kNeededByProgram: return "NEEDED of the main program " + exe + ", found through " + nccl.search;
    case NcclArrival::kNeededInClosure:
      return "NEEDED of " + nccl.needed_by + " (in the program's NEEDED closure), found through " + nccl.search;
    case NcclArrival::kNeededByDlopened:
      return "NEEDED of " + nccl.needed_by +
             ", outside the program's NEEDED closure: loaded under a dlopen (e.g. of a Python extension), found "
             "through " + nccl.search;
    case NcclArrival::kDlopened: break;
  }
  return "dlopen (no loaded object lists it as NEEDED: ctypes.CDLL, dlopen by name or path)";
}

std::string DescribeReach(const ProcessReach& reach, const LoadedNccl& nccl) {
  if (!reach.preload_mapped) {
    return "NO: libncclwatch.so is not loaded; start the job with `ncclwatch run` or LD_PRELOAD=.../libncclwatch.so";
  }
  if (!reach.preload_ahead) {
    return "NO: libncclwatch.so is mapped but not preloaded ahead of NCCL (not in LD_PRELOAD, or after a libnccl "
           "there), so calls bind to NCCL itself";
  }
  if (nccl.arrival == NcclArrival::kDlopened) {
    return "yes, through the dlsym hook (ctypes, dlopen + dlsym, RTLD_DEFAULT); not if opened RTLD_DEEPBIND or "
           "looked up with dlvsym";
  }
  return "yes: its callers bind to ncclwatch's exports, which come first in the global scope";
}

std::string DescribeServes(const ProcessReach& reach, const LoadedNccl& nccl) {
  if (nccl.arrival == NcclArrival::kDlopened) {
    return "only the callers that dlopen'ed it and look its functions up on that handle (ctypes, dlsym: JAX, "
           "vLLM's pynccl); code linked against NCCL does not reach it";
  }
  int global = 0;
  for (const LoadedNccl& other : reach.nccls) global += other.arrival != NcclArrival::kDlopened ? 1 : 0;
  std::string whose = nccl.arrival == NcclArrival::kPreloaded         ? std::string("every caller (it is preloaded)")
                      : nccl.arrival == NcclArrival::kNeededByProgram ? "the program's calls"
                                                                      : "the calls of " + nccl.needed_by;
  if (global > 1) {
    return whose + "; " + std::to_string(global) +
           " copies are in the global scope, and a caller that binds by name gets the one loaded first";
  }
  return whose + ", and every caller that binds NCCL's names in the global scope";
}

}  // namespace ncclwatch::tools
