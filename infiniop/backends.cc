#include "backends.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "infiniop/backend_info.h"
#include "status_log.h"

namespace infiniop {

namespace {

const char* PluginName(infiniDevice_t type) {
#define INFINIOP_PLUGIN_NAME_(name, value, display, plugin) \
  case INFINI_DEVICE_##name:                                \
    return #plugin;
  switch (type) {
    INFINIRT_DEVICE_TYPES(INFINIOP_PLUGIN_NAME_)
    default:
      return nullptr;
  }
#undef INFINIOP_PLUGIN_NAME_
}

// What is wrong with a backend's table for device type `type`, or "".
std::string TableProblem(const infiniopBackendTable* table, infiniDevice_t type) {
  if (table == nullptr) return "its table is null";
  if (table->abi_major != INFINIOP_BACKEND_ABI_MAJOR) {
    return "backend ABI " + std::to_string(table->abi_major) + " (this libinfiniop reads " +
           std::to_string(INFINIOP_BACKEND_ABI_MAJOR) + ")";
  }
  if (table->struct_size < offsetof(infiniopBackendTable, Destroy) + sizeof(table->Destroy)) {
    return "its table is too small";
  }
  if (table->device_type != type) return "its table serves another device type";
  if (table->Initialize == nullptr || table->Create == nullptr || table->Run == nullptr ||
      table->Destroy == nullptr) {
    return "its table lacks an entry";
  }
  return "";
}

// Opens the backend of a device type; on failure the listing says why.
Backend Open(infiniDevice_t type) {
  Backend backend{nullptr, {}};
  const char* plugin = PluginName(type);
  if (plugin == nullptr) {
    std::snprintf(backend.listing.reason, sizeof backend.listing.reason, "unknown device type %d",
                  static_cast<int>(type));
    backend.listing.status = infinirtBackendUnknownDeviceType;
    return backend;
  }
  const std::string file = std::string("libinfiniop_") + plugin + ".so";
  void* library = nullptr;
  if (infinirtOpenExtensionLibrary(file.c_str(), &library, &backend.listing) != infinirtSuccess) {
    infinirtGetLastError();
    return backend;
  }
  auto get_table =
      reinterpret_cast<infiniopBackendGetTableFn>(dlsym(library, INFINIOP_BACKEND_ENTRY_SYMBOL));
  if (get_table == nullptr) {
    backend.listing.status = infinirtBackendNoEntryPoint;
    std::snprintf(backend.listing.reason, sizeof backend.listing.reason, "%s lacks %s",
                  file.c_str(), INFINIOP_BACKEND_ENTRY_SYMBOL);
    dlclose(library);
    return backend;
  }
  const infiniopBackendTable* table = get_table();
  const std::string problem = TableProblem(table, type);
  if (!problem.empty()) {
    backend.listing.status = infinirtBackendBadTable;
    std::snprintf(backend.listing.reason, sizeof backend.listing.reason, "%s: %s", file.c_str(),
                  problem.c_str());
    dlclose(library);
    return backend;
  }
  char why[1024] = "";
  const infiniStatus_t initialized = table->Initialize(why, sizeof why);
  if (initialized != INFINI_STATUS_SUCCESS) {
    why[sizeof why - 1] = '\0';
    backend.listing.status = infinirtBackendInitFailed;
    std::snprintf(backend.listing.reason, sizeof backend.listing.reason,
                  "%s: its Initialize failed (status %d)%s%s", file.c_str(),
                  static_cast<int>(initialized), why[0] != '\0' ? ": " : "", why);
    dlclose(library);
    return backend;
  }
  // Kept open until the process exits: descriptors refer to its code.
  backend.table = table;
  return backend;
}

// The backend of a device type, its listing naming it whatever happened.
Backend Load(infiniDevice_t type) {
  Backend backend = Open(type);
  const char* plugin = PluginName(type);
  std::snprintf(backend.listing.name, sizeof backend.listing.name, "%s",
                plugin != nullptr ? plugin : "?");
  backend.listing.deviceType = type;
  return backend;
}

}  // namespace

const Backend* LoadedBackend(infiniDevice_t type) {
  static std::once_flag loaded[INFINI_DEVICE_TYPE_COUNT];
  static Backend backends[INFINI_DEVICE_TYPE_COUNT];
  const int index = static_cast<int>(type);
  if (index < 0 || index >= INFINI_DEVICE_TYPE_COUNT) return nullptr;
  std::call_once(loaded[index], [&] { backends[index] = Load(type); });
  return &backends[index];
}

const Backend* BackendFor(infiniDevice_t type, std::string* why) {
  const Backend* backend = LoadedBackend(type);
  if (backend == nullptr) {
    *why = "unknown device type " + std::to_string(static_cast<int>(type));
    return nullptr;
  }
  if (backend->table == nullptr) {
    *why = backend->listing.reason;
    return nullptr;
  }
  return backend;
}

}  // namespace infiniop

extern "C" infiniStatus_t infiniopGetBackendInfo(infiniDevice_t device_type,
                                                 infinirtBackendProp* info) {
  if (info == nullptr) {
    return infiniop::Refuse(INFINI_STATUS_NULL_POINTER, "infiniopGetBackendInfo: info is NULL");
  }
  const infiniop::Backend* backend = infiniop::LoadedBackend(device_type);
  if (backend == nullptr) {
    return infiniop::Refuse(
        INFINI_STATUS_BAD_PARAM,
        "infiniopGetBackendInfo: " + std::to_string(static_cast<int>(device_type)) +
            " is no device type");
  }
  *info = backend->listing;
  return INFINI_STATUS_SUCCESS;
}
