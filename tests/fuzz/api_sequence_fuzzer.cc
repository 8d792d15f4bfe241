// Fuzzes the public API with random programs of calls against the CPU backend: streams, events,
// memory, copies, host functions, captures and graphs, with arguments drawn from valid,
// destroyed, foreign (another kind of handle, interior pointers) and garbage values, bad enum
// values and flags. Every call must return, with a code; nothing may crash, leak or hang.
//
// What the harness does not do is misuse memory the way no runtime can catch (CUDA's neither):
// it never passes an unregistered host pointer with a count larger than its buffer, never frees
// memory that queued or captured work still uses, never copies to memory a graph owns (it goes
// with the graph, and a pointer to it then dangles), and host functions never block. To that end
// asynchronous and captured copies and memsets use only the input's stable buffers (allocated at
// its start, freed at its end); the allocations the program makes and frees are used by the
// synchronous calls. At the end of each input everything still alive is released, so that leak
// detection is meaningful.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "infinirt.h"

namespace {

constexpr size_t kMaxSize = 1 << 14;
constexpr size_t kScratchSize = 2 * kMaxSize;  // unregistered host memory: counts stay within
alignas(256) unsigned char g_scratch[kScratchSize];

void NoOp(void*) {}

struct Allocation {
  void* base;
  size_t size;
  enum Kind { kDevice, kPinned, kAsync } kind;
};

class Program {
 public:
  explicit Program(FuzzedDataProvider& input) : in_(input) {}

  void Run() {
    Setup();
    while (in_.remaining_bytes() > 0) Step();
    TearDown();
  }

 private:
  // --- Arguments --------------------------------------------------------------------------

  template <class T>
  T Pick(const std::vector<T>& from, T otherwise) {
    if (from.empty()) return otherwise;
    return from[in_.ConsumeIntegralInRange<size_t>(0, from.size() - 1)];
  }

  void* Garbage() { return reinterpret_cast<void*>(in_.ConsumeIntegral<uintptr_t>()); }

  // A handle from the table of its kind, a destroyed one, one of another kind, a special
  // value, or garbage.
  template <class Handle>
  Handle AnyHandle(const std::vector<Handle>& live, const std::vector<Handle>& dead,
                   const std::vector<void*>& foreign) {
    switch (in_.ConsumeIntegralInRange(0, 9)) {
      case 0:
        return reinterpret_cast<Handle>(Pick<Handle>(dead, nullptr));
      case 1:
        return reinterpret_cast<Handle>(Pick<void*>(foreign, nullptr));
      case 2:
        return reinterpret_cast<Handle>(Garbage());
      case 3:
        return reinterpret_cast<Handle>(static_cast<uintptr_t>(in_.ConsumeIntegralInRange(0, 2)));
      default:
        return Pick<Handle>(live, nullptr);
    }
  }
  infinirtStream_t AnyStream() {
    return AnyHandle(streams_, dead_streams_, std::vector<void*>(events_.begin(), events_.end()));
  }
  infinirtEvent_t AnyEvent() {
    return AnyHandle(events_, dead_events_, std::vector<void*>(streams_.begin(), streams_.end()));
  }
  // Streams the harness may put asynchronous work on: live ones and the default streams (the
  // rest is refused by the runtime and covered by AnyStream).
  infinirtStream_t WorkStream() {
    if (!in_.ConsumeBool())
      return reinterpret_cast<infinirtStream_t>(
          static_cast<uintptr_t>(in_.ConsumeIntegralInRange(0, 2)));
    return Pick<infinirtStream_t>(streams_, nullptr);
  }

  unsigned int AnyFlags() {
    return in_.ConsumeBool() ? in_.ConsumeIntegralInRange(0u, 15u)
                             : in_.ConsumeIntegral<unsigned>();
  }
  size_t AnySize() { return in_.ConsumeIntegralInRange<size_t>(0, kMaxSize); }
  int AnyInt() {
    return in_.ConsumeBool() ? in_.ConsumeIntegralInRange(-2, 8) : in_.ConsumeIntegral<int>();
  }

  // A pointer for Free and PointerGetAttributes: anything at all.
  void* AnyPointer() {
    switch (in_.ConsumeIntegralInRange(0, 7)) {
      case 0:
        return Pick<void*>(dead_pointers_, nullptr);
      case 7:
        return Pick<void*>(graph_pointers_, nullptr);
      case 1:
        return Garbage();
      case 2:
        return nullptr;
      case 3:
        return g_scratch + in_.ConsumeIntegralInRange<size_t>(0, kScratchSize - 1);
      case 4:
        if (!allocations_.empty()) {  // interior
          const Allocation a = Pick<Allocation>(allocations_, {});
          return static_cast<char*>(a.base) + in_.ConsumeIntegralInRange<size_t>(0, a.size);
        }
        return nullptr;
      default:
        return Pick<Allocation>(allocations_, {nullptr, 0, Allocation::kDevice}).base;
    }
  }

