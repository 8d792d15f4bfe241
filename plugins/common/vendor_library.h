// Finding and opening a vendor's runtime library, shared by every vendor plugin.
//
// The candidates come from the vendor table, config/vendors.json (compiled in), or, replacing them,
// from the "runtime_library" key of the plugin's section of infinirt.json, or, replacing both, from
// the vendor's environment variable (INFINIRT_<VENDOR>_RUNTIME, colon-separated). Variables are
// read with secure_getenv: a setuid/setgid process ignores them, and logs a warning when
// INFINIRT_<VENDOR>_RUNTIME is set (a debug line for a ${VAR} of the candidate list). Each
// candidate is opened with RTLD_NOW | RTLD_LOCAL (dlopen reuses a copy the process already
// has); the first that opens wins. When none opens, the library remembers what was
// tried and every dlopen answer, for the backend listing.
#ifndef INFINIRT_PLUGINS_COMMON_VENDOR_LIBRARY_H_
#define INFINIRT_PLUGINS_COMMON_VENDOR_LIBRARY_H_

#include <string>
#include <vector>

#include "infinirt_plugin.h"
#include "plugin_support.h"

namespace infinirt::plugin {

// Where the candidates of one vendor come from.
struct CandidateList {
  // Before ${VAR} and glob expansion: VendorLibrary::Open expands each when it reaches it, so a
  // runtime found early costs no directory reads for the patterns after it.
  std::vector<std::string> patterns;
  std::string source;  // "INFINIRT_NVIDIA_RUNTIME", "infinirt.json", "built-in list"
};

// The candidates for `vendor` (a row of config/vendors.json), given the plugin's config
// section as JSON text. Malformed override text yields an empty list with the reason in
// source. INFINIRT_<VENDOR>_RUNTIME ignored because of AT_SECURE is logged through log (the
// ${VAR}s of the patterns are read, and logged, when Open expands them).
CandidateList VendorCandidates(const std::string& vendor, const char* config_json,
                               const PluginLog& log);

// The candidates of a library that other data lists (a collective library of
// config/vendors.json, ...): the colon-separated list in `variable` replaces
// `builtin` (ended by nullptr), read as VendorCandidates reads INFINIRT_<VENDOR>_RUNTIME.
CandidateList ListedCandidates(const char* variable, const char* const* builtin,
                               const std::string& builtin_source, const PluginLog& log);

// ${VAR} substitution (an entry with an unset or empty variable expands to nothing) followed by
// glob expansion (sorted; a pattern without matches expands to nothing; a plain name or path
// is kept as it is, for the dynamic loader to search).
std::vector<std::string> ExpandCandidate(const std::string& pattern, const PluginLog& log);

// dlopen(name, flags), except that a bare name the core's host table says the dynamic loader
// certainly cannot find is not searched for again (ABI 1.1; the whole search of every directory,
// per name, was a fifth of infinirtInit). On failure *error holds dlopen's message, or the same
// words for a name not searched.
void* OpenLibrary(const std::string& name, int flags, const PluginLog& log, std::string* error);

class VendorLibrary {
 public:
  VendorLibrary() = default;
  // Never dlcloses: vendor runtimes start threads and register exit handlers, and are not
  // made to be unloaded. A later Open of the same file reuses the loaded copy.
  ~VendorLibrary() = default;
  VendorLibrary(const VendorLibrary&) = delete;
  VendorLibrary& operator=(const VendorLibrary&) = delete;

  // Expands each pattern in order and tries what it expands to. True when one opened.
  bool Open(const CandidateList& candidates, const PluginLog& log);
  // Forgets the library (it stays loaded).
  void Close();

  bool is_open() const { return handle_ != nullptr; }
  // The file that was opened (as dlinfo reports it), or "" when none.
  const std::string& path() const { return path_; }
  // dlopen's answer for every candidate tried, separated by "; ", for the listing.
  const std::string& attempts() const { return attempts_; }
  // "candidate1, candidate2 (from SOURCE)", for the listing when none opened: every candidate.
  const std::string& tried() const { return tried_; }

  // The address of `name` in the opened library, or nullptr.
  void* Symbol(const char* name) const;

 private:
  void* handle_ = nullptr;
  std::string path_;
  std::string attempts_;
  std::string tried_;
};

// Fills a plugin's GetInfo answer: the library in use (or the candidates tried), whether the
// runtime is missing (nothing opened) or unusable (opened, but a required function is missing
// or it failed to initialise), its version and the reason for having no device.
void FillPluginInfo(const VendorLibrary& library, bool usable, int runtime_version,
                    const std::string& reason, infinirtPluginInfo* info);

}  // namespace infinirt::plugin

#endif  // INFINIRT_PLUGINS_COMMON_VENDOR_LIBRARY_H_
