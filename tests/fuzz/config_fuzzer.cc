// Fuzzes the configuration file's parser (core/config.cc) with arbitrary text, and the vendor
// plugins' runtime_library section (plugins/common/vendor_library.cc) with the same text as a
// plugin's section. Neither may crash, leak or hang, whatever the bytes; problems are reported
// as messages.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config.h"
#include "vendor_library.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  infinirt::core::ConfigProblems problems;
  const infinirt::core::Config config = infinirt::core::ParseConfig(text, "fuzz.json", &problems);
  (void)config;
  // The vendor plugins get their section as JSON text; a NUL ends it, as it would in C.
  static const infinirt::plugin::PluginLog log("nvidia");  // not attached: logs nothing
  const infinirt::plugin::CandidateList list =
      infinirt::plugin::VendorCandidates("nvidia", text.c_str(), log);
  for (const std::string& pattern : list.patterns) infinirt::plugin::ExpandCandidate(pattern, log);
  return 0;
}
