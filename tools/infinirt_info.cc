// infinirt-info: the backends InfiniRT considered (loaded or not) and the devices it exposes.
//
// By default one line per backend and one per device, in aligned columns. -v adds why each
// backend is or is not loaded (path, runtime library, reason: every dlopen error) and a page per
// device with its properties and every device attribute. --json prints the backends and devices
// as one JSON document (its keys are stable: scripts read them). --help lists every environment
// variable InfiniRT reads. For every loaded backend, the operator backend (InfiniOP) of its
// device type is listed too: loaded, or why not.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "env_variables.h"
#include "infiniccl.h"
#include "infiniop.h"
#include "infinirt.h"
#include "vendor_environment.h"

namespace {

// --- Names --------------------------------------------------------------------------------

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

// The name people know a device type by ("NVIDIA", "Moore Threads").
const char* DeviceTypeDisplayName(infiniDevice_t type) {
  switch (type) {
#define INFINIRT_INFO_DISPLAY_NAME_(name, value, display, plugin) \
  case INFINI_DEVICE_##name:                                      \
    return display;
    INFINIRT_DEVICE_TYPES(INFINIRT_INFO_DISPLAY_NAME_)
#undef INFINIRT_INFO_DISPLAY_NAME_
    default:
      return "unknown";
  }
}

// A backend whose plugin loaded: its device count means something.
bool IsLoaded(const infinirtBackendProp& backend) {
  return backend.status == infinirtBackendLoaded || backend.status == infinirtBackendRuntimeMissing;
}

// --- What is reported ---------------------------------------------------------------------

struct DeviceReport {
  int ordinal = 0;
  infinirtDeviceProp prop{};
  size_t free_bytes = 0;
  bool have_free = false;
};

struct Report {
  std::vector<infinirtBackendProp> backends;
  std::vector<DeviceReport> devices;
  // The operator backend and the collective engine of each loaded backend's device type, in the
  // backends' order.
  std::vector<infinirtBackendProp> operator_backends;
  std::vector<infinirtBackendProp> collective_engines;
};

// Describes, once per device type, the library of a loaded backend's type that `describe`
// (infiniopGetBackendInfo, infinicclGetEngineInfo) loads and lists.
std::vector<infinirtBackendProp> CollectPerDeviceType(
    const std::vector<infinirtBackendProp>& backends,
    infiniStatus_t (*describe)(infiniDevice_t, infinirtBackendProp*)) {
  std::vector<infinirtBackendProp> listed;
  for (const infinirtBackendProp& backend : backends) {
    if (backend.status != infinirtBackendLoaded || backend.deviceType >= INFINI_DEVICE_TYPE_COUNT) {
      continue;
    }
    const bool seen = std::any_of(listed.begin(), listed.end(), [&](const auto& entry) {
      return entry.deviceType == backend.deviceType;
    });
    infinirtBackendProp info{};
    if (!seen && describe(backend.deviceType, &info) == INFINI_STATUS_SUCCESS) {
      listed.push_back(info);
    }
  }
  return listed;
}

Report Collect() {
  infinirtInit();  // NoDevice is reported with the devices, not here
  Report report;
  int backend_count = 0;
  infinirtGetBackendCount(&backend_count);
  report.backends.resize(backend_count);
  for (int i = 0; i < backend_count; ++i) infinirtGetBackendProperties(&report.backends[i], i);
  int device_count = 0;
  infinirtGetDeviceCount(&device_count);
  report.devices.resize(device_count);
  for (int i = 0; i < device_count; ++i) {
    DeviceReport& device = report.devices[i];
    device.ordinal = i;
    infinirtGetDeviceProperties(&device.prop, i);
    size_t total = 0;
    device.have_free = infinirtSetDevice(i) == infinirtSuccess &&
                       infinirtMemGetInfo(&device.free_bytes, &total) == infinirtSuccess;
  }
  report.operator_backends = CollectPerDeviceType(report.backends, &infiniopGetBackendInfo);
  report.collective_engines = CollectPerDeviceType(report.backends, &infinicclGetEngineInfo);
  return report;
}

// --- Text ---------------------------------------------------------------------------------

// Rows of cells in aligned columns, two spaces apart; each row may be followed by detail lines,
// indented to the second column.
class Table {
 public:
  explicit Table(std::vector<bool> right_aligned) : right_aligned_(std::move(right_aligned)) {}