  // A span for a copy or memset: a registered buffer at an offset inside it, with a count that
  // may run past its end (the runtime must refuse that), or the scratch buffer with a count that
  // stays within it. `stable` restricts the choice to the input's stable buffers.
  struct Span {
    void* pointer;
    size_t count;
  };
  Span AnySpan(bool stable, size_t count) {
    const std::vector<Allocation>& from = stable ? stable_ : allocations_;
    if (from.empty() || in_.ConsumeIntegralInRange(0, 3) == 0) {
      const size_t offset = in_.ConsumeIntegralInRange<size_t>(0, kScratchSize - count);
      return {g_scratch + offset, count};
    }
    const Allocation a = Pick<Allocation>(from, {});
    if (a.size == 0) return {g_scratch, count};
    // Inside the allocation: a pointer past its end is no longer in it, and the runtime takes
    // it for host memory of the program's, as any runtime must.
    const size_t offset = in_.ConsumeIntegralInRange<size_t>(0, a.size - 1);
    return {static_cast<char*>(a.base) + offset, count};
  }

  infinirtMemcpyKind AnyKind() {
    return static_cast<infinirtMemcpyKind>(in_.ConsumeBool() ? in_.ConsumeIntegralInRange(0, 4)
                                                             : in_.ConsumeIntegral<int>());
  }

  // --- Lifetime of what the program creates -------------------------------------------------

  void Setup() {
    // The stable buffers: device and pinned memory for asynchronous and captured work.
    for (Allocation::Kind kind : {Allocation::kDevice, Allocation::kPinned}) {
      void* p = nullptr;
      const infinirtError_t e = kind == Allocation::kDevice ? infinirtMalloc(&p, kMaxSize)
                                                            : infinirtMallocHost(&p, kMaxSize);
      if (e == infinirtSuccess) stable_.push_back({p, kMaxSize, kind});
    }
  }

  template <class T>
  bool Remove(std::vector<T>& from, T value) {
    for (size_t i = 0; i < from.size(); ++i) {
      if (from[i] == value) {
        from[i] = from.back();
        from.pop_back();
        return true;
      }
    }
    return false;
  }
  // After a destroy call: a handle it destroyed moves from the live list to the dead one.
  template <class T>
  void Destroyed(infinirtError_t result, T handle, std::vector<T>& live, std::vector<T>& dead) {
    if (result == infinirtSuccess && Remove(live, handle)) dead.push_back(handle);
  }
  bool RemoveAllocation(void* base) {
    for (size_t i = 0; i < allocations_.size(); ++i) {
      if (allocations_[i].base == base) {
        allocations_[i] = allocations_.back();
        allocations_.pop_back();
        dead_pointers_.push_back(base);
        return true;
      }
    }
    return false;
  }

  void TearDown() {
    infinirtStreamCaptureMode mode = infinirtStreamCaptureModeRelaxed;
    infinirtThreadExchangeStreamCaptureMode(&mode);
    for (infinirtStream_t stream : streams_) {
      infinirtGraph_t graph = nullptr;
      infinirtStreamCaptureStatus status;
      if (infinirtStreamIsCapturing(stream, &status) == infinirtSuccess &&
          status != infinirtStreamCaptureStatusNone &&
          infinirtStreamEndCapture(stream, &graph) == infinirtSuccess) {
        infinirtGraphDestroy(graph);
      }
    }
    for (infinirtGraphExec_t exec : execs_) infinirtGraphExecDestroy(exec);
    for (infinirtGraphExec_t exec : leftover_execs_) infinirtGraphExecDestroy(exec);
    for (infinirtGraph_t graph : graphs_) infinirtGraphDestroy(graph);
    for (infinirtGraph_t graph : leftover_graphs_) infinirtGraphDestroy(graph);
    infinirtDeviceSynchronize();
    for (infinirtEvent_t event : events_) infinirtEventDestroy(event);
    for (infinirtStream_t stream : streams_) infinirtStreamDestroy(stream);
    for (const Allocation& a : allocations_) {
      a.kind == Allocation::kPinned ? infinirtFreeHost(a.base) : infinirtFree(a.base);
    }
    for (void* p : graph_pointers_) infinirtFree(p);  // most are gone with their graphs
    for (const Allocation& a : stable_) {
      a.kind == Allocation::kPinned ? infinirtFreeHost(a.base) : infinirtFree(a.base);
    }
    infinirtDeviceSynchronize();
    infinirtSetDevice(0);
    mode = infinirtStreamCaptureModeGlobal;
    infinirtThreadExchangeStreamCaptureMode(&mode);
    infinirtGetLastError();
  }

