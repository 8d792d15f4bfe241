// What the generators of checked-in files (per_thread_variants, operator_sources, vendor_table)
// share: reading a file whole, and bringing one up to date with --write or saying, with --check,
// that it is not.
#ifndef INFINIRT_TESTS_TOOLS_GENERATED_FILES_H_
#define INFINIRT_TESTS_TOOLS_GENERATED_FILES_H_

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace generated_files {

// The file's bytes; "" for a file that cannot be read.
inline std::string Read(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// Whether root/relative holds `text`. Writing, a file that does not is rewritten (and said so)
// and counts as current; checking, it is named with the command that rewrites it (`stale_why`).
inline bool Refresh(const std::filesystem::path& root, const std::string& relative,
                    const std::string& text, bool write, const std::string& stale_why) {
  const std::filesystem::path path = root / relative;
  if (Read(path) == text) return true;
  if (write) {
    std::ofstream(path, std::ios::binary) << text;
    std::printf("wrote %s\n", relative.c_str());
    return true;
  }
  std::printf("%s %s\n", relative.c_str(), stale_why.c_str());
  return false;
}

}  // namespace generated_files

#endif  // INFINIRT_TESTS_TOOLS_GENERATED_FILES_H_
