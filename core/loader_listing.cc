// The backend listing (infinirtGetBackendProperties, what infinirt-info prints): its entries,
// one for each device type whose plugin no file was found for (not found, not built, filtered
// out), and the messages about the backend filter and about nothing loaded.
#include <algorithm>
#include <iterator>

#include "loader_internal.h"
#include "log.h"

namespace infinirt::core {
namespace loader_internal {

infinirtBackendProp NewListing(const std::string& name, const std::string& path) {
  infinirtBackendProp prop{};
  CopyString(prop.name, name);
  CopyString(prop.path, path);
  prop.deviceType = INFINI_DEVICE_TYPE_COUNT;
  prop.abiMajor = prop.abiMinor = -1;
  prop.runtimeVersion = -1;
  return prop;
}

std::string Join(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ", ") + item;
  return joined;
}

// A listing entry for every device type whose plugin no file was found for: not found, not
// built, or filtered out.
void ListUnconsideredDeviceTypes(const BackendFilter& filter, const std::string& searched,
                                 LoadResult* result) {
  for (const std::string& name : KnownBackendNames()) {
    const bool considered = std::any_of(result->listing.begin(), result->listing.end(),
                                        [&](const auto& l) { return name == l.name; });
    if (considered) continue;
    infinirtBackendProp listing = NewListing(name, "");
    const std::string file = std::string(kPluginPrefix) + name + kPluginSuffix;
    if (!PluginIsBuilt(name)) {
      // Nothing was expected: not "not found", which would send the user looking for a file.
      listing.status = infinirtBackendNotBuilt;
      CopyString(listing.reason, "this build of InfiniRT has no " + name + " plugin (and no " +
                                     file + " was found in: " + searched + ")");
    } else if (!filter.Passes(name)) {
      listing.status = infinirtBackendFilteredOut;
      CopyString(listing.reason, filter.FilteredOutReason());
    } else {
      listing.status = infinirtBackendNotFound;
      CopyString(listing.reason, file + " not found in: " + searched);
    }
    result->listing.push_back(listing);
  }
}

// A filter name that is neither a device type's plugin nor the name of a plugin found is most
// likely a typo or a vendor's product name (INFINIRT_BACKENDS=cuda): it silently matches nothing,
// so it is named in a warning with the names that would match.
void WarnAboutUnknownNames(const BackendFilter& filter,
                           const std::vector<infinirtBackendProp>& listing) {
  std::vector<std::string> known = KnownBackendNames();
  for (const infinirtBackendProp& entry : listing) {
    if (entry.name[0] && std::find(known.begin(), known.end(), entry.name) == known.end()) {
      known.push_back(entry.name);
    }
  }
  std::vector<std::string> unknown;
  for (const std::string& name : filter.names) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      unknown.push_back("'" + name + "'");
    }
  }
  if (unknown.empty()) return;
  Log().warn("{}: no backend is named {}; the backend names are: {}", filter.origin, Join(unknown),
             Join(known));
}

// The error when no plugin loaded, naming the filter when it removed every plugin found.
std::string NothingLoadedMessage(const BackendFilter& filter, const LoadResult& result,
                                 const std::string& searched) {
  std::vector<std::string> found, filtered;
  for (const infinirtBackendProp& entry : result.listing) {
    if (entry.path[0] == '\0') continue;  // a device type without a file
    found.push_back(entry.name);
    if (entry.status == infinirtBackendFilteredOut) filtered.push_back(entry.name);
  }
  if (!found.empty() && filtered.size() == found.size()) {
    return "no InfiniRT plugin loaded: " + filter.origin + " filtered out every plugin found (" +
           Join(filtered) + "); searched: " + searched;
  }
  std::string message = "no InfiniRT plugin could be loaded; searched: " + searched;
  if (!filtered.empty()) message += "; " + filter.origin + " filtered out " + Join(filtered);
  return message;
}

}  // namespace loader_internal

// The device type list's values are consecutive from 0: INFINI_DEVICE_TYPE_COUNT then counts the
// types, a type indexes arrays of that many entries (infinirtGetAllDeviceCount), and
// KnownBackendNames()[type] is the plugin name of a type.
#define INFINIRT_DEVICE_VALUE_(name, value, display, plugin) value,
constexpr int kDeviceTypeValues[] = {INFINIRT_DEVICE_TYPES(INFINIRT_DEVICE_VALUE_)};
#undef INFINIRT_DEVICE_VALUE_
constexpr bool DeviceTypeValuesAreConsecutiveFromZero() {
  for (size_t i = 0; i < std::size(kDeviceTypeValues); ++i) {
    if (kDeviceTypeValues[i] != static_cast<int>(i)) return false;
  }
  return std::size(kDeviceTypeValues) == INFINI_DEVICE_TYPE_COUNT;
}
static_assert(DeviceTypeValuesAreConsecutiveFromZero(),
              "INFINIRT_DEVICE_TYPES must list the values 0, 1, 2, ... in order");

namespace {

// Whether this build makes the plugin of each device type, by type. core/CMakeLists.txt defines
// INFINIRT_PLUGIN_BUILT_<plugin name> as 1 or 0 for every entry of INFINIRT_DEVICE_TYPES.
#define INFINIRT_PLUGIN_BUILT_(name, value, display, plugin) INFINIRT_PLUGIN_BUILT_##plugin != 0,
constexpr bool kPluginBuilt[] = {INFINIRT_DEVICE_TYPES(INFINIRT_PLUGIN_BUILT_)};
#undef INFINIRT_PLUGIN_BUILT_

}  // namespace

bool PluginIsBuilt(const std::string& name) {
  const auto& names = KnownBackendNames();
  const auto found = std::find(names.begin(), names.end(), name);
  return found != names.end() && kPluginBuilt[found - names.begin()];
}

const std::vector<std::string>& KnownBackendNames() {
#define INFINIRT_PLUGIN_NAME_(name, value, display, plugin) #plugin,
  // Never destroyed: a thread may still load the runtime while the process exits (and is then
  // refused, but after reading these).
  static const std::vector<std::string>& names =
      *new std::vector<std::string>{INFINIRT_DEVICE_TYPES(INFINIRT_PLUGIN_NAME_)};
#undef INFINIRT_PLUGIN_NAME_
  return names;
}

}  // namespace infinirt::core
