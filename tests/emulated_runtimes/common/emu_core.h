// The host emulation behind every emulated vendor runtime (tests only).
//
// An emulated runtime is a shared library with a vendor's real library name, exported function
// names, prototypes and enum values (docs/vendor-runtimes.md). It is NOT the vendor's runtime: it
// executes on InfiniRT's own CPU backend (linked in privately), so it proves that a plugin
// translates correctly, never that a device works. On top of executing, it
//   - keeps a current device per host thread, as the vendor runtimes do;
//   - checks the arguments a real runtime checks (device pointers on the device side of a copy
//     of the stated direction, known flags, live handles) and answers with the vendor's code;
//   - records every call (function, calling thread's device, arguments) for tests to inspect;
//   - fails chosen functions on request (emuFail) or at load (EMU_<VENDOR>_FAIL_INIT).
// Tests reach the record through the C functions declared in emu_inspect.h.
#ifndef INFINIRT_TESTS_EMULATED_RUNTIMES_COMMON_EMU_CORE_H_
#define INFINIRT_TESTS_EMULATED_RUNTIMES_COMMON_EMU_CORE_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "infinirt_plugin.h"

namespace infinirt::emu {

// The CPU backend every emulated runtime executes on, initialised on first use.
const infinirtPluginTable& Cpu();

// Settings read from the environment once, with `vendor` ("NVIDIA") naming the variables:
//   EMU_<VENDOR>_DEVICES    device count (default 1)
//   EMU_<VENDOR>_FAIL_INIT  nonzero: initialisation / device count fails; 1 with the vendor's
//                           initialisation error, another number with that number
//   EMU_<VENDOR>_DRIVER_VERSION  what the driver version query answers (default 12080)
void Configure(const char* vendor);
int DeviceCount();
bool InitFails();
// The error code EMU_<VENDOR>_FAIL_INIT asks for (1 = the vendor's initialisation error).
int InitError();

// A vendor's stream priority, from `least` down to 0 (the greatest; CNRT and ACL number them so),
// as the CPU backend's: the same order over the CPU's range, so that a greater priority is
// picked first there too.
int CpuPriority(int priority, int least);

// The calling thread's current device; -1 when it never selected one.
int CurrentDevice();
void SetCurrentDevice(int device);

// Call record.
void Record(const char* function, const std::string& arguments);
std::string Pointer(const void* p);

// Fault injection: nonzero (the status to return) when this call of function must fail.
int InjectedFailure(const char* function);

// Memory the runtime handed out, so that copies can be checked against their direction.
enum class MemoryKind { kUnknown, kDevice, kPinnedHost };
void TrackMemory(void* base, size_t size, MemoryKind kind, int device);
// Removes the allocation that starts at base; false when there is none of that kind.
bool UntrackMemory(void* base, MemoryKind kind);
// The kind of the allocation containing [p, p + count), kUnknown for other (pageable) memory.
MemoryKind KindOf(const void* p, size_t count);
// The allocation containing p (its base and size); false when there is none.
bool AllocationOf(const void* p, uintptr_t* base, size_t* size);

// Streams and events: the handle a vendor function receives is a pointer to one of these
// (NULL and the special values name the default streams).
struct Node {
  infinirtPluginGraphNode node;
  uint32_t dependency;  // the previous node of the capture (a capture is a chain)
};
struct Stream {
  infinirtPluginStream_t cpu = nullptr;
  int device = 0;
  unsigned int flags = 0;  // as created (the vendor's non-blocking flag)
  bool capturing = false;
  std::vector<Node> captured;
};
struct Event {
  infinirtPluginEvent_t cpu = nullptr;
  int device = 0;
  unsigned int flags = 0;
};
struct Graph {
  std::vector<Node> nodes;
};
struct Exec {
  infinirtPluginGraphExec_t cpu = nullptr;
};

// Live-handle registry: a destroyed or foreign handle is rejected, never dereferenced.
void Register(const void* handle);
bool Unregister(const void* handle);
bool IsLive(const void* handle);

// The CPU stream for a vendor stream handle: NULL and legacy_value are the legacy default
// stream, per_thread_value (when non-null) the per-thread one, anything else a live Stream.
// Returns false for a dead handle.
bool CpuStream(void* handle, void* legacy_value, void* per_thread_value,
               infinirtPluginStream_t* cpu, Stream** stream);

// Appends a node to a capturing stream's chain.
void Capture(Stream& stream, const infinirtPluginGraphNode& node);
// Instantiates a captured chain on the CPU backend.
infinirtError_t Instantiate(const Graph& graph, Exec** exec);

}  // namespace infinirt::emu

#endif  // INFINIRT_TESTS_EMULATED_RUNTIMES_COMMON_EMU_CORE_H_
