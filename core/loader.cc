// Plugin discovery and loading: LoadPlugins, from the search plan to the backends and the
// listing (the steps are in loader_discovery.cc, loader_checks.cc, loader_open.cc and
// loader_listing.cc; loader.h says what is done).
#include "loader.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>

#include "loader_internal.h"
#include "loader_search.h"
#include "log.h"

namespace infinirt::core {

using namespace loader_internal;  // NOLINT: the loader's own helpers

namespace {

// What the discovery log says of a plugin that loaded, by its status in the listing.
const char* LoadedVerdict(infinirtBackendStatus_t status) {
  switch (status) {
    case infinirtBackendLoaded:
      return "loaded";
    case infinirtBackendRuntimeMissing:
      return "loaded; its vendor runtime is missing";
    case infinirtBackendInitFailed:
      return "loaded; its vendor runtime failed to initialise";
    default:
      return "loaded";
  }
}

}  // namespace

LoadResult LoadPlugins(const Config& config, const std::string& library_dir) {
  LoadResult result;
  const SearchPlan plan = PlanSearch(config, library_dir);
  const BackendFilter filter = MakeBackendFilter(config);
  const bool allow_insecure = InsecurePluginsAllowed();
  const std::vector<Candidate> candidates = FindCandidates(plan, allow_insecure, &result);
  // A listing entry is about 7 KiB: grow the vector once, not entry by entry.
  result.listing.reserve(result.listing.size() + candidates.size() + KnownBackendNames().size());

  std::set<std::string> seen_paths;
  CheckedDirectories checked_directories;
  LoaderSearch loader_search;  // what the plugins' vendor runtime names can be found as
  for (const Candidate& found : candidates) {
    const std::string& candidate = found.path;
    const std::string& real = found.real_path;
    std::string name = BackendNameOfFile(candidate);
    infinirtBackendProp listing = NewListing(name, real);
    const auto started = std::chrono::steady_clock::now();
    auto finish = [&](const char* verdict) {
      listing.loadTimeMs =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
              .count();
      Log().debug("loader: {} -> {}{}{}", candidate, verdict, listing.reason[0] ? ": " : "",
                  listing.reason);
      result.listing.push_back(listing);
    };
    if (!seen_paths.insert(real).second) {
      listing.status = infinirtBackendDuplicate;
      CopyString(listing.reason, "the same file was already considered as " + real);
      finish("skipped (duplicate file)");
      continue;
    }
    if (!name.empty() && !filter.Passes(name)) {
      listing.status = infinirtBackendFilteredOut;
      CopyString(listing.reason, filter.FilteredOutReason());
      finish("skipped (filtered out)");
      continue;
    }
    std::string allowed_problem;
    if (!PassesFileChecks(found, real, allow_insecure, &checked_directories, &listing,
                          &allowed_problem)) {
      finish(listing.status == infinirtBackendInsecure ? "refused (insecure)" : "rejected");
      continue;
    }
    std::unique_ptr<Backend> backend = OpenPlugin(real, &listing);
    if (!backend) {
      finish("rejected");
      continue;
    }
    name = backend->name;
    if (!filter.Passes(name)) {
      listing.status = infinirtBackendFilteredOut;
      CopyString(listing.reason, filter.FilteredOutReason());
      finish("skipped (filtered out)");
      continue;
    }
    auto same_name = std::find_if(result.backends.begin(), result.backends.end(),
                                  [&](const auto& loaded) { return loaded->name == name; });
    if (same_name != result.backends.end()) {
      listing.status = infinirtBackendDuplicate;
      CopyString(listing.reason,
                 "backend '" + name + "' is already loaded from " + (*same_name)->path);
      finish("skipped (duplicate backend)");
      continue;
    }
    if (!backend->missing_entries.empty()) {
      std::string missing;
      for (const auto& entry : backend->missing_entries) missing += " " + entry;
      Log().debug("loader: {} lacks entries (they answer NotSupported):{}", name, missing);
    }
    if (!InitializePlugin(backend.get(), config, &loader_search, &listing)) {
      finish("rejected");
      continue;
    }
    if (!allowed_problem.empty() && listing.reason[0] == '\0') {
      CopyString(listing.reason,
                 "loaded although " + allowed_problem + " (" + kAllowInsecure + "=1)");
    }
    listing.deviceCount = backend->device_count;
    finish(LoadedVerdict(listing.status));
    result.listing_of_backend.push_back(static_cast<int>(result.listing.size()) - 1);
    result.backends.push_back(std::move(backend));
  }

  const std::string searched = result.searched.empty() ? "(nothing)" : Join(result.searched);
  ListUnconsideredDeviceTypes(filter, searched, &result);
  WarnAboutUnknownNames(filter, result.listing);
  if (result.backends.empty()) Log().error("{}", NothingLoadedMessage(filter, result, searched));
  return result;
}

}  // namespace infinirt::core
