// infinirt-info: lists every backend InfiniRT considered (loaded or not, and why) and every
// device it exposes. --json prints the same as one JSON document.
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "infinirt.h"

namespace {

struct StatusNames {
  infinirtBackendStatus_t status;
  const char* text;  // for people
  const char* key;   // for --json: stable, machine-readable
};

constexpr StatusNames kStatusNames[] = {
    {infinirtBackendLoaded, "loaded", "loaded"},
    {infinirtBackendNotFound, "not found", "not_found"},
    {infinirtBackendDlopenFailed, "dlopen failed", "dlopen_failed"},
    {infinirtBackendNoEntryPoint, "no entry point", "no_entry_point"},
    {infinirtBackendAbiTooOld, "ABI too old", "abi_too_old"},
    {infinirtBackendAbiTooNew, "ABI too new", "abi_too_new"},
    {infinirtBackendBadTable, "bad plugin table", "bad_table"},
    {infinirtBackendRuntimeMissing, "vendor runtime missing", "runtime_missing"},
    {infinirtBackendInitFailed, "init failed", "init_failed"},
    {infinirtBackendFilteredOut, "filtered out", "filtered_out"},
    {infinirtBackendDuplicate, "duplicate", "duplicate"},
    {infinirtBackendInsecure, "insecure", "insecure"},
    {infinirtBackendUnknownDeviceType, "unknown device type", "unknown_device_type"},
    {infinirtBackendNotBuilt, "no plugin built", "not_built"},
};

const StatusNames& NamesOf(infinirtBackendStatus_t status) {
  static constexpr StatusNames kUnknown = {infinirtBackendLoaded, "unknown", "unknown"};
  for (const StatusNames& names : kStatusNames) {
    if (names.status == status) return names;
  }
  return kUnknown;
}

const char* StatusName(infinirtBackendStatus_t status) { return NamesOf(status).text; }
const char* StatusKey(infinirtBackendStatus_t status) { return NamesOf(status).key; }

// The plugin name of a device type ("nvidia"), as --json has always reported types.
const char* DeviceTypeName(infiniDevice_t type) {
  switch (type) {
#define INFINIRT_INFO_TYPE_NAME_(name, value, display, plugin) \
  case INFINI_DEVICE_##name:                                   \
    return #plugin;
    INFINIRT_DEVICE_TYPES(INFINIRT_INFO_TYPE_NAME_)
#undef INFINIRT_INFO_TYPE_NAME_
    default:
      return "unknown";
  }
}

struct DeviceReport {
  int ordinal = 0;
  infinirtDeviceProp prop{};
  size_t free_bytes = 0;
  bool have_free = false;
};

nlohmann::json BackendJson(const infinirtBackendProp& backend) {
  nlohmann::json entry = {
      {"name", backend.name},
      {"status", StatusKey(backend.status)},
      {"reason", backend.reason},
      {"path", backend.path},
      {"device_count", backend.deviceCount},
      {"load_time_ms", backend.loadTimeMs},
  };
  entry["device_type"] = backend.deviceType < INFINI_DEVICE_TYPE_COUNT
                             ? nlohmann::json(DeviceTypeName(backend.deviceType))
                             : nlohmann::json(nullptr);
  entry["abi_version"] = backend.abiMajor >= 0
                             ? nlohmann::json(std::to_string(backend.abiMajor) + "." +
                                              std::to_string(backend.abiMinor))
                             : nlohmann::json(nullptr);
  entry["runtime_version"] = backend.runtimeVersion >= 0 ? nlohmann::json(backend.runtimeVersion)
                                                         : nlohmann::json(nullptr);
  entry["runtime_library"] = backend.runtimeLibrary;
  return entry;
}

nlohmann::json DeviceJson(const DeviceReport& device) {
  nlohmann::json entry = {
      {"ordinal", device.ordinal},          {"type", DeviceTypeName(device.prop.deviceType)},
      {"backend", device.prop.backendName}, {"index", device.prop.vendorDeviceIndex},
      {"name", device.prop.name},           {"total_memory_bytes", device.prop.totalGlobalMem},
  };
  entry["free_memory_bytes"] =
      device.have_free ? nlohmann::json(device.free_bytes) : nlohmann::json(nullptr);
  return entry;
}

double GiB(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

void PrintText(const std::vector<infinirtBackendProp>& backends,
               const std::vector<DeviceReport>& devices) {
  int runtime_version = 0;
  infinirtRuntimeGetVersion(&runtime_version);
  std::printf("InfiniRT %d.%d.%d (CUDA Runtime API %d)\n\n", INFINIRT_VERSION_MAJOR,
              INFINIRT_VERSION_MINOR, INFINIRT_VERSION_PATCH, runtime_version);
  std::printf("Backends (%zu considered):\n", backends.size());
  for (const auto& backend : backends) {
    std::printf("  %-10s %-22s", backend.name, StatusName(backend.status));
    if (backend.status == infinirtBackendLoaded ||
        backend.status == infinirtBackendRuntimeMissing) {
      std::printf(" %d device(s), ABI %d.%d, %.2f ms", backend.deviceCount, backend.abiMajor,
                  backend.abiMinor, backend.loadTimeMs);
    }
    std::printf("\n");
    if (backend.path[0]) std::printf("             path:    %s\n", backend.path);
    // The version is known whenever the runtime answered, also when it then failed to
    // initialise (no driver, say): that is when a user most needs it.
    if (backend.runtimeLibrary[0]) {
      std::printf("             runtime: %s", backend.runtimeLibrary);
      if (backend.runtimeVersion >= 0) std::printf(", version %d", backend.runtimeVersion);
      std::printf("\n");
    }
    if (backend.reason[0]) std::printf("             reason:  %s\n", backend.reason);
  }
  std::printf("\nDevices (%zu):\n", devices.size());
  for (const auto& device : devices) {
    std::printf("  %d  %-9s %s\n", device.ordinal, DeviceTypeName(device.prop.deviceType),
                device.prop.name);
    std::printf("     backend %s, index %d, memory %.1f GiB total", device.prop.backendName,
                device.prop.vendorDeviceIndex, GiB(device.prop.totalGlobalMem));
    if (device.have_free) std::printf(", %.1f GiB free", GiB(device.free_bytes));
    std::printf("\n");
  }
  if (devices.empty()) std::printf("  (none)\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(
          "usage: infinirt-info [--json]\n"
          "Lists the backends InfiniRT considered (loaded or not, with the reason) and the\n"
          "devices it exposes. Exit status: 0 when at least one device is available.\n");
      return 0;
    } else {
      std::fprintf(stderr, "infinirt-info: unknown argument '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  infinirtInit();  // NoDevice is reported below, not here
  int backend_count = 0;
  infinirtGetBackendCount(&backend_count);
  std::vector<infinirtBackendProp> backends(backend_count);
  for (int i = 0; i < backend_count; ++i) infinirtGetBackendProperties(&backends[i], i);

  int device_count = 0;
  infinirtGetDeviceCount(&device_count);
  std::vector<DeviceReport> devices(device_count);
  for (int i = 0; i < device_count; ++i) {
    devices[i].ordinal = i;
    infinirtGetDeviceProperties(&devices[i].prop, i);
    size_t total = 0;
    devices[i].have_free = infinirtSetDevice(i) == infinirtSuccess &&
                           infinirtMemGetInfo(&devices[i].free_bytes, &total) == infinirtSuccess;
  }

  if (json) {
    nlohmann::json report;
    int runtime_version = 0;
    infinirtRuntimeGetVersion(&runtime_version);
    report["infinirt_version"] = std::to_string(INFINIRT_VERSION_MAJOR) + "." +
                                 std::to_string(INFINIRT_VERSION_MINOR) + "." +
                                 std::to_string(INFINIRT_VERSION_PATCH);
    report["cuda_api_version"] = runtime_version;
    report["backends"] = nlohmann::json::array();
    for (const auto& backend : backends) report["backends"].push_back(BackendJson(backend));
    report["devices"] = nlohmann::json::array();
    for (const auto& device : devices) report["devices"].push_back(DeviceJson(device));
    std::printf("%s\n",
                report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    PrintText(backends, devices);
  }
  infinirtFinalize();
  return device_count > 0 ? 0 : 1;
}
