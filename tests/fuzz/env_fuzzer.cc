// Fuzzes the variables that choose what InfiniRT loads and shows: INFINIRT_PLUGIN_PATH,
// INFINIRT_BACKENDS and INFINIRT_VISIBLE_DEVICES, each input running one whole
// initialisation (discovery, loading, the device list) and a few calls, then infinirtFinalize.
//
// The input is three strings separated by NUL bytes. The plugin path's entries (split at ':')
// are mapped onto a fixed set, so that no input makes the process load a file outside the build
// tree: an entry starting with '/' becomes one of the real plugin locations, or a path that does
// not exist; any other entry is kept as it is (the loader ignores relative entries).
#include <dirent.h>
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "infinirt.h"

namespace {

std::vector<std::string> Fields(const uint8_t* data, size_t size) {
  std::vector<std::string> fields(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      if (fields.size() == 3) break;
      fields.emplace_back();
    } else {
      fields.back().push_back(static_cast<char>(data[i]));
    }
  }
  fields.resize(3);
  return fields;
}

std::string ConfinedPluginPath(const std::string& raw) {
  static const char* const kPlaces[] = {FUZZ_PLUGIN_DIR,
                                        FUZZ_CPU_PLUGIN,
                                        FUZZ_PLUGIN_DIR "/libinfinirt_nvidia.so",
                                        FUZZ_PLUGIN_DIR "/libinfinirt_ascend.so",
                                        "/nonexistent/infinirt",
                                        "/nonexistent/libinfinirt_x.so"};
  std::string path, entry;
  auto flush = [&] {
    if (!entry.empty() && entry[0] == '/') {
      entry = kPlaces[static_cast<unsigned char>(entry.size() > 1 ? entry[1] : 0) %
                      (sizeof kPlaces / sizeof kPlaces[0])];
    }
    path += entry;
    entry.clear();
  };
  for (char c : raw) {
    if (c == ':') {
      flush();
      path += ':';
    } else {
      entry += c;
    }
  }
  flush();
  return path;
}

void Exercise() {
  int count = 0;
  infinirtGetDeviceCount(&count);
  int counts[INFINI_DEVICE_TYPE_COUNT];
  infinirtGetAllDeviceCount(counts);
  for (int device = 0; device < count; ++device) {
    infiniDevice_t type;
    infinirtDeviceGetType(&type, device);
    infinirtDeviceProp prop;
    infinirtGetDeviceProperties(&prop, device);
  }
  int backends = 0;
  infinirtGetBackendCount(&backends);
  for (int i = 0; i < backends; ++i) {
    infinirtBackendProp prop;
    infinirtGetBackendProperties(&prop, i);
  }
  if (count > 0 && infinirtSetDevice(count - 1) == infinirtSuccess) {
    void* memory = nullptr;
    if (infinirtMalloc(&memory, 64) == infinirtSuccess) infinirtFree(memory);
  }
}

// libFuzzer cannot follow a module that is unloaded (its coverage counters go with it), and
// infinirtFinalize unloads the plugins: every plugin is held loaded for the whole run.
void HoldPluginsLoaded() {
  DIR* dir = opendir(FUZZ_PLUGIN_DIR);
  if (dir == nullptr) return;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind("libinfinirt_", 0) == 0) {
      dlopen((std::string(FUZZ_PLUGIN_DIR) + "/" + name).c_str(), RTLD_NOW | RTLD_NODELETE);
    }
  }
  closedir(dir);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  HoldPluginsLoaded();
  setenv("INFINIRT_LOG_LEVEL", "off", 1);
  setenv("INFINIRT_CONFIG", "/nonexistent/infinirt.json", 1);
  // No vendor runtime: the vendor plugins look for theirs where none is.
  for (const char* vendor : {"NVIDIA", "ASCEND"}) {
    setenv((std::string("INFINIRT_") + vendor + "_RUNTIME").c_str(), "/nonexistent/lib.so", 1);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> fields = Fields(data, size);
  setenv("INFINIRT_PLUGIN_PATH", ConfinedPluginPath(fields[0]).c_str(), 1);
  setenv("INFINIRT_BACKENDS", fields[1].c_str(), 1);
  setenv("INFINIRT_VISIBLE_DEVICES", fields[2].c_str(), 1);
  infinirtInit();
  Exercise();
  infinirtGetLastError();
  infinirtFinalize();
  return 0;
}
