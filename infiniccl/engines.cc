// The collective engines: libinfiniccl_<engine>.so, found and checked by the runtime's rules
// (infinirtOpenExtensionLibrary), loaded on first use and kept until the process exits. Several
// device types may share an engine (NCCL serves the CUDA family).
#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "infiniccl_internal.h"
#include "infinirt_vendor_table.h"  // generated from config/vendors.json

namespace infiniccl {

namespace {

// The engine that serves a device type (its row's collectives.engine in the vendor table), or
// null for a type without one.
const char* EngineName(infiniDevice_t type) {
  switch (type) {
#define INFINICCL_ENGINE_NAME_(name, enumerator, family, engine, dlpack, operator_backend) \
  case INFINI_DEVICE_##enumerator:                                                         \
    return std::strcmp(#engine, "none") == 0 ? nullptr : #engine;
    INFINIRT_VENDOR_TABLE(INFINICCL_ENGINE_NAME_)
#undef INFINICCL_ENGINE_NAME_
    default:
      return nullptr;
  }
}

// What is wrong with an engine's table, or "".
std::string TableProblem(const infinicclBackendTable* table) {
  if (table == nullptr) return "its table is null";
  if (table->abi_major != INFINICCL_BACKEND_ABI_MAJOR) {
    return "engine ABI " + std::to_string(table->abi_major) + " (this libinfiniccl reads " +
           std::to_string(INFINICCL_BACKEND_ABI_MAJOR) + ")";
  }
  if (table->struct_size < offsetof(infinicclBackendTable, GroupEnd) + sizeof(table->GroupEnd)) {
    return "its table is too small";
  }
  if (table->Initialize == nullptr || table->CommInitAll == nullptr ||
      table->CommDestroy == nullptr || table->CommAbort == nullptr || table->Call == nullptr ||
      table->GroupStart == nullptr || table->GroupEnd == nullptr) {
    return "its table lacks an entry";
  }
  return "";
}

void Refused(Engine* engine, infinirtBackendStatus_t status, const std::string& why) {
  engine->listing.status = status;
  std::snprintf(engine->listing.reason, sizeof engine->listing.reason, "%s", why.c_str());
}

// Opens an engine; on failure its listing says why.
Engine Open(const std::string& name) {
  Engine engine;
  const std::string file = "libinfiniccl_" + name + ".so";
  void* library = nullptr;
  if (infinirtOpenExtensionLibrary(file.c_str(), &library, &engine.listing) != infinirtSuccess) {
    infinirtGetLastError();
    return engine;
  }
  auto get_table =
      reinterpret_cast<infinicclBackendGetTableFn>(dlsym(library, INFINICCL_BACKEND_ENTRY_SYMBOL));
  if (get_table == nullptr) {
    Refused(&engine, infinirtBackendNoEntryPoint,
            file + " lacks " + INFINICCL_BACKEND_ENTRY_SYMBOL);
    dlclose(library);
    return engine;
  }
  const infinicclBackendTable* table = get_table();
  if (const std::string problem = TableProblem(table); !problem.empty()) {
    Refused(&engine, infinirtBackendBadTable, file + ": " + problem);
    dlclose(library);
    return engine;
  }
  char why[1024] = "";
  const infiniStatus_t initialized = table->Initialize(why, sizeof why);
  if (initialized != INFINI_STATUS_SUCCESS) {
    why[sizeof why - 1] = '\0';
    Refused(&engine, infinirtBackendInitFailed,
            file + ": its Initialize failed (status " + std::to_string(initialized) + ")" +
                (why[0] != '\0' ? std::string(": ") + why : ""));
    // Left loaded: what its Initialize allocated before failing is reachable only from the
    // engine's own variables, which unloading it would leave dangling (a leak, to a checker).
    return engine;
  }
  engine.table = table;  // kept open until the process exits: communicators refer to its code
  return engine;
}

std::mutex g_mutex;
std::map<std::string, Engine>& Engines() {  // by name, under g_mutex; never erased
  static auto* engines = new std::map<std::string, Engine>();
  return *engines;
}

}  // namespace

const Engine* LoadedEngine(infiniDevice_t type) {
  const int index = static_cast<int>(type);
  if (index < 0 || index >= INFINI_DEVICE_TYPE_COUNT) return nullptr;
  // The listings of types without an engine, written once (callers read them without the lock).
  static Engine none[INFINI_DEVICE_TYPE_COUNT];
  static bool none_filled[INFINI_DEVICE_TYPE_COUNT] = {};
  const char* name = EngineName(type);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (name == nullptr) {
    Engine& absent = none[index];
    if (!none_filled[index]) {
      absent.listing.status = infinirtBackendNotFound;
      std::snprintf(absent.listing.reason, sizeof absent.listing.reason,
                    "no collective engine for this device type");
      none_filled[index] = true;
    }
    return &absent;
  }
  auto found = Engines().find(name);
  if (found == Engines().end()) {
    found = Engines().emplace(name, Open(name)).first;
    std::snprintf(found->second.listing.name, sizeof found->second.listing.name, "%s", name);
  }
  return &found->second;
}

const Engine* EngineFor(infiniDevice_t type, std::string* why) {
  const Engine* engine = LoadedEngine(type);
  if (engine == nullptr) {
    *why = "device type " + std::to_string(static_cast<int>(type)) + " is no device type";
    return nullptr;
  }
  if (engine->table == nullptr) {
    *why = engine->listing.reason;
    return nullptr;
  }
  if ((engine->table->device_types & (1u << static_cast<unsigned>(type))) == 0) {
    *why = std::string("engine ") + engine->table->name + " does not serve device type " +
           std::to_string(static_cast<int>(type));
    return nullptr;
  }
  return engine;
}

}  // namespace infiniccl

extern "C" infiniStatus_t infinicclGetEngineInfo(infiniDevice_t device_type,
                                                 infinirtBackendProp* info) {
  if (info == nullptr)
    return infiniccl::Fail(INFINI_STATUS_NULL_POINTER, "GetEngineInfo: info is NULL");
  const infiniccl::Engine* engine = infiniccl::LoadedEngine(device_type);
  if (engine == nullptr) {
    return infiniccl::Fail(
        INFINI_STATUS_BAD_PARAM,
        "GetEngineInfo: " + std::to_string(static_cast<int>(device_type)) + " is no device type");
  }
  *info = engine->listing;
  info->deviceType = device_type;
  return INFINI_STATUS_SUCCESS;
}