  bool Capturing() {
    for (infinirtStream_t stream : streams_) {
      infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusNone;
      if (infinirtStreamIsCapturing(stream, &status) == infinirtSuccess &&
          status == infinirtStreamCaptureStatusActive) {
        return true;
      }
    }
    return false;
  }

  // --- One call -------------------------------------------------------------------------------

  void Step() {
    switch (in_.ConsumeIntegralInRange(0, 44)) {
      case 0: {
        infinirtStream_t s = nullptr;
        if (infinirtStreamCreateWithFlags(&s, AnyFlags()) == infinirtSuccess) streams_.push_back(s);
        break;
      }
      case 1: {
        infinirtStream_t s = AnyStream();
        Destroyed(infinirtStreamDestroy(s), s, streams_, dead_streams_);
        break;
      }
      case 2:
        infinirtStreamSynchronize(AnyStream());
        break;
      case 3:
        infinirtStreamQuery(AnyStream());
        break;
      case 4: {
        infinirtEvent_t e = nullptr;
        if (infinirtEventCreateWithFlags(&e, AnyFlags()) == infinirtSuccess) events_.push_back(e);
        break;
      }
      case 5: {
        infinirtEvent_t e = AnyEvent();
        Destroyed(infinirtEventDestroy(e), e, events_, dead_events_);
        break;
      }
      case 6:
        infinirtEventRecord(AnyEvent(), AnyStream());
        break;
      case 7:
        infinirtEventQuery(AnyEvent());
        break;
      case 8:
        infinirtEventSynchronize(AnyEvent());
        break;
      case 9: {
        float ms;
        infinirtEventElapsedTime(in_.ConsumeBool() ? &ms : nullptr, AnyEvent(), AnyEvent());
        break;
      }
      case 10:
        infinirtStreamWaitEvent(AnyStream(), AnyEvent(), AnyFlags());
        break;
      case 11: {
        void* p = nullptr;
        const size_t size = AnySize();
        if (infinirtMalloc(&p, size) == infinirtSuccess && p) {  // size 0 gives NULL
          allocations_.push_back({p, size, Allocation::kDevice});
        }
        break;
      }
      case 12: {
        void* p = nullptr;
        const size_t size = AnySize();
        if (infinirtHostAlloc(&p, size, AnyFlags()) == infinirtSuccess && p) {
          allocations_.push_back({p, size, Allocation::kPinned});
        }
        break;
      }
      case 13: {
        void* p = nullptr;
        const size_t size = AnySize();
        infinirtStream_t stream = WorkStream();
        if (infinirtMallocAsync(&p, size, stream) != infinirtSuccess || !p) break;
        infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusActive;
        if (infinirtStreamIsCapturing(stream, &status) == infinirtSuccess &&
            status == infinirtStreamCaptureStatusNone) {
          // Not used by asynchronous work (see the top), so freeing it anywhere is safe.
          allocations_.push_back({p, size, Allocation::kAsync});
        } else {
          // Memory of the graph being captured: it goes when the graph goes, so the program
          // only ever frees it or asks about it, never copies to it.
          graph_pointers_.push_back(p);
        }
        break;
      }
      case 14: {
        void* p = AnyPointer();
        if (infinirtFree(p) == infinirtSuccess) RemoveAllocation(p);
        break;
      }
      case 15: {
        void* p = AnyPointer();
        if (infinirtFreeHost(p) == infinirtSuccess) RemoveAllocation(p);
        break;
      }
      case 16: {
        void* p = AnyPointer();
        if (infinirtFreeAsync(p, WorkStream()) == infinirtSuccess) RemoveAllocation(p);
        break;
      }
      case 17: {
        const size_t count = AnySize();
        const Span dst = AnySpan(false, count), src = AnySpan(false, count);
        infinirtMemcpy(dst.pointer, src.pointer, count, AnyKind());
        break;
      }
      case 18: {
        const size_t count = AnySize();
        const Span dst = AnySpan(true, count), src = AnySpan(true, count);
        infinirtMemcpyAsync(dst.pointer, src.pointer, count, AnyKind(), WorkStream());
        break;
      }
      case 19: {
        const Span span = AnySpan(false, AnySize());
        infinirtMemset(span.pointer, AnyInt(), span.count);
        break;
      }
      case 20: {
        const Span span = AnySpan(true, AnySize());
        infinirtMemsetAsync(span.pointer, AnyInt(), span.count, WorkStream());
        break;
      }
      case 21:
        infinirtLaunchHostFunc(AnyStream(), in_.ConsumeBool() ? NoOp : nullptr, nullptr);
        break;
      case 22:
        infinirtStreamBeginCapture(AnyStream(), static_cast<infinirtStreamCaptureMode>(AnyInt()));
        break;
      case 23: {
        infinirtGraph_t graph = nullptr;
        if (infinirtStreamEndCapture(AnyStream(), &graph) == infinirtSuccess && graph) {
          graphs_.push_back(graph);
        }
        break;
      }
      case 24: {
        infinirtStreamCaptureStatus status;
        infinirtStreamIsCapturing(AnyStream(), in_.ConsumeBool() ? &status : nullptr);
        break;
      }
      case 25: {
        infinirtGraphExec_t exec = nullptr;
        infinirtGraph_t graph = AnyHandle(graphs_, dead_graphs_, {});
        if (infinirtGraphInstantiateWithFlags(&exec, graph, in_.ConsumeIntegral<uint8_t>()) ==
            infinirtSuccess) {
          execs_.push_back(exec);
        }
        break;
      }
      case 26:
        infinirtGraphLaunch(AnyHandle(execs_, dead_execs_, {}), WorkStream());
        break;
      case 27: {
        infinirtGraphExec_t exec = AnyHandle(execs_, dead_execs_, {});
        Destroyed(infinirtGraphExecDestroy(exec), exec, execs_, dead_execs_);
        break;
      }
      case 28: {
        infinirtGraph_t graph = AnyHandle(graphs_, dead_graphs_, {});
        Destroyed(infinirtGraphDestroy(graph), graph, graphs_, dead_graphs_);
        break;
      }
      case 29:
        infinirtSetDevice(AnyInt());
        break;
      case 30: {
        int device;
        infinirtGetDevice(&device);
        infinirtDeviceSynchronize();
        break;
      }
      case 31: {
        infinirtPointerAttributes attributes;
        infinirtPointerGetAttributes(in_.ConsumeBool() ? &attributes : nullptr, AnyPointer());
        break;
      }
      case 32: {
        infinirtStreamCaptureMode mode = static_cast<infinirtStreamCaptureMode>(AnyInt());
        infinirtThreadExchangeStreamCaptureMode(&mode);
        break;
      }
      case 33: {
        int value;
        infinirtDeviceGetAttribute(
            &value, static_cast<infinirtDeviceAttr>(in_.ConsumeIntegral<int>()), AnyInt());
        infinirtDeviceProp prop;
        infinirtGetDeviceProperties(&prop, AnyInt());
        break;
      }
      case 34: {
        size_t free_bytes, total_bytes;
        infinirtMemGetInfo(&free_bytes, &total_bytes);
        infinirtGetErrorName(static_cast<infinirtError_t>(AnyInt()));
        infinirtGetErrorString(static_cast<infinirtError_t>(in_.ConsumeIntegral<int>()));
        infinirtPeekAtLastError();
        infinirtGetLastError();
        break;
      }
      case 35:
        if (!Capturing()) infinirtDeviceReset();  // refused in capture; tested elsewhere
        ForgetEverythingAfterReset();
        break;
      case 37: {  // 2D copies and memsets, over spans that fit the buffers (or pitches too narrow)
        const size_t height = in_.ConsumeIntegralInRange<size_t>(0, 8);
        const size_t width = in_.ConsumeIntegralInRange<size_t>(0, kMaxSize / 8);
        const size_t pitch = in_.ConsumeIntegralInRange<size_t>(width / 2, width + kMaxSize / 16);
        const size_t span = height == 0 ? 0 : (height - 1) * pitch + width;
        if (span > kMaxSize) break;
        const Span dst = AnySpan(true, span), src = AnySpan(true, span);
        if (in_.ConsumeBool()) {
          infinirtMemcpy2DAsync(dst.pointer, pitch, src.pointer, pitch, width, height, AnyKind(),
                                WorkStream());
        } else {
          infinirtMemset2DAsync(dst.pointer, pitch, AnyInt(), width, height, WorkStream());
        }
        break;
      }
      case 38: {  // managed memory, and peers
        void* p = nullptr;
        infinirtMallocManaged(in_.ConsumeBool() ? &p : nullptr, AnySize(), AnyFlags());
        if (p) allocations_.push_back({p, 0, Allocation::kDevice});
        const infinirtMemLocation location{static_cast<infinirtMemLocationType>(AnyInt()),
                                           AnyInt()};
        const void* target = p != nullptr && in_.ConsumeBool() ? p : AnyPointer();
        infinirtMemPrefetchAsync(target, AnySize(), location, AnyFlags(), AnyStream());
        infinirtMemAdvise(target, AnySize(), static_cast<infinirtMemoryAdvise>(AnyInt()), location);
        int can = 0;
        infinirtDeviceCanAccessPeer(in_.ConsumeBool() ? &can : nullptr, AnyInt(), AnyInt());
        if (in_.ConsumeBool()) {
          infinirtDeviceEnablePeerAccess(AnyInt(), AnyFlags());
        } else {
          infinirtDeviceDisablePeerAccess(AnyInt());
        }
        infinirtDeviceGetP2PAttribute(&can, static_cast<infinirtDeviceP2PAttr>(AnyInt()), AnyInt(),
                                      AnyInt());
        break;
      }
      case 39:
        BuildGraphNode();
        break;
      case 40:
        EditOrListGraph();
        break;
      case 41: {  // stream attributes, with any bytes as the value
        infinirtStreamAttrValue value{};
        for (char& byte : value.pad) byte = static_cast<char>(in_.ConsumeIntegral<uint8_t>());
        const auto attr = static_cast<infinirtStreamAttrID>(in_.ConsumeIntegralInRange(-1, 17));
        if (in_.ConsumeBool()) {
          infinirtStreamSetAttribute(AnyStream(), attr, in_.ConsumeBool() ? &value : nullptr);
        } else {
          infinirtStreamGetAttribute(AnyStream(), attr, in_.ConsumeBool() ? &value : nullptr);
        }
        infinirtStreamCopyAttributes(AnyStream(), AnyStream());
        break;
      }
      case 42: {  // pools of the program's own, with any properties
        infinirtMemPoolProps props{};
        props.allocType = static_cast<infinirtMemAllocationType>(in_.ConsumeIntegralInRange(0, 3));
        props.location = {static_cast<infinirtMemLocationType>(in_.ConsumeIntegralInRange(0, 5)),
                          AnyInt()};
        props.handleTypes =
            static_cast<infinirtMemAllocationHandleType>(in_.ConsumeIntegralInRange(0, 9));
        props.maxSize = in_.ConsumeBool() ? 0 : AnySize();
        infinirtMemPool_t pool = nullptr;
        if (infinirtMemPoolCreate(&pool, in_.ConsumeBool() ? &props : nullptr) == infinirtSuccess) {
          pools_.push_back(pool);
        }
        if (!pools_.empty() && in_.ConsumeBool()) {
          pool = pools_[in_.ConsumeIntegralInRange<size_t>(0, pools_.size() - 1)];
        }
        void* p = nullptr;
        const size_t size = AnySize();
        infinirtStream_t stream = WorkStream();
        infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusActive;
        if (infinirtMallocFromPoolAsync(&p, size, pool, stream) == infinirtSuccess && p &&
            infinirtStreamIsCapturing(stream, &status) == infinirtSuccess) {
          // As MallocAsync's (case 13): memory of a capture goes with its graph.
          if (status == infinirtStreamCaptureStatusNone) {
            allocations_.push_back({p, size, Allocation::kAsync});
          } else {
            graph_pointers_.push_back(p);
          }
        }
        const infinirtMemAccessDesc desc{
            {static_cast<infinirtMemLocationType>(in_.ConsumeIntegralInRange(0, 5)), AnyInt()},
            static_cast<infinirtMemAccessFlags>(in_.ConsumeIntegralInRange(0, 4))};
        infinirtMemPoolSetAccess(pool, in_.ConsumeBool() ? &desc : nullptr, in_.ConsumeBool());
        infinirtMemAccessFlags flags;
        infinirtMemLocation where = desc.location;
        infinirtMemPoolGetAccess(in_.ConsumeBool() ? &flags : nullptr, pool, &where);
        infinirtDeviceSetMemPool(AnyInt(), pool);
        // Sharing it with other processes (this one imports what it exports).
        int shared_fd = -1;
        if (infinirtMemPoolExportToShareableHandle(
                in_.ConsumeBool() ? &shared_fd : nullptr, pool,
                static_cast<infinirtMemAllocationHandleType>(in_.ConsumeIntegralInRange(0, 9)),
                in_.ConsumeBool()) == infinirtSuccess) {
          infinirtMemPoolPtrExportData data{};
          infinirtMemPool_t imported = nullptr;
          if (infinirtMemPoolExportPointer(in_.ConsumeBool() ? &data : nullptr, p) !=
              infinirtSuccess) {
            data.reserved[0] = in_.ConsumeIntegral<unsigned char>();
          }
          if (infinirtMemPoolImportFromShareableHandle(
                  &imported, reinterpret_cast<void*>(static_cast<intptr_t>(shared_fd)),
                  infinirtMemHandleTypePosixFileDescriptor, 0) == infinirtSuccess) {
            void* opened = nullptr;
            if (infinirtMemPoolImportPointer(&opened, imported, &data) == infinirtSuccess) {
              infinirtFree(opened);
            }
            infinirtMemPoolDestroy(imported);
          }
          close(shared_fd);
        }
        if (pool != nullptr && in_.ConsumeBool()) {
          infinirtMemPoolDestroy(pool);
          pools_.erase(std::find(pools_.begin(), pools_.end(), pool));
        }
        break;
      }
      case 36: {  // the device's configuration
        size_t value = 0;
        const auto limit = static_cast<infinirtLimit>(AnyInt());
        infinirtDeviceSetLimit(limit, AnySize());
        infinirtDeviceGetLimit(in_.ConsumeBool() ? &value : nullptr, limit);
        enum infinirtFuncCache config;
        infinirtDeviceSetCacheConfig(static_cast<infinirtFuncCache>(AnyInt()));
        infinirtDeviceGetCacheConfig(in_.ConsumeBool() ? &config : nullptr);
        int devices[2] = {AnyInt(), AnyInt()};
        infinirtSetValidDevices(in_.ConsumeBool() ? devices : nullptr, AnyInt());
        infinirtInitDevice(AnyInt(), AnyFlags(), AnyFlags());
        infinirtDeviceProp wanted{};
        wanted.major = AnyInt();
        wanted.totalGlobalMem = AnySize();
        int chosen = 0;
        infinirtChooseDevice(in_.ConsumeBool() ? &chosen : nullptr, &wanted);
        infinirtMemPool_t pool = nullptr;
        infinirtDeviceGetMemPool(in_.ConsumeBool() ? &pool : nullptr, AnyInt());
        infinirtDeviceSetMemPool(AnyInt(), pool);
        break;
      }
      case 43: {  // interprocess handles: of any memory and event, and any bytes opened
        infinirtIpcMemHandle_t memory{};
        infinirtIpcEventHandle_t event{};
        infinirtIpcGetMemHandle(in_.ConsumeBool() ? &memory : nullptr, AnyPointer());
        infinirtIpcGetEventHandle(in_.ConsumeBool() ? &event : nullptr, AnyEvent());
        if (in_.ConsumeBool()) {
          for (char& byte : memory.reserved) byte = static_cast<char>(in_.ConsumeIntegral<char>());
          for (char& byte : event.reserved) byte = static_cast<char>(in_.ConsumeIntegral<char>());
        }
        void* opened = nullptr;
        // This process made any handle that is valid: opening it here is refused.
        infinirtIpcOpenMemHandle(in_.ConsumeBool() ? &opened : nullptr, memory, AnyFlags());
        infinirtEvent_t opened_event = nullptr;
        infinirtIpcOpenEventHandle(in_.ConsumeBool() ? &opened_event : nullptr, event);
        infinirtIpcCloseMemHandle(AnyPointer());
        break;
      }
      default: {
        void* p = nullptr;
        infinirtMallocHost(in_.ConsumeBool() ? &p : nullptr, AnySize());
        if (p) allocations_.push_back({p, 0, Allocation::kPinned});
        break;
      }
    }
  }

