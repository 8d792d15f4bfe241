#include "emu_core.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "emu_inspect.h"

extern "C" const infinirtPluginTable* infinirtPluginGetTable(void);  // the CPU backend's

namespace infinirt::emu {
namespace {

struct Settings {
  std::string vendor = "EMU";
  int device_count = 1;
  int init_error = 0;  // 0: initialisation works; 1: the vendor's generic failure; else the code
};

struct Failure {
  int after_calls = 0;
  int status = 0;
  int seen = 0;
};

struct Allocation {
  size_t size;
  MemoryKind kind;
  int device;
};

struct State {
  std::mutex mutex;
  std::vector<std::string> calls;
  std::unordered_map<std::string, int> counts;
  std::unordered_map<std::string, Failure> failures;
  std::map<uintptr_t, Allocation> memory;
  std::unordered_set<const void*> handles;
};

Settings& TheSettings() {
  static Settings settings;
  return settings;
}

State& TheState() {
  static State* state = new State;  // never destroyed: used until the process ends
  return *state;
}

thread_local int t_current_device = -1;

}  // namespace

// Never finalised: the core's exit teardown may still call through the plugin after this
// library's static destructors ran, and vendor runtimes are never unloaded (vendor_library.h).
// The backend's threads end with the process.
// Its device memory is shareable with other processes (interprocess handles) when
// INFINIRT_CPU_SHAREABLE_MEMORY=1 says so, as the CPU backend of InfiniRT's own is.
const infinirtPluginTable& Cpu() {
  static const infinirtPluginTable* const table = [] {
    const infinirtPluginTable* cpu = infinirtPluginGetTable();
    const char* shareable = std::getenv("INFINIRT_CPU_SHAREABLE_MEMORY");
    static infinirtPluginHost host{};
    host.struct_size = sizeof host;
    host.abi_major = INFINIRT_PLUGIN_ABI_MAJOR;
    host.abi_minor = INFINIRT_PLUGIN_ABI_MINOR;
    host.config_json = shareable != nullptr && std::strcmp(shareable, "1") == 0
                           ? "{\"shareable_memory\": true}"
                           : "{}";
    cpu->Initialize(&host);
    return cpu;
  }();
  return *table;
}

void Configure(const char* vendor) {
  Settings& settings = TheSettings();
  settings.vendor = vendor;
  const std::string prefix = std::string("EMU_") + vendor + "_";
  if (const char* devices = std::getenv((prefix + "DEVICES").c_str())) {
    settings.device_count = std::atoi(devices);
  }
  if (const char* fail = std::getenv((prefix + "FAIL_INIT").c_str())) {
    settings.init_error = std::atoi(fail);
  }
}

int CpuPriority(int priority, int least) {
  int cpu_least = 0, cpu_greatest = 0;
  Cpu().DeviceGetStreamPriorityRange(0, &cpu_least, &cpu_greatest);
  if (least <= 0) return cpu_least;
  return cpu_least + (cpu_greatest - cpu_least) * (least - priority) / least;
}

int DeviceCount() { return TheSettings().device_count; }
bool InitFails() { return TheSettings().init_error != 0; }
int InitError() { return TheSettings().init_error; }

int CurrentDevice() { return t_current_device; }
void SetCurrentDevice(int device) { t_current_device = device; }

std::string Pointer(const void* p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  return text;
}

void Record(const char* function, const std::string& arguments) {
  State& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.calls.push_back(std::string(function) + " dev=" + std::to_string(t_current_device) + " " +
                        arguments);
  ++state.counts[function];
}

int InjectedFailure(const char* function) {
  State& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  const auto found = state.failures.find(function);
  if (found == state.failures.end()) return 0;
  Failure& failure = found->second;
  return failure.seen++ >= failure.after_calls ? failure.status : 0;
}

void TrackMemory(void* base, size_t size, MemoryKind kind, int device) {
  State& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.memory[reinterpret_cast<uintptr_t>(base)] = Allocation{size, kind, device};
}

bool UntrackMemory(void* base, MemoryKind kind) {
  State& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  const auto found = state.memory.find(reinterpret_cast<uintptr_t>(base));
  if (found == state.memory.end() || found->second.kind != kind) return false;
  state.memory.erase(found);
  return true;
}

MemoryKind KindOf(const void* p, size_t count) {
  State& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  auto after = state.memory.upper_bound(address);
  if (after == state.memory.begin()) return MemoryKind::kUnknown;
  const auto& [base, allocation] = *std::prev(after);
  const uintptr_t offset = address - base;
  if (offset >= allocation.size && offset != 0) return MemoryKind::kUnknown;
  if (count > allocation.size - offset) return MemoryKind::kUnknown;
  return allocation.kind;
}

bool AllocationOf(const void* p, uintptr_t* base, size_t* size) {
  State& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  auto after = state.memory.upper_bound(address);
  if (after == state.memory.begin()) return false;
  const auto& [start, allocation] = *std::prev(after);
  if (address - start >= allocation.size) return false;
  *base = start;
  *size = allocation.size;
  return true;
}

void Register(const void* handle) {
  State& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.handles.insert(handle);
}

bool Unregister(const void* handle) {
  State& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.handles.erase(handle) == 1;
}

bool IsLive(const void* handle) {
  State& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.handles.count(handle) == 1;
}

bool CpuStream(void* handle, void* legacy_value, void* per_thread_value,
               infinirtPluginStream_t* cpu, Stream** stream) {
  *stream = nullptr;
  if (handle == nullptr || handle == legacy_value) {
    *cpu = INFINIRT_PLUGIN_STREAM_LEGACY;
    return true;
  }
  if (per_thread_value != nullptr && handle == per_thread_value) {
    *cpu = INFINIRT_PLUGIN_STREAM_PER_THREAD;
    return true;
  }
  if (!IsLive(handle)) return false;
  *stream = static_cast<Stream*>(handle);
  *cpu = (*stream)->cpu;
  return true;
}

void Capture(Stream& stream, const infinirtPluginGraphNode& node) {
  Node entry{node, 0};
  entry.dependency = static_cast<uint32_t>(stream.captured.size()) - 1;
  stream.captured.push_back(entry);
}

infinirtError_t Instantiate(const Graph& graph, Exec** exec) {
  std::vector<infinirtPluginGraphNode> nodes;
  nodes.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    infinirtPluginGraphNode node = graph.nodes[i].node;
    node.dependencies = i == 0 ? nullptr : &graph.nodes[i].dependency;
    node.dependency_count = i == 0 ? 0 : 1;
    nodes.push_back(node);
  }
  auto made = std::make_unique<Exec>();
  const infinirtError_t error =
      Cpu().GraphInstantiate(0, &made->cpu, nodes.data(), nodes.size(), 0);
  if (error != infinirtSuccess) return error;
  *exec = made.release();
  Register(*exec);
  return infinirtSuccess;
}

}  // namespace infinirt::emu

