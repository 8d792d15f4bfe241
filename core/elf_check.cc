#include "elf_check.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace infinirt::core {

namespace {

using Header = ElfW(Ehdr);
using ProgramHeader = ElfW(Phdr);

// The core's own ELF header, as mapped in memory: the class, byte order and machine that a
// plugin must have.
const Header& ProcessHeader() {
  static const Header* header = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<void*>(&ElfProblem), &info);
    return static_cast<const Header*>(info.dli_fbase);
  }();
  return *header;
}

std::string MachineName(unsigned machine) {
  switch (machine) {
    case EM_386:
      return "x86";
    case EM_X86_64:
      return "x86-64";
    case EM_ARM:
      return "ARM";
    case EM_AARCH64:
      return "AArch64";
    case EM_RISCV:
      return "RISC-V";
    case EM_PPC:
      return "PowerPC";
    case EM_PPC64:
      return "PowerPC64";
    case EM_S390:
      return "S/390";
    case EM_MIPS:
      return "MIPS";
    case EM_SPARCV9:
      return "SPARC V9";
    case EM_IA_64:
      return "IA-64";
    case 258:  // EM_LOONGARCH, missing from older <elf.h>
      return "LoongArch";
    default:
      return "machine " + std::to_string(machine);
  }
}

std::string ClassName(unsigned char elf_class) {
  switch (elf_class) {
    case ELFCLASS32:
      return "32-bit (ELFCLASS32)";
    case ELFCLASS64:
      return "64-bit (ELFCLASS64)";
    default:
      return "ELF class " + std::to_string(elf_class);
  }
}

std::string ByteOrderName(unsigned char data) {
  switch (data) {
    case ELFDATA2LSB:
      return "little-endian (ELFDATA2LSB)";
    case ELFDATA2MSB:
      return "big-endian (ELFDATA2MSB)";
    default:
      return "ELF data encoding " + std::to_string(data);
  }
}

std::string Truncated(off_t size, const std::string& what, uint64_t end) {
  return "truncated: " + what + " ends at byte " + std::to_string(end) +
         ", past the end of the file (" + std::to_string(size) + " bytes)";
}

// The end of `count` items of `item_size` bytes at `offset`, or UINT64_MAX on overflow.
uint64_t EndOf(uint64_t offset, uint64_t count, uint64_t item_size) {
  if (item_size != 0 && count > (UINT64_MAX - offset) / item_size) return UINT64_MAX;
  return offset + count * item_size;
}

// Magic, class and byte order: the identification bytes, before the header can be read.
std::string IdentificationProblem(const unsigned char* bytes, size_t read, off_t size) {
  if (size == 0) return "not an ELF file: the file is empty (0 bytes)";
  if (read < SELFMAG || std::memcmp(bytes, ELFMAG, SELFMAG) != 0) {
    return "not an ELF file: it does not start with the ELF magic \\x7fELF";
  }
  if (read < EI_NIDENT) {
    return Truncated(size, "the ELF identification", EI_NIDENT);
  }
  const Header& process = ProcessHeader();
  if (bytes[EI_CLASS] != process.e_ident[EI_CLASS]) {
    return "built for " + ClassName(bytes[EI_CLASS]) + "; this process is " +
           ClassName(process.e_ident[EI_CLASS]);
  }
  if (bytes[EI_DATA] != process.e_ident[EI_DATA]) {
    return "built for " + ByteOrderName(bytes[EI_DATA]) + "; this process is " +
           ByteOrderName(process.e_ident[EI_DATA]);
  }
  return "";
}

std::string HeaderProblem(const Header& header) {
  if (header.e_type != ET_DYN) {
    return "not a shared library (e_type " + std::to_string(header.e_type) + ", not ET_DYN)";
  }
  const unsigned process_machine = ProcessHeader().e_machine;
  if (header.e_machine != process_machine) {
    return "built for " + MachineName(header.e_machine) + " (e_machine " +
           std::to_string(header.e_machine) + "); this process is " + MachineName(process_machine) +
           " (e_machine " + std::to_string(process_machine) + ")";
  }
  if (header.e_phnum == 0 || header.e_phentsize != sizeof(ProgramHeader)) {
    return "malformed ELF header: " + std::to_string(header.e_phnum) + " program headers of " +
           std::to_string(header.e_phentsize) + " bytes";
  }
  return "";
}

// The first bytes of the file, read at once: the ELF header and, in files as linkers write
// them, the program headers right after it (one read per plugin instead of two).
constexpr size_t kFirstRead = 1024;

// Everything the dynamic loader maps or reads must lie within the file. `first` holds the
// file's first `first_size` bytes.
std::string ExtentProblem(int fd, off_t size, const Header& header, const unsigned char* first,
                          size_t first_size) {
  const uint64_t file_size = static_cast<uint64_t>(size);
  const uint64_t headers_end = EndOf(header.e_phoff, header.e_phnum, header.e_phentsize);
  if (headers_end > file_size) return Truncated(size, "the program header table", headers_end);
  std::vector<ProgramHeader> segments(header.e_phnum);
  const size_t bytes = segments.size() * sizeof(ProgramHeader);
  if (headers_end <= first_size) {
    std::memcpy(segments.data(), first + header.e_phoff, bytes);
  } else if (pread(fd, segments.data(), bytes, static_cast<off_t>(header.e_phoff)) !=
             static_cast<ssize_t>(bytes)) {
    return "cannot read the program headers";
  }
  for (const ProgramHeader& segment : segments) {
    const uint64_t end = EndOf(segment.p_offset, 1, segment.p_filesz);
    if (segment.p_type == PT_LOAD && end > file_size) {
      return Truncated(size, "a loadable segment", end);
    }
  }
  if (header.e_shoff != 0) {
    const uint64_t end = EndOf(header.e_shoff, header.e_shnum, header.e_shentsize);
    if (end > file_size) return Truncated(size, "the section header table", end);
  }
  return "";
}

}  // namespace

std::string ElfProblem(int fd, off_t size) {
  unsigned char first[kFirstRead];
  const ssize_t read = pread(fd, first, sizeof(first), 0);
  if (read < 0) return "cannot read the ELF header";
  if (std::string problem = IdentificationProblem(first, static_cast<size_t>(read), size);
      !problem.empty()) {
    return problem;
  }
  if (static_cast<size_t>(read) < sizeof(Header)) {
    return Truncated(size, "the ELF header", sizeof(Header));
  }
  Header header;
  std::memcpy(&header, first, sizeof(header));
  if (std::string problem = HeaderProblem(header); !problem.empty()) return problem;
  return ExtentProblem(fd, size, header, first, static_cast<size_t>(read));
}

}  // namespace infinirt::core