  // A graph built by hand: a node of any kind on a live, destroyed or garbage graph, depending
  // on nodes of this graph, of another, destroyed or garbage. Its copies and memsets use the
  // stable buffers; its host nodes do nothing.
  infinirtGraphNode_t AnyNode() {
    if (in_.ConsumeIntegralInRange(0, 7) == 0) return static_cast<infinirtGraphNode_t>(Garbage());
    return Pick<infinirtGraphNode_t>(nodes_, nullptr);
  }

  void BuildGraphNode() {
    if (graphs_.empty() || in_.ConsumeIntegralInRange(0, 5) == 0) {
      infinirtGraph_t graph = nullptr;
      infinirtGraphCreate(in_.ConsumeBool() ? &graph : nullptr, in_.ConsumeBool() ? 0 : AnyFlags());
      if (graph) graphs_.push_back(graph);
    }
    infinirtGraph_t graph = AnyHandle(graphs_, dead_graphs_, {});
    infinirtGraphNode_t dependencies[3] = {AnyNode(), AnyNode(), AnyNode()};
    const size_t count = in_.ConsumeIntegralInRange<size_t>(0, 3);
    infinirtGraphNode_t node = nullptr;
    infinirtGraphNode_t* out = in_.ConsumeBool() ? &node : nullptr;
    const Span span = AnySpan(true, in_.ConsumeIntegralInRange<size_t>(0, kMaxSize / 4));
    switch (in_.ConsumeIntegralInRange(0, 8)) {
      case 0:
        infinirtGraphAddEmptyNode(out, graph, dependencies, count);
        break;
      case 1: {
        const infinirtHostNodeParams params{in_.ConsumeBool() ? NoOp : nullptr, nullptr};
        infinirtGraphAddHostNode(out, graph, dependencies, count, &params);
        break;
      }
      case 2: {
        const Span src = AnySpan(true, span.count);
        infinirtGraphAddMemcpyNode1D(out, graph, dependencies, count, span.pointer, src.pointer,
                                     span.count, AnyKind());
        break;
      }
      case 3: {
        infinirtMemsetParams params{span.pointer,
                                    in_.ConsumeIntegralInRange<size_t>(0, 64),
                                    in_.ConsumeIntegral<unsigned>(),
                                    AnyFlags(),
                                    in_.ConsumeIntegralInRange<size_t>(0, 64),
                                    in_.ConsumeIntegralInRange<size_t>(0, 4)};
        infinirtGraphAddMemsetNode(out, graph, dependencies, count, &params);
        break;
      }
      case 4:
        infinirtGraphAddEventRecordNode(out, graph, dependencies, count, AnyEvent());
        break;
      case 5:
        infinirtGraphAddEventWaitNode(out, graph, dependencies, count, AnyEvent());
        break;
      case 6:
        infinirtGraphAddChildGraphNode(out, graph, dependencies, count,
                                       AnyHandle(graphs_, dead_graphs_, {}));
        break;
      case 7: {
        infinirtMemAllocNodeParams params{};
        params.poolProps.allocType =
            static_cast<infinirtMemAllocationType>(in_.ConsumeIntegralInRange(0, 2));
        params.poolProps.location = {infinirtMemLocationTypeDevice, AnyInt()};
        params.bytesize = AnySize();
        infinirtGraphAddMemAllocNode(out, graph, dependencies, count, &params);
        if (params.dptr) graph_pointers_.push_back(params.dptr);
        break;
      }
      default:
        infinirtGraphAddMemFreeNode(out, graph, dependencies, count, AnyPointer());
        break;
    }
    if (node) nodes_.push_back(node);
  }

