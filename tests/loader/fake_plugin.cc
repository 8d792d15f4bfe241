// A fake InfiniRT plugin for the loader tests: host memory pretending to be device memory.
//
// It starts from the core's all-NotSupported table (generated from INFINIRT_PLUGIN_ENTRIES) and
// overrides what a test needs. Compile-time switches make the variants:
//   FAKE_NAME           backend name reported in the table (an identifier, e.g. fake_nvidia)
//   FAKE_DEVICE_TYPE    an infiniDevice_t value, e.g. INFINI_DEVICE_NVIDIA
//   FAKE_DEVICE_COUNT   devices contributed; 0 reports a reason in GetInfo
//   FAKE_ABI_MAJOR      the ABI major version written into the table
//   FAKE_TABLE_END      an entry name: struct_size stops just before it, as if the plugin had
//                       been built against an older minor version that lacked it
//   FAKE_INIT_FAILS     Initialize returns infinirtErrorInitializationError
//   FAKE_RUNTIME_MISSING GetInfo says the vendor runtime could not be loaded; no devices
//   FAKE_NO_ENTRY_POINT the library does not export infinirtPluginGetTable at all
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "infinirt_plugin.h"
#include "plugin_table.h"

#define FAKE_STRINGIFY_(x) #x
#define FAKE_STRINGIFY(x) FAKE_STRINGIFY_(x)

#ifndef FAKE_NAME
#define FAKE_NAME fake
#endif
#ifndef FAKE_DEVICE_TYPE
#define FAKE_DEVICE_TYPE INFINI_DEVICE_NVIDIA
#endif
#ifndef FAKE_DEVICE_COUNT
#define FAKE_DEVICE_COUNT 1
#endif
#ifndef FAKE_ABI_MAJOR
#define FAKE_ABI_MAJOR INFINIRT_PLUGIN_ABI_MAJOR
#endif