  void Add(std::vector<std::string> cells, std::vector<std::string> details = {}) {
    rows_.push_back({std::move(cells), std::move(details)});
  }

  void Print(const char* indent) const {
    std::vector<size_t> widths(right_aligned_.size(), 0);
    for (const Row& row : rows_) {
      for (size_t i = 0; i < row.cells.size(); ++i) {
        widths[i] = std::max(widths[i], row.cells[i].size());
      }
    }
    for (const Row& row : rows_) {
      std::string line = indent;
      for (size_t i = 0; i < row.cells.size(); ++i) {
        const std::string padding(widths[i] - row.cells[i].size(), ' ');
        if (i > 0) line += "  ";
        line += right_aligned_[i] ? padding + row.cells[i] : row.cells[i] + padding;
      }
      line.erase(line.find_last_not_of(' ') + 1);
      std::printf("%s\n", line.c_str());
      const std::string detail_indent = indent + std::string(widths[0] + 2, ' ');
      for (const std::string& detail : row.details) {
        std::printf("%s%s\n", detail_indent.c_str(), detail.c_str());
      }
    }
  }

 private:
  struct Row {
    std::vector<std::string> cells;
    std::vector<std::string> details;
  };
  std::vector<bool> right_aligned_;
  std::vector<Row> rows_;
};

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string GiB(size_t bytes) {
  return Format("%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

std::string Bytes(size_t bytes) {
  if (bytes == SIZE_MAX) return std::to_string(bytes) + " (SIZE_MAX: no limit)";
  return std::to_string(bytes) + (bytes >= (size_t{1} << 30) ? " (" + GiB(bytes) + ")" : "");
}

std::string Memory(const DeviceReport& device) {
  std::string memory = GiB(device.prop.totalGlobalMem);
  if (device.have_free) memory += " (" + GiB(device.free_bytes) + " free)";
  return memory;
}

void PrintHeading() {
  int runtime_version = 0;
  infinirtRuntimeGetVersion(&runtime_version);
  std::printf("InfiniRT %d.%d.%d (CUDA Runtime API %d)\n\n", INFINIRT_VERSION_MAJOR,
              INFINIRT_VERSION_MINOR, INFINIRT_VERSION_PATCH, runtime_version);
}

// Why there is no device, from the backends' listing: the reasons of the loaded backends (their
// devices hidden by INFINIRT_VISIBLE_DEVICES, a runtime without devices), one line each, else
// that none loaded.
std::vector<std::string> NoDeviceReasons(const std::vector<infinirtBackendProp>& backends) {
  std::vector<std::string> reasons;
  bool any_loaded = false;
  for (const infinirtBackendProp& backend : backends) {
    if (!IsLoaded(backend)) continue;
    any_loaded = true;
    if (backend.status == infinirtBackendLoaded && backend.reason[0]) {
      reasons.push_back(std::string(backend.name) + ": " + backend.reason);
    }
  }
  if (!any_loaded) return {"no backend loaded (-v says why)"};
  if (reasons.empty()) return {"no loaded backend has a device (-v says why)"};
  return reasons;
}

void PrintNoDevice(const std::vector<infinirtBackendProp>& backends, const char* indent) {
  const std::vector<std::string> reasons = NoDeviceReasons(backends);
  if (reasons.size() == 1) {
    std::printf("%sNo device: %s\n", indent, reasons[0].c_str());
    return;
  }
  std::printf("%sNo device:\n", indent);
  for (const std::string& reason : reasons) std::printf("%s  %s\n", indent, reason.c_str());
}

// The short details of a backend: the vendor runtime in use and its version, whenever the
// runtime answered (also when it then failed to initialise, a missing driver say: that is when
// a user most needs the version); for a loaded backend why it has fewer devices than it could
// (hidden by INFINIRT_VISIBLE_DEVICES, none in its runtime), and for one that failed to
// initialise the error. The reasons of the others are long (every dlopen error of every
// candidate, every directory searched): -v prints them.
std::string ShortDetails(const infinirtBackendProp& backend) {
  std::string details;
  if (backend.runtimeLibrary[0] && backend.runtimeVersion >= 0) {
    details = std::string("runtime: ") + backend.runtimeLibrary + ", version " +
              std::to_string(backend.runtimeVersion);
  }
  const bool short_reason =
      backend.status == infinirtBackendLoaded || backend.status == infinirtBackendInitFailed;
  if (short_reason && backend.reason[0]) {
    details += (details.empty() ? "" : "; ") + std::string(backend.reason);
  }
  return details;
}

// The operator backends or collective engines: one line each, with the path (verbose) or the
// reason it is not loaded.
void PrintLibraries(const char* title, const std::vector<infinirtBackendProp>& operators,
                    const char* indent, bool verbose) {
  if (operators.empty()) return;
  std::printf("%s%s:\n", indent, title);
  Table table({false, false, false});
  for (const infinirtBackendProp& entry : operators) {
    // The short form names a failed initialisation's error only (the reasons of the others list
    // every directory searched: -v's).
    std::string details;
    if (verbose) details = entry.status == infinirtBackendLoaded ? entry.path : entry.reason;
    if (!verbose && entry.status == infinirtBackendInitFailed) details = entry.reason;
    table.Add({DeviceTypeDisplayName(entry.deviceType), StatusName(entry.status), details});
  }
  table.Print(verbose ? "    " : "  ");
  std::printf("\n");
}

// One line per backend and one per device.
void PrintShort(const Report& report) {
  PrintHeading();
  Table backends({false, false, true, false});
  backends.Add({"Backend", "Status", "Devices", "Details"});
  bool any_unloaded = false;
  for (const infinirtBackendProp& backend : report.backends) {
    any_unloaded = any_unloaded || backend.status != infinirtBackendLoaded;
    backends.Add({backend.name, StatusName(backend.status),
                  IsLoaded(backend) ? std::to_string(backend.deviceCount) : "-",
                  ShortDetails(backend)});
  }
  backends.Print("");
  std::printf("\n");
  PrintLibraries("Operator backends (InfiniOP)", report.operator_backends, "",
                 /*verbose=*/false);
  PrintLibraries("Collective engines (InfiniCCL)", report.collective_engines, "",
                 /*verbose=*/false);
  if (report.devices.empty()) {
    PrintNoDevice(report.backends, "");
  } else {
    Table devices({true, false, false, false, false});
    devices.Add({"Device", "Type", "Name", "Backend", "Memory"});
    for (const DeviceReport& device : report.devices) {
      devices.Add({std::to_string(device.ordinal), DeviceTypeDisplayName(device.prop.deviceType),
                   device.prop.name,
                   std::string(device.prop.backendName) + ":" +
                       std::to_string(device.prop.vendorDeviceIndex),
                   Memory(device)});
    }
    devices.Print("");
  }
  if (any_unloaded) {
    std::printf(
        "\ninfinirt-info -v: why each backend is or is not loaded, and every device's "
        "properties.\n");
  }
}

std::string Uuid(const infinirtUUID_t& uuid) {
  std::string text;
  for (int i = 0; i < 16; ++i) {
    char byte[4];
    std::snprintf(byte, sizeof(byte), "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    text += byte;
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

// "a x b" or "a x b x c": a field that is an array of sizes.
template <size_t N>
std::string Dimensions(const int (&values)[N]) {
  std::string text;
  for (size_t i = 0; i < N; ++i) text += (i ? " x " : "") + std::to_string(values[i]);
  return text;
}

// Every field of infinirtDeviceProp, by its name (the reserved ones excepted).
void PrintProperties(const infinirtDeviceProp& p) {
  Table table({false, false});
#define INFINIRT_INFO_INT_(field) table.Add({#field, std::to_string(p.field)});
#define INFINIRT_INFO_BYTES_(field) table.Add({#field, Bytes(p.field)});
#define INFINIRT_INFO_DIMENSIONS_(field) table.Add({#field, Dimensions(p.field)});
  table.Add({"name", p.name});
  table.Add({"uuid", Uuid(p.uuid)});
  INFINIRT_INFO_BYTES_(totalGlobalMem)
  INFINIRT_INFO_BYTES_(sharedMemPerBlock)
  INFINIRT_INFO_INT_(regsPerBlock)
  INFINIRT_INFO_INT_(warpSize)
  INFINIRT_INFO_BYTES_(memPitch)
  INFINIRT_INFO_INT_(maxThreadsPerBlock)
  INFINIRT_INFO_DIMENSIONS_(maxThreadsDim)
  INFINIRT_INFO_DIMENSIONS_(maxGridSize)
  INFINIRT_INFO_BYTES_(totalConstMem)
  INFINIRT_INFO_INT_(major)
  INFINIRT_INFO_INT_(minor)
  INFINIRT_INFO_INT_(textureAlignment)
  INFINIRT_INFO_INT_(texturePitchAlignment)
  INFINIRT_INFO_INT_(multiProcessorCount)
  INFINIRT_INFO_INT_(integrated)
  INFINIRT_INFO_INT_(canMapHostMemory)
  INFINIRT_INFO_INT_(maxTexture1D)
  INFINIRT_INFO_INT_(maxTexture1DMipmap)
  INFINIRT_INFO_DIMENSIONS_(maxTexture2D)
  INFINIRT_INFO_DIMENSIONS_(maxTexture2DMipmap)
  INFINIRT_INFO_DIMENSIONS_(maxTexture2DLinear)
  INFINIRT_INFO_DIMENSIONS_(maxTexture2DGather)
  INFINIRT_INFO_DIMENSIONS_(maxTexture3D)
  INFINIRT_INFO_DIMENSIONS_(maxTexture3DAlt)
  INFINIRT_INFO_INT_(maxTextureCubemap)
  INFINIRT_INFO_DIMENSIONS_(maxTexture1DLayered)
  INFINIRT_INFO_DIMENSIONS_(maxTexture2DLayered)
  INFINIRT_INFO_DIMENSIONS_(maxTextureCubemapLayered)
  INFINIRT_INFO_INT_(maxSurface1D)
  INFINIRT_INFO_DIMENSIONS_(maxSurface2D)
  INFINIRT_INFO_DIMENSIONS_(maxSurface3D)
  INFINIRT_INFO_DIMENSIONS_(maxSurface1DLayered)
  INFINIRT_INFO_DIMENSIONS_(maxSurface2DLayered)
  INFINIRT_INFO_INT_(maxSurfaceCubemap)
  INFINIRT_INFO_DIMENSIONS_(maxSurfaceCubemapLayered)
  INFINIRT_INFO_INT_(surfaceAlignment)
  INFINIRT_INFO_INT_(concurrentKernels)
  INFINIRT_INFO_INT_(ECCEnabled)
  INFINIRT_INFO_INT_(pciBusID)
  INFINIRT_INFO_INT_(pciDeviceID)
  INFINIRT_INFO_INT_(pciDomainID)
  INFINIRT_INFO_INT_(tccDriver)
  INFINIRT_INFO_INT_(asyncEngineCount)
  INFINIRT_INFO_INT_(unifiedAddressing)
  INFINIRT_INFO_INT_(memoryBusWidth)
  INFINIRT_INFO_INT_(l2CacheSize)
  INFINIRT_INFO_INT_(persistingL2CacheMaxSize)
  INFINIRT_INFO_INT_(maxThreadsPerMultiProcessor)
  INFINIRT_INFO_INT_(streamPrioritiesSupported)
  INFINIRT_INFO_INT_(globalL1CacheSupported)
  INFINIRT_INFO_INT_(localL1CacheSupported)
  INFINIRT_INFO_BYTES_(sharedMemPerMultiprocessor)
  INFINIRT_INFO_INT_(regsPerMultiprocessor)
  INFINIRT_INFO_INT_(managedMemory)
  INFINIRT_INFO_INT_(isMultiGpuBoard)
  INFINIRT_INFO_INT_(multiGpuBoardGroupID)
  INFINIRT_INFO_INT_(hostNativeAtomicSupported)
  INFINIRT_INFO_INT_(pageableMemoryAccess)
  INFINIRT_INFO_INT_(concurrentManagedAccess)
  INFINIRT_INFO_INT_(computePreemptionSupported)
  INFINIRT_INFO_INT_(canUseHostPointerForRegisteredMem)
  INFINIRT_INFO_INT_(cooperativeLaunch)
  INFINIRT_INFO_BYTES_(sharedMemPerBlockOptin)
  INFINIRT_INFO_INT_(pageableMemoryAccessUsesHostPageTables)
  INFINIRT_INFO_INT_(directManagedMemAccessFromHost)
  INFINIRT_INFO_INT_(maxBlocksPerMultiProcessor)
  INFINIRT_INFO_INT_(accessPolicyMaxWindowSize)
  INFINIRT_INFO_BYTES_(reservedSharedMemPerBlock)
  INFINIRT_INFO_INT_(hostRegisterSupported)
  INFINIRT_INFO_INT_(sparseCudaArraySupported)
  INFINIRT_INFO_INT_(hostRegisterReadOnlySupported)
  INFINIRT_INFO_INT_(timelineSemaphoreInteropSupported)
  INFINIRT_INFO_INT_(memoryPoolsSupported)
  INFINIRT_INFO_INT_(gpuDirectRDMASupported)
  INFINIRT_INFO_INT_(gpuDirectRDMAFlushWritesOptions)
  INFINIRT_INFO_INT_(gpuDirectRDMAWritesOrdering)
  INFINIRT_INFO_INT_(memoryPoolSupportedHandleTypes)
  INFINIRT_INFO_INT_(deferredMappingCudaArraySupported)
  INFINIRT_INFO_INT_(ipcEventSupported)
  INFINIRT_INFO_INT_(clusterLaunch)
  INFINIRT_INFO_INT_(unifiedFunctionPointers)
  INFINIRT_INFO_INT_(deviceNumaConfig)
  INFINIRT_INFO_INT_(deviceNumaId)
  INFINIRT_INFO_INT_(mpsEnabled)
  INFINIRT_INFO_INT_(hostNumaId)
  INFINIRT_INFO_INT_(gpuPciDeviceID)
  INFINIRT_INFO_INT_(gpuPciSubsystemID)
  INFINIRT_INFO_INT_(hostNumaMultinodeIpcSupported)
  table.Add({"deviceType", std::string(DeviceTypeDisplayName(p.deviceType)) + " (" +
                               std::to_string(static_cast<int>(p.deviceType)) + ")"});
  INFINIRT_INFO_INT_(vendorDeviceIndex)
  table.Add({"backendName", p.backendName});
#undef INFINIRT_INFO_INT_
#undef INFINIRT_INFO_BYTES_
#undef INFINIRT_INFO_DIMENSIONS_
  table.Print("    ");
}

// Every device attribute of infinirt.h's list, by name without "infinirtDevAttr"; an attribute
// the backend does not answer shows its error.
void PrintAttributes(int ordinal) {
  Table table({false, false});
#define INFINIRT_INFO_ATTRIBUTE_(name, value)                                                     \
  {                                                                                               \
    int answer = 0;                                                                               \
    const infinirtError_t error = infinirtDeviceGetAttribute(&answer, infinirt##name, ordinal);   \
    table.Add({std::string(#name).substr(sizeof("DevAttr") - 1),                                  \
               error == infinirtSuccess ? std::to_string(answer)                                  \
                                        : std::string("(") + infinirtGetErrorName(error) + ")"}); \
  }
  INFINIRT_DEVICE_ATTR_LIST(INFINIRT_INFO_ATTRIBUTE_)
#undef INFINIRT_INFO_ATTRIBUTE_
  infinirtGetLastError();  // an attribute a backend does not answer is no error of the tool's
  table.Print("    ");
}

// A page per device, as CUDA's deviceQuery sample prints.
void PrintDevicePage(const DeviceReport& device) {
  std::printf("Device %d: %s\n", device.ordinal, device.prop.name);
  std::printf("  %s device %d of backend %s; memory %s\n",
              DeviceTypeDisplayName(device.prop.deviceType), device.prop.vendorDeviceIndex,
              device.prop.backendName, Memory(device).c_str());
  std::printf("  Properties (infinirtGetDeviceProperties):\n");
  PrintProperties(device.prop);
  std::printf("  Attributes (infinirtDeviceGetAttribute):\n");
  PrintAttributes(device.ordinal);
}

// What the default output leaves out: for every backend its ABI, load time, path, runtime
// library and reason; then a page per device.
void PrintVerbose(const Report& report) {
  PrintHeading();
  std::printf("Backends (%zu considered):\n", report.backends.size());
  Table backends({false, false, false});
  for (const infinirtBackendProp& backend : report.backends) {
    std::string summary;
    if (IsLoaded(backend)) {
      summary = std::to_string(backend.deviceCount) + " device(s), ABI " +
                std::to_string(backend.abiMajor) + "." + std::to_string(backend.abiMinor) + ", " +
                Format("%.2f ms", backend.loadTimeMs);
    }
    std::vector<std::string> details;
    if (backend.path[0]) details.push_back(std::string("path:    ") + backend.path);
    // The version is known whenever the runtime answered, also when it then failed to
    // initialise (no driver, say): that is when a user most needs it.
    if (backend.runtimeLibrary[0]) {
      std::string runtime = std::string("runtime: ") + backend.runtimeLibrary;
      if (backend.runtimeVersion >= 0)
        runtime += ", version " + std::to_string(backend.runtimeVersion);
      details.push_back(runtime);
    }
    if (backend.reason[0]) details.push_back(std::string("reason:  ") + backend.reason);
    backends.Add({backend.name, StatusName(backend.status), summary}, details);
  }
  backends.Print("  ");
  std::printf("\n");
  PrintLibraries("Operator backends (InfiniOP)", report.operator_backends, "  ",
                 /*verbose=*/true);
  PrintLibraries("Collective engines (InfiniCCL)", report.collective_engines, "  ",
                 /*verbose=*/true);
  std::printf("Devices (%zu):\n", report.devices.size());
  if (report.devices.empty()) PrintNoDevice(report.backends, "  ");
  for (const DeviceReport& device : report.devices) {
    std::printf("\n");
    PrintDevicePage(device);
  }
}

// --- JSON ---------------------------------------------------------------------------------

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

void PrintJson(const Report& report) {
  nlohmann::json json;
  int runtime_version = 0;
  infinirtRuntimeGetVersion(&runtime_version);
  json["infinirt_version"] = std::to_string(INFINIRT_VERSION_MAJOR) + "." +
                             std::to_string(INFINIRT_VERSION_MINOR) + "." +
                             std::to_string(INFINIRT_VERSION_PATCH);
  json["cuda_api_version"] = runtime_version;
  json["backends"] = nlohmann::json::array();
  for (const auto& backend : report.backends) json["backends"].push_back(BackendJson(backend));
  json["devices"] = nlohmann::json::array();
  for (const auto& device : report.devices) json["devices"].push_back(DeviceJson(device));
  for (const auto& [key, entries] :
       {std::make_pair("operator_backends", &report.operator_backends),
        std::make_pair("collective_engines", &report.collective_engines)}) {
    json[key] = nlohmann::json::array();
    for (const auto& entry : *entries) {
      json[key].push_back({{"name", entry.name},
                           {"device_type", DeviceTypeName(entry.deviceType)},
                           {"status", StatusKey(entry.status)},
                           {"path", entry.path},
                           {"reason", entry.reason}});
    }
  }
  std::printf("%s\n", json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// --- Options ------------------------------------------------------------------------------

// Text in lines of at most 80 columns, each starting with indent.
void PrintWrapped(const std::string& indent, const std::string& text) {
  constexpr size_t kWidth = 80;
  std::string line = indent;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (line.size() > indent.size() && line.size() + 1 + word.size() > kWidth) {
      std::printf("%s\n", line.c_str());
      line = indent;
    }
    line += (line.size() > indent.size() ? " " : "") + word;
    start = end + 1;
  }
  std::printf("%s\n", line.c_str());
}

void PrintVariable(const char* usage, const char* meaning) {
  std::printf("  %s\n", usage);
  PrintWrapped("      ", meaning);
}

void PrintHelp() {
  std::printf(
      "usage: infinirt-info [-v] [--json]\n"
      "       infinirt-info --version | --help\n"
      "\n"
      "Lists the backends InfiniRT considered, loaded or not, and the devices it exposes.\n"
      "\n"
      "  -v, --verbose  also why each backend is or is not loaded (path, runtime library,\n"
      "                 every dlopen error) and a page per device: its properties and every\n"
      "                 device attribute\n"
      "  --json         the backends and devices as one JSON document\n"
      "  --version      the InfiniRT version and the CUDA Runtime API version it implements\n"
      "  -h, --help     this text\n"
      "\n"
      "Exit status: 0 when there is a device, 1 when there is none, 2 for a bad argument.\n"
      "\n"
      "Environment (read by libinfinirt.so and its plugins; keywords in the values, such as\n"
      "log levels and backend names, are case-insensitive):\n");
#define INFINIRT_INFO_CORE_VARIABLE_(name, syntax, meaning) \
  PrintVariable(#name "=" syntax, meaning);
  INFINIRT_CORE_ENVIRONMENT(INFINIRT_INFO_CORE_VARIABLE_)
#undef INFINIRT_INFO_CORE_VARIABLE_
  std::string vendor_variables;
#define INFINIRT_INFO_VENDOR_VARIABLE_(variable, plugin) \
  vendor_variables += std::string(vendor_variables.empty() ? "" : ", ") + variable;
  INFINIRT_INFO_VENDOR_RUNTIMES(INFINIRT_INFO_VENDOR_VARIABLE_)
#undef INFINIRT_INFO_VENDOR_VARIABLE_
  PrintVariable("INFINIRT_<VENDOR>_RUNTIME=LIBRARY[:...]",
                ("the vendor runtime library a plugin opens, instead of its built-in "
                 "candidates: " +
                 vendor_variables)
                    .c_str());
  PrintWrapped("  ", std::string("The plugins' built-in candidates also use ") +
                         INFINIRT_INFO_CANDIDATE_VARIABLES +
                         "; a bare library name is searched by the dynamic loader "
                         "(LD_LIBRARY_PATH).");
}

void PrintVersion() {
  std::printf("infinirt-info (InfiniRT) %d.%d.%d, CUDA Runtime API %d\n", INFINIRT_VERSION_MAJOR,
              INFINIRT_VERSION_MINOR, INFINIRT_VERSION_PATCH, INFINIRT_CUDA_API_VERSION);
}

bool Is(const char* argument, const char* short_form, const char* long_form) {
  return (short_form && std::strcmp(argument, short_form) == 0) ||
         std::strcmp(argument, long_form) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false, verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (Is(argv[i], nullptr, "--json")) {
      json = true;
    } else if (Is(argv[i], "-v", "--verbose")) {
      verbose = true;
    } else if (Is(argv[i], "-h", "--help")) {
      PrintHelp();
      return 0;
    } else if (Is(argv[i], nullptr, "--version")) {
      PrintVersion();
      return 0;
    } else {
      std::fprintf(stderr, "infinirt-info: unknown argument '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  const Report report = Collect();
  if (json) {
    PrintJson(report);
  } else if (verbose) {
    PrintVerbose(report);
  } else {
    PrintShort(report);
  }
  infinirtFinalize();
  return report.devices.empty() ? 1 : 0;
}
