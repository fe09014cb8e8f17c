#include "tools/doctor/elf_inspect.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace ncclwatch::tools {
namespace {

// A read-only mapping of a whole file, with bounds-checked access.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      error_ = std::strerror(errno);
      return;
    }
    struct stat st;
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const char*>(p);
        size_ = static_cast<size_t>(st.st_size);
      } else {
        error_ = std::strerror(errno);
      }
    } else {
      error_ = "empty or unreadable file";
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& error() const { return error_; }
  std::string_view bytes() const { return {data_, size_}; }

  template <typename T>
  const T* At(uint64_t offset, uint64_t count = 1) const {
    if (offset > size_ || count > (size_ - offset) / sizeof(T)) return nullptr;
    return reinterpret_cast<const T*>(data_ + offset);
  }

  // NUL-terminated string at `offset` of a string table [base, base+table_size).
  std::string_view String(uint64_t base, uint64_t table_size, uint64_t offset) const {
    if (base > size_ || table_size > size_ - base || offset >= table_size) return {};
    const char* start = data_ + base + offset;
    size_t max = table_size - offset;
    return {start, strnlen(start, max)};
  }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
  std::string error_;
};

bool IsNcclDefinition(std::string_view name) { return name == "ncclAllReduce" || name == "pncclAllReduce"; }

// NCCL prints "NCCL version 2.28.9+cuda13.0" at init; the banner is a literal in the library.
std::string NcclVersionBanner(std::string_view bytes) {
  constexpr std::string_view kBanner = "NCCL version ";
  for (size_t at = bytes.find(kBanner); at != std::string_view::npos; at = bytes.find(kBanner, at + 1)) {
    size_t start = at + kBanner.size(), end = start;
    auto digit = [&](size_t i) { return std::isdigit(static_cast<unsigned char>(bytes[i])) != 0; };
    while (end < bytes.size() && (digit(end) || bytes[end] == '.')) ++end;
    if (end > start && digit(start)) return std::string(bytes.substr(start, end - start));
  }
  return "";
}

void ReadSections(const MappedFile& file, ElfFacts* facts) {
  const auto* header = file.At<Elf64_Ehdr>(0);
  const auto* sections = file.At<Elf64_Shdr>(header->e_shoff, header->e_shnum);
  if (!sections) return;  // no section table (e.g. stripped of it): only the string search applies
  for (int i = 0; i < header->e_shnum; ++i) {
    const Elf64_Shdr& s = sections[i];
    if (s.sh_link >= header->e_shnum) continue;
    const Elf64_Shdr& strtab = sections[s.sh_link];
    if (s.sh_type == SHT_DYNAMIC) {
      const auto* dyn = file.At<Elf64_Dyn>(s.sh_offset, s.sh_size / sizeof(Elf64_Dyn));
      for (size_t k = 0; dyn && k < s.sh_size / sizeof(Elf64_Dyn) && dyn[k].d_tag != DT_NULL; ++k) {
        std::string_view value = file.String(strtab.sh_offset, strtab.sh_size, dyn[k].d_un.d_val);
        if (dyn[k].d_tag == DT_NEEDED) facts->needed.emplace_back(value);
        if (dyn[k].d_tag == DT_SONAME) facts->soname = value;
        if (dyn[k].d_tag == DT_RPATH) facts->rpath = value;
        if (dyn[k].d_tag == DT_RUNPATH) facts->runpath = value;
      }
    } else if (s.sh_type == SHT_SYMTAB || s.sh_type == SHT_DYNSYM) {
      size_t count = s.sh_size / sizeof(Elf64_Sym);
      const auto* syms = file.At<Elf64_Sym>(s.sh_offset, count);
      for (size_t k = 0; syms && k < count; ++k) {
        if (syms[k].st_shndx == SHN_UNDEF) continue;
        if (IsNcclDefinition(file.String(strtab.sh_offset, strtab.sh_size, syms[k].st_name))) {
          facts->defines_nccl_symbol = true;
        }
      }
    }
  }
}

}  // namespace

bool IsNcclLibraryName(const std::string& name) {
  size_t slash = name.rfind('/');
  std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  return base.rfind("libnccl.so", 0) == 0;
}

Result<ElfFacts> InspectElf(const std::string& path) {
  ElfFacts facts;
  MappedFile file(path);
  if (!file.error().empty()) return Status::Error(path + ": " + file.error());
  const auto* header = file.At<Elf64_Ehdr>(0);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0) return Status::Error(path + ": not an ELF file");
  if (header->e_ident[EI_CLASS] != ELFCLASS64) return Status::Error(path + ": not a 64-bit ELF file");
  ReadSections(file, &facts);
  facts.contains_nccl_string = file.bytes().find("ncclAllReduce") != std::string_view::npos;
  facts.nccl_version = NcclVersionBanner(file.bytes());
  return facts;
}

}  // namespace ncclwatch::tools
