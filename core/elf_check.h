// Whether a file can be a shared library for this process, from its ELF headers, read before
// dlopen: a plugin built for another architecture or word size gets a reason that says so, and a
// truncated one is refused before the dynamic loader maps it (touching a mapped page past the end
// of a file raises SIGBUS).
#ifndef INFINIRT_CORE_ELF_CHECK_H_
#define INFINIRT_CORE_ELF_CHECK_H_

#include <sys/types.h>

#include <string>

namespace infinirt::core {

// Why the open file `fd`, `size` bytes long, cannot be loaded into this process, or "" when its
// headers fit: the ELF magic; the class (32/64-bit), byte order and machine of this process
// (read from the core's own mapped ELF header); type ET_DYN; and program headers, loadable
// segments and section header table that lie within the file.
std::string ElfProblem(int fd, off_t size);

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_ELF_CHECK_H_
