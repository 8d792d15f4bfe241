// Where the loader looks for plugins: the search plan (INFINIRT_PLUGIN_PATH, the directory
// beside libinfinirt.so, the config file's plugin_search_paths), the backend filter
// (INFINIRT_BACKENDS, the config file's "backends"), and the plugin files found.
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>

#include "env.h"
#include "loader_internal.h"
#include "log.h"

namespace infinirt::core {
namespace loader_internal {

namespace {

// The plugin files of a directory, by name. The real path of a regular file is the directory's
// real path and its name, so only links (and entries of unknown type) need realpath(), which
// costs a readlink per path component: six per plugin in a build tree.
std::vector<Candidate> PluginFilesIn(const std::string& directory) {
  std::vector<Candidate> files;
  DIR* dir = opendir(directory.c_str());
  if (dir == nullptr) return files;
  const std::string real_directory = RealPath(directory);
  while (dirent* entry = readdir(dir)) {
    const std::string path = directory + "/" + entry->d_name;
    if (BackendNameOfFile(path).empty()) continue;
    files.push_back(
        {path, "",
         entry->d_type == DT_REG ? real_directory + "/" + entry->d_name : RealPath(path)});
  }
  closedir(dir);
  std::sort(files.begin(), files.end(),
            [](const Candidate& a, const Candidate& b) { return a.path < b.path; });
  return files;
}

// The plugins of a libinfinirt.so are the ones beside it: the directory it was configured to be
// installed in (INFINIRT_INSTALL_PLUGIN_DIR) is searched only when the library cannot tell where
// it is. Searching it as well would make a relocated install (a copied prefix, a build tree, a
// package unpacked elsewhere) load another installation's plugins, of another version, beside
// or instead of its own. Where the library does sit in its install directory, the directory
// beside it is that one.
void LogInstallDirectoryNotSearched(const std::string& library_dir) {
  // The two realpath() calls cost more than the rest of the search plan: only for the log.
  if (!Log().should_log(spdlog::level::debug)) return;
  const std::string beside = library_dir + "/infinirt";
  if (RealPath(beside) == RealPath(INFINIRT_INSTALL_PLUGIN_DIR)) return;
  Log().debug(
      "loader: not searching {}, the plugin directory this InfiniRT was configured to install to: "
      "libinfinirt.so is in {}, so its plugins are in {} (another installation's plugins could "
      "be of another version)",
      INFINIRT_INSTALL_PLUGIN_DIR, library_dir, beside);
}

}  // namespace

// "libinfinirt_<name>.so" -> "<name>"; "" when the file name does not have that form.
std::string BackendNameOfFile(const std::string& path) {
  const std::string file = path.substr(path.find_last_of('/') + 1);
  const size_t prefix = sizeof(kPluginPrefix) - 1, suffix = sizeof(kPluginSuffix) - 1;
  if (file.size() <= prefix + suffix || file.compare(0, prefix, kPluginPrefix) != 0 ||
      file.compare(file.size() - suffix, suffix, kPluginSuffix) != 0) {
    return "";
  }
  std::string name = file.substr(prefix, file.size() - prefix - suffix);
  return IsValidBackendName(name) ? name : "";
}

std::string RealPath(const std::string& path) {
  char buffer[PATH_MAX];
  if (realpath(path.c_str(), buffer) == nullptr) return path;
  return buffer;
}

SearchPlan PlanSearch(const Config& config, const std::string& library_dir) {
  SearchPlan plan;
  std::vector<std::string> raw;
  if (auto env = GetEnv(EnvVar::INFINIRT_PLUGIN_PATH); env && !env->empty()) {
    plan.from_environment = true;
    raw = SplitList(*env, ':');
    Log().debug("loader: INFINIRT_PLUGIN_PATH={} replaces the default search", *env);
  } else {
    if (library_dir.empty()) {
      raw.push_back(INFINIRT_INSTALL_PLUGIN_DIR);
    } else {
      raw.push_back(library_dir + "/infinirt");
      LogInstallDirectoryNotSearched(library_dir);
    }
    raw.insert(raw.end(), config.plugin_search_paths.begin(), config.plugin_search_paths.end());
  }
  for (const std::string& entry : raw) {
    if (entry.empty() || entry[0] != '/') {
      Log().warn("loader: ignoring '{}': plugin search entries must be absolute paths", entry);
      continue;
    }
    if (std::find(plan.entries.begin(), plan.entries.end(), entry) == plan.entries.end()) {
      plan.entries.push_back(entry);
    }
  }
  return plan;
}

BackendFilter MakeBackendFilter(const Config& config) {
  BackendFilter filter;
  if (auto env = GetEnv(EnvVar::INFINIRT_BACKENDS)) {
    filter.names = SplitList(*env, ',');
    filter.origin = "INFINIRT_BACKENDS=" + *env;
  } else {
    filter.names = config.backends;
    filter.origin =
        "the \"backends\" of " + (config.source.empty() ? "the configuration" : config.source);
  }
  for (std::string& name : filter.names) name = ToLower(name);
  return filter;
}

// The plugin files that the search plan finds, in order. Every entry goes to result->searched;
// a missing file named in INFINIRT_PLUGIN_PATH is listed as not found.
std::vector<Candidate> FindCandidates(const SearchPlan& plan, bool allow_insecure,
                                      LoadResult* result) {
  std::vector<Candidate> candidates;
  for (const std::string& entry : plan.entries) {
    struct stat info {};
    result->searched.push_back(entry);
    if (stat(entry.c_str(), &info) != 0) {
      Log().debug("loader: {} does not exist", entry);
      if (plan.from_environment && !BackendNameOfFile(entry).empty()) {
        infinirtBackendProp listing = NewListing(BackendNameOfFile(entry), entry);
        listing.status = infinirtBackendNotFound;
        CopyString(listing.reason, "no such file (named in INFINIRT_PLUGIN_PATH)");
        result->listing.push_back(listing);
      }
      continue;
    }
    if (!S_ISDIR(info.st_mode)) {
      Log().debug("loader: plugin file named directly: {}", entry);
      candidates.push_back({entry, "", RealPath(entry)});
      continue;
    }
    std::vector<Candidate> files = PluginFilesIn(entry);
    Log().debug("loader: searching directory {}: {} plugin file(s)", entry, files.size());
    std::string problem = SearchedDirectoryProblem(entry);
    if (!problem.empty() && allow_insecure) {
      Log().info("loader: searching {} although it is {} ({}=1)", entry, problem, kAllowInsecure);
      problem.clear();
    } else if (!problem.empty()) {
      problem = "the searched directory " + entry + " is " + problem +
                ": another user could add or replace plugins in it, so it is skipped as a whole";
      Log().warn("loader: {}{}", problem, kLoadAnyway);
      result->searched.back() += " (skipped: insecure)";
    }
    for (Candidate& file : files) {
      file.directory_problem = problem;
      candidates.push_back(std::move(file));
    }
  }
  return candidates;
}

}  // namespace loader_internal

using namespace loader_internal;  // NOLINT: the loader's own helpers

std::string LibraryDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&LibraryDirectory), &info) == 0 || !info.dli_fname) {
    return "";
  }
  const std::string path = RealPath(info.dli_fname);
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

}  // namespace infinirt::core