  void EditOrListGraph() {
    infinirtGraph_t graph = AnyHandle(graphs_, dead_graphs_, {});
    infinirtGraphNode_t from[2] = {AnyNode(), AnyNode()};
    infinirtGraphNode_t to[2] = {AnyNode(), AnyNode()};
    infinirtGraphNode_t listed[4];
    infinirtGraphEdgeData edges[4];
    size_t count = in_.ConsumeIntegralInRange<size_t>(0, 4);
    switch (in_.ConsumeIntegralInRange(0, 8)) {
      case 0:
        infinirtGraphAddDependencies(graph, from, to, nullptr, in_.ConsumeIntegralInRange(0, 2));
        break;
      case 1:
        infinirtGraphRemoveDependencies(graph, from, to, nullptr, in_.ConsumeIntegralInRange(0, 2));
        break;
      case 2:
        infinirtGraphGetNodes(graph, in_.ConsumeBool() ? listed : nullptr, &count);
        infinirtGraphGetRootNodes(graph, in_.ConsumeBool() ? listed : nullptr, &count);
        break;
      case 3:
        infinirtGraphGetEdges(graph, in_.ConsumeBool() ? listed : nullptr, listed,
                              in_.ConsumeBool() ? edges : nullptr, &count);
        break;
      case 4: {
        infinirtGraphNodeType type;
        infinirtGraphNodeGetType(AnyNode(), &type);
        infinirtGraphNodeGetDependencies(AnyNode(), listed, edges, &count);
        infinirtGraphNodeGetDependentNodes(AnyNode(), nullptr, nullptr, &count);
        break;
      }
      case 5: {
        infinirtHostNodeParams host{};
        infinirtGraphHostNodeGetParams(AnyNode(), &host);
        infinirtMemsetParams set{};
        if (infinirtGraphMemsetNodeGetParams(AnyNode(), &set) == infinirtSuccess) {
          set.value = in_.ConsumeIntegral<unsigned>();
          infinirtGraphMemsetNodeSetParams(AnyNode(), &set);
        }
        infinirtMemcpy3DParms copy{};
        infinirtGraphMemcpyNodeGetParams(AnyNode(), &copy);
        infinirtEvent_t event;
        infinirtGraphEventRecordNodeGetEvent(AnyNode(), &event);
        break;
      }
      case 6: {
        infinirtGraph_t clone = nullptr;
        infinirtGraphClone(&clone, graph);
        if (clone) {
          graphs_.push_back(clone);
          infinirtGraphNode_t found = nullptr;
          if (infinirtGraphNodeFindInClone(&found, AnyNode(), clone) == infinirtSuccess) {
            nodes_.push_back(found);
          }
        }
        break;
      }
      case 7: {  // user objects, held by the program and by graphs
        infinirtUserObject_t object = nullptr;
        infinirtUserObjectCreate(&object, nullptr, in_.ConsumeBool() ? NoOp : nullptr,
                                 in_.ConsumeIntegralInRange(0u, 3u), AnyFlags() & 1);
        if (object) user_objects_.push_back(object);
        object =
            Pick<infinirtUserObject_t>(user_objects_, static_cast<infinirtUserObject_t>(Garbage()));
        const unsigned int count = in_.ConsumeIntegralInRange(0u, 3u);
        switch (in_.ConsumeIntegralInRange(0, 3)) {
          case 0:
            infinirtUserObjectRetain(object, count);
            break;
          case 1:
            infinirtUserObjectRelease(object, count);
            break;
          case 2:
            infinirtGraphRetainUserObject(graph, object, count, AnyFlags() & 3);
            break;
          default:
            infinirtGraphReleaseUserObject(graph, object, count);
            break;
        }
        break;
      }
      default:
        infinirtGraphDestroyNode(AnyNode());
        break;
    }
  }