// -----------------------------------------------------------------------------------------------
// Inspection (emu_inspect.h)

using infinirt::emu::TheState;

extern "C" {

// The marker of an emulated runtime: infinirt-selftest looks for it in the runtime library a
// backend loaded (dlopen with RTLD_NOLOAD + dlsym) and marks that backend "emulated" rather than
// presenting its results as the hardware's.
__attribute__((visibility("default"))) extern const char infinirt_emulated_runtime[] =
    "a host-emulated vendor runtime of InfiniRT's tests";

__attribute__((visibility("default"))) int emuCallCount(const char* function) {
  auto& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  const auto found = state.counts.find(function);
  return found == state.counts.end() ? 0 : found->second;
}

__attribute__((visibility("default"))) size_t emuCallLog(char* buffer, size_t size) {
  auto& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  std::string text;
  for (const std::string& call : state.calls) text += call + "\n";
  if (buffer != nullptr && size > 0) {
    const size_t length = std::min(size - 1, text.size());
    std::memcpy(buffer, text.data(), length);
    buffer[length] = '\0';
  }
  return text.size() + 1;
}

__attribute__((visibility("default"))) void emuResetCalls(void) {
  auto& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.calls.clear();
  state.counts.clear();
}

__attribute__((visibility("default"))) void emuFail(const char* function, int after_calls,
                                                    int status) {
  auto& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (status == 0) {
    state.failures.erase(function);
  } else {
    state.failures[function] = infinirt::emu::Failure{after_calls, status, 0};
  }
}

__attribute__((visibility("default"))) void emuClearFailures(void) {
  auto& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.failures.clear();
}

__attribute__((visibility("default"))) int emuLiveAllocations(void) {
  auto& state = TheState();
  std::lock_guard<std::mutex> lock(state.mutex);
  return static_cast<int>(state.memory.size());
}

}  // extern "C"