namespace {

constexpr char kName[] = FAKE_STRINGIFY(FAKE_NAME);
constexpr size_t kBytesPerDevice = size_t{1} << 30;
// Every stream the fake creates is this one object: its streams complete each call before
// returning, so they need no state of their own.
int g_stream_token = 0;
const infinirtPluginHost* g_host = nullptr;

bool RuntimeMissing() {
#ifdef FAKE_RUNTIME_MISSING
  return true;
#else
  return false;
#endif
}

int DeviceCount() { return RuntimeMissing() ? 0 : FAKE_DEVICE_COUNT; }

bool ValidDevice(int device) { return device >= 0 && device < DeviceCount(); }

infinirtError_t Initialize(const infinirtPluginHost* host) {
#ifdef FAKE_INIT_FAILS
  (void)host;
  return infinirtErrorInitializationError;
#else
  g_host = host;
  if (g_host != nullptr && g_host->log != nullptr) {
    g_host->log(INFINIRT_LOG_DEBUG, kName, "fake plugin initialised");
  }
  return infinirtSuccess;
#endif
}

infinirtError_t Finalize() {
  g_host = nullptr;
  return infinirtSuccess;
}

infinirtError_t GetInfo(infinirtPluginInfo* info) {
  info->runtime_version = RuntimeMissing() ? -1 : 4242;
  if (RuntimeMissing()) {
    info->runtime_missing = 1;
    std::snprintf(info->runtime_library, sizeof(info->runtime_library), "libfakert.so.1");
    std::snprintf(info->reason, sizeof(info->reason),
                  "libfakert.so.1: cannot open shared object file (fake runtime absent)");
  } else {
    std::snprintf(info->runtime_library, sizeof(info->runtime_library), "/fake/libfakert.so.1");
    if (DeviceCount() == 0) {
      std::snprintf(info->reason, sizeof(info->reason), "fake runtime reports no devices");
    }
  }
  return infinirtSuccess;
}

infinirtError_t GetDeviceCount(int* count) {
  *count = DeviceCount();
  return *count > 0 ? infinirtSuccess : infinirtErrorNoDevice;
}

infinirtError_t GetDeviceProperties(int device, struct infinirtDeviceProp* prop) {
  if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
  std::snprintf(prop->name, sizeof(prop->name), "Fake %s device %d", kName, device);
  prop->totalGlobalMem = kBytesPerDevice * static_cast<size_t>(device + 1);
  prop->multiProcessorCount = 1;
  prop->unifiedAddressing = 1;
  return infinirtSuccess;
}

infinirtError_t DeviceSynchronize(int device) {
  return ValidDevice(device) ? infinirtSuccess : infinirtErrorInvalidDevice;
}

infinirtError_t MemGetInfo(int device, size_t* free_bytes, size_t* total_bytes) {
  if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
  *total_bytes = kBytesPerDevice * static_cast<size_t>(device + 1);
  *free_bytes = *total_bytes / 2;
  return infinirtSuccess;
}

infinirtError_t Malloc(int device, void** ptr, size_t size) {
  if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
  *ptr = std::malloc(size);
  return *ptr ? infinirtSuccess : infinirtErrorMemoryAllocation;
}

infinirtError_t Free(int device, void* ptr) {
  if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
  std::free(ptr);
  return infinirtSuccess;
}

infinirtError_t Memcpy(int device, void* dst, const void* src, size_t count,
                       enum infinirtMemcpyKind) {
  if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
  std::memmove(dst, src, count);
  return infinirtSuccess;
}

infinirtError_t Memset(int device, void* ptr, int value, size_t count) {
  if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
  std::memset(ptr, value, count);
  return infinirtSuccess;
}

// Streams are synchronous here: every entry completes before it returns.
infinirtError_t StreamCreate(int device, infinirtPluginStream_t* stream, unsigned int) {
  if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
  *stream = &g_stream_token;
  return infinirtSuccess;
}

infinirtError_t StreamDestroy(int device, infinirtPluginStream_t) {
  return ValidDevice(device) ? infinirtSuccess : infinirtErrorInvalidDevice;
}

infinirtError_t StreamSynchronize(int device, infinirtPluginStream_t) {
  return ValidDevice(device) ? infinirtSuccess : infinirtErrorInvalidDevice;
}

infinirtPluginTable MakeTable() {
  infinirtPluginTable table = infinirt::core::UnsupportedTable();
  table.abi_major = FAKE_ABI_MAJOR;
  table.name = kName;
  table.device_type = FAKE_DEVICE_TYPE;
  table.Initialize = &Initialize;
  table.Finalize = &Finalize;
  table.GetInfo = &GetInfo;
  table.GetDeviceCount = &GetDeviceCount;
  table.GetDeviceProperties = &GetDeviceProperties;
  table.DeviceSynchronize = &DeviceSynchronize;
  table.MemGetInfo = &MemGetInfo;
  table.Malloc = &Malloc;
  table.Free = &Free;
  table.Memcpy = &Memcpy;
  table.Memset = &Memset;
  // Set even in the short variant: if the core read past struct_size it would find working
  // entries here, and the short-table test would see success instead of NotSupported.
  table.StreamCreate = &StreamCreate;
  table.StreamDestroy = &StreamDestroy;
  table.StreamSynchronize = &StreamSynchronize;
#ifdef FAKE_TABLE_END
  table.struct_size = offsetof(infinirtPluginTable, FAKE_TABLE_END);
#endif
  return table;
}

}  // namespace

#ifndef FAKE_NO_ENTRY_POINT
extern "C" const infinirtPluginTable* infinirtPluginGetTable(void) {
  static const infinirtPluginTable table = MakeTable();
  return &table;
}
#else
// A library that looks like a plugin by name but exports something else.
extern "C" INFINIRT_PLUGIN_EXPORT int infinirtFakeNotTheEntryPoint(void) {
  return static_cast<int>(MakeTable().abi_major);
}
#endif