  // DeviceReset releases the device's streams, events, graphs and (non-stream-ordered)
  // allocations, the stable buffers included: what the program held is dead; start again.
  void ForgetEverythingAfterReset() {
    // Only a successful reset destroys anything; probing each object tells which survived.
    auto prune = [](auto& live, auto& dead, auto alive) {
      for (size_t i = 0; i < live.size();) {
        if (alive(live[i])) {
          ++i;
        } else {
          dead.push_back(live[i]);
          live[i] = live.back();
          live.pop_back();
        }
      }
    };
    prune(streams_, dead_streams_, [](infinirtStream_t s) {
      const infinirtError_t answer = infinirtStreamQuery(s);  // a destroyed stream: 709
      return answer != infinirtErrorInvalidResourceHandle &&
             answer != infinirtErrorContextIsDestroyed;
    });
    prune(events_, dead_events_, [](infinirtEvent_t e) {
      return infinirtEventQuery(e) != infinirtErrorInvalidResourceHandle;
    });
    auto registered = [](const Allocation& a) {
      infinirtPointerAttributes attributes;
      return infinirtPointerGetAttributes(&attributes, a.base) == infinirtSuccess &&
             attributes.type != infinirtMemoryTypeUnregistered;
    };
    for (auto* list : {&allocations_, &stable_}) {
      for (size_t i = 0; i < list->size();) {
        if (registered((*list)[i])) {
          ++i;
        } else {
          dead_pointers_.push_back((*list)[i].base);
          (*list)[i] = list->back();
          list->pop_back();
        }
      }
    }
    // Graphs and execs cannot be probed without side effects: drop the handles (a reset frees
    // them; if it was refused they are released at the end through the dead lists).
    for (auto g : graphs_) leftover_graphs_.push_back(g);
    for (auto x : execs_) leftover_execs_.push_back(x);
    graphs_.clear();
    execs_.clear();
    infinirtGetLastError();
  }

  FuzzedDataProvider& in_;
  std::vector<infinirtStream_t> streams_, dead_streams_;
  std::vector<infinirtEvent_t> events_, dead_events_;
  std::vector<infinirtGraph_t> graphs_, dead_graphs_, leftover_graphs_;
  std::vector<infinirtGraphExec_t> execs_, dead_execs_, leftover_execs_;
  std::vector<Allocation> allocations_, stable_;
  std::vector<void*> dead_pointers_, graph_pointers_;
  std::vector<infinirtGraphNode_t> nodes_;          // live or not: node handles need no release
  std::vector<infinirtUserObject_t> user_objects_;  // live or released: they hold nothing
  std::vector<infinirtMemPool_t> pools_;            // the rest go at the runtime's exit
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("INFINIRT_BACKENDS", "cpu", 1);
  setenv("INFINIRT_LOG_LEVEL", "off", 1);
  infinirtInit();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  Program(input).Run();
  return 0;
}
