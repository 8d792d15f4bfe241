// A vendor plugin's support declarations (GetSupport, the source of docs/support-matrix.md)
// against what it does over its host-emulated runtime. Run once per emulated backend, with
// INFINIRT_BACKENDS naming the plugin and INFINIRT_<VENDOR>_RUNTIME the emulated library:
//   - every entry has a declaration;
//   - an entry declared NONE is NULL in the table or answers NotSupported (called directly, with
//     zero arguments, which it must not look at);
//   - an entry declared NATIVE or EMULATED works through the public API, and each vendor
//     function it names was called by the emulated runtime while it ran.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "emulated_runtime.h"
#include "infinirt.h"
#include "infinirt_plugin.h"
#include "ipc_peer.h"
#include "vendor_test_support.h"

namespace infinirt::vendor_test {
namespace {

using infinirt::testing::EmulatedRuntime;

// The public calls that reach one plugin entry; returns the status of the call that does.
using Exercise = std::function<infinirtError_t()>;

constexpr size_t kBytes = 256;

void NoOp(void*) {}

struct Fixture {
  infinirtStream_t stream = nullptr;
  void* device = nullptr;
  void* pinned = nullptr;
  std::vector<unsigned char> host = std::vector<unsigned char>(kBytes, 1);
  Fixture() {
    EXPECT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
    EXPECT_EQ(infinirtMalloc(&device, kBytes), infinirtSuccess);
    EXPECT_EQ(infinirtMallocHost(&pinned, kBytes), infinirtSuccess);
  }
  ~Fixture() {
    infinirtDeviceSynchronize();
    infinirtStreamDestroy(stream);
    infinirtFree(device);
    infinirtFreeHost(pinned);
    infinirtGetLastError();
  }
};

// An InfiniRT stream over the vendor stream behind the fixture's, on the current device.
infinirtError_t AdoptFixtureStream(Fixture& f, infinirtStream_t* adopted) {
  void* native = nullptr;
  EXPECT_EQ(infinirtStreamGetNativeHandle(&native, f.stream), infinirtSuccess);
  int device = -1;
  EXPECT_EQ(infinirtGetDevice(&device), infinirtSuccess);
  return infinirtStreamCreateFromNativeHandle(adopted, device, native);
}

// The captured graph of one MemsetAsync, instantiated.
infinirtError_t InstantiateOneMemset(Fixture& f, infinirtGraph_t* graph,
                                     infinirtGraphExec_t* exec) {
  if (auto e = infinirtStreamBeginCapture(f.stream, infinirtStreamCaptureModeGlobal)) return e;
  infinirtMemsetAsync(f.device, 7, kBytes, f.stream);
  if (auto e = infinirtStreamEndCapture(f.stream, graph)) return e;
  return infinirtGraphInstantiate(exec, *graph, 0);
}

std::map<std::string, Exercise> Exercises() {
  std::map<std::string, Exercise> x;
  x["GetDeviceCount"] = [] {
    int count = 0;
    infinirtFinalize();  // the plugin counts at initialisation
    return infinirtGetDeviceCount(&count);
  };
  x["GetDeviceProperties"] = [] {
    infinirtDeviceProp prop{};
    return infinirtGetDeviceProperties(&prop, 0);
  };
  x["DeviceGetAttribute"] = [] {
    int value = 0;
    return infinirtDeviceGetAttribute(&value, infinirtDevAttrMultiProcessorCount, 0);
  };
  x["DriverGetVersion"] = [] {
    int version = 0;
    return infinirtDriverGetVersion(&version);
  };
  x["DeviceSynchronize"] = [] { return infinirtDeviceSynchronize(); };
  x["DeviceReset"] = [] { return infinirtDeviceReset(); };
  x["MemGetInfo"] = [] {
    size_t free_bytes = 0, total_bytes = 0;
    return infinirtMemGetInfo(&free_bytes, &total_bytes);
  };
  x["Malloc"] = [] {
    void* p = nullptr;
    const infinirtError_t e = infinirtMalloc(&p, kBytes);
    infinirtFree(p);
    return e;
  };
  x["Free"] = [] {
    void* p = nullptr;
    EXPECT_EQ(infinirtMalloc(&p, kBytes), infinirtSuccess);
    return infinirtFree(p);
  };
  x["HostAlloc"] = [] {
    void* p = nullptr;
    const infinirtError_t e = infinirtHostAlloc(&p, kBytes, infinirtHostAllocDefault);
    infinirtFreeHost(p);
    return e;
  };
  x["FreeHost"] = [] {
    void* p = nullptr;
    EXPECT_EQ(infinirtMallocHost(&p, kBytes), infinirtSuccess);
    return infinirtFreeHost(p);
  };
  x["MallocAsync"] = [] {
    Fixture f;
    void* p = nullptr;
    const infinirtError_t e = infinirtMallocAsync(&p, kBytes, f.stream);
    if (e == infinirtSuccess) infinirtFreeAsync(p, f.stream);
    return e;
  };
  x["FreeAsync"] = [] {
    Fixture f;
    void* p = nullptr;
    EXPECT_EQ(infinirtMallocAsync(&p, kBytes, f.stream), infinirtSuccess);
    return infinirtFreeAsync(p, f.stream);
  };
  x["Memcpy"] = [] {
    Fixture f;
    return infinirtMemcpy(f.device, f.host.data(), kBytes, infinirtMemcpyHostToDevice);
  };
  x["MemcpyAsync"] = [] {
    Fixture f;
    const infinirtError_t e =
        infinirtMemcpyAsync(f.pinned, f.device, kBytes, infinirtMemcpyDeviceToHost, f.stream);
    infinirtStreamSynchronize(f.stream);
    return e;
  };
  x["Memset"] = [] {
    Fixture f;
    return infinirtMemset(f.device, 3, kBytes);
  };
  x["MemsetAsync"] = [] {
    Fixture f;
    return infinirtMemsetAsync(f.device, 3, kBytes, f.stream);
  };
  x["StreamCreate"] = [] {
    infinirtStream_t stream = nullptr;
    const infinirtError_t e = infinirtStreamCreateWithFlags(&stream, infinirtStreamDefault);
    infinirtStreamDestroy(stream);
    return e;
  };
  // The core answers the range [0, 0] for a backend without priorities, and creates ordinary
  // streams there: the backend's entries are reached only where the range is wider.
  x["DeviceGetStreamPriorityRange"] = [] {
    int least = 0, greatest = 0;
    const infinirtError_t e = infinirtDeviceGetStreamPriorityRange(&least, &greatest);
    if (e != infinirtSuccess) return e;
    return least == 0 && greatest == 0 ? infinirtErrorNotSupported : infinirtSuccess;
  };
  x["StreamCreateWithPriority"] = [] {
    int least = 0, greatest = 0;
    EXPECT_EQ(infinirtDeviceGetStreamPriorityRange(&least, &greatest), infinirtSuccess);
    if (least == greatest) return infinirtErrorNotSupported;
    infinirtStream_t stream = nullptr;
    const infinirtError_t e = infinirtStreamCreateWithPriority(&stream, 0, greatest);
    int priority = 0;
    EXPECT_EQ(infinirtStreamGetPriority(stream, &priority), e);
    EXPECT_TRUE(e != infinirtSuccess || priority == greatest);
    infinirtStreamDestroy(stream);
    infinirtGetLastError();
    return e;
  };
  // Planes of 4 rows of 16 bytes, 64 bytes apart, read back through the 1D copies.
  x["Memcpy2DAsync"] = [] {
    Fixture f;
    std::vector<unsigned char> in(kBytes, 9), out(kBytes, 0);
    const infinirtError_t e = infinirtMemcpy2DAsync(f.device, 64, in.data(), 64, 16, 4,
                                                    infinirtMemcpyHostToDevice, f.stream);
    EXPECT_EQ(
        infinirtMemcpyAsync(out.data(), f.device, kBytes, infinirtMemcpyDeviceToHost, f.stream),
        infinirtSuccess);
    EXPECT_EQ(infinirtStreamSynchronize(f.stream), infinirtSuccess);
    EXPECT_TRUE(e != infinirtSuccess || (out[0] == 9 && out[3 * 64 + 15] == 9));
    return e;
  };
  x["Memset2DAsync"] = [] {
    Fixture f;
    std::vector<unsigned char> out(kBytes, 0);
    const infinirtError_t e = infinirtMemset2DAsync(f.device, 64, 5, 16, 4, f.stream);
    EXPECT_EQ(
        infinirtMemcpyAsync(out.data(), f.device, kBytes, infinirtMemcpyDeviceToHost, f.stream),
        infinirtSuccess);
    EXPECT_EQ(infinirtStreamSynchronize(f.stream), infinirtSuccess);
    EXPECT_TRUE(e != infinirtSuccess || (out[0] == 5 && out[3 * 64 + 15] == 5));
    return e;
  };
  x["StreamGetAttribute"] = [] {
    Fixture f;
    infinirtStreamAttrValue value{};
    return infinirtStreamGetAttribute(f.stream, infinirtStreamAttributeSynchronizationPolicy,
                                      &value);
  };
  // Set, then read back through the vendor's Get (which the matrix lists as present too).
  x["StreamSetAttribute"] = [] {
    Fixture f;
    infinirtStreamAttrValue value{};
    value.syncPolicy = infinirtSyncPolicyYield;
    const infinirtError_t e =
        infinirtStreamSetAttribute(f.stream, infinirtStreamAttributeSynchronizationPolicy, &value);
    if (e != infinirtSuccess) return e;
    infinirtStreamAttrValue read{};
    EXPECT_EQ(
        infinirtStreamGetAttribute(f.stream, infinirtStreamAttributeSynchronizationPolicy, &read),
        infinirtSuccess);
    EXPECT_EQ(read.syncPolicy, infinirtSyncPolicyYield);
    return e;
  };
  x["HostRegister"] = [] {
    std::vector<unsigned char> host(kBytes);
    const infinirtError_t e = infinirtHostRegister(host.data(), kBytes, 0);
    if (e == infinirtSuccess) {
      EXPECT_EQ(infinirtHostUnregister(host.data()), infinirtSuccess);
    }
    return e;
  };
  x["HostUnregister"] = [] {
    std::vector<unsigned char> host(kBytes);
    const infinirtError_t e = infinirtHostRegister(host.data(), kBytes, 0);
    return e != infinirtSuccess ? e : infinirtHostUnregister(host.data());
  };
  x["HostGetDevicePointer"] = [] {
    void* pinned = nullptr;
    EXPECT_EQ(infinirtMallocHost(&pinned, kBytes), infinirtSuccess);
    void* device = nullptr;
    const infinirtError_t e = infinirtHostGetDevicePointer(&device, pinned, 0);
    EXPECT_TRUE(e != infinirtSuccess || device != nullptr);
    infinirtFreeHost(pinned);
    return e;
  };
  x["DeviceGetLimit"] = [] {
    size_t value = 0;
    return infinirtDeviceGetLimit(&value, infinirtLimitStackSize);
  };
  x["DeviceSetLimit"] = [] {
    size_t before = 0;
    if (auto e = infinirtDeviceGetLimit(&before, infinirtLimitMallocHeapSize)) return e;
    const infinirtError_t e = infinirtDeviceSetLimit(infinirtLimitMallocHeapSize, 16 << 20);
    size_t after = 0;
    if (e == infinirtSuccess) {
      EXPECT_EQ(infinirtDeviceGetLimit(&after, infinirtLimitMallocHeapSize), infinirtSuccess);
      EXPECT_EQ(after, size_t{16} << 20);
      EXPECT_EQ(infinirtDeviceSetLimit(infinirtLimitMallocHeapSize, before), infinirtSuccess);
    }
    return e;
  };
  x["DeviceGetCacheConfig"] = [] {
    enum infinirtFuncCache config = infinirtFuncCachePreferEqual;
    return infinirtDeviceGetCacheConfig(&config);
  };
  x["DeviceSetCacheConfig"] = [] {
    return infinirtDeviceSetCacheConfig(infinirtFuncCachePreferShared);
  };
  // The peer entries need two devices of the plugin: the emulated runtimes have two.
  x["DeviceCanAccessPeer"] = [] {
    int can = -1;
    const infinirtError_t e = infinirtDeviceCanAccessPeer(&can, 0, 1);
    EXPECT_TRUE(e != infinirtSuccess || can == 0 || can == 1);
    return e;
  };
  x["DeviceEnablePeerAccess"] = [] {
    const infinirtError_t e = infinirtDeviceEnablePeerAccess(1, 0);
    if (e == infinirtSuccess) {
      EXPECT_EQ(infinirtDeviceDisablePeerAccess(1), infinirtSuccess);
    }
    return e == infinirtErrorPeerAccessUnsupported ? infinirtErrorNotSupported : e;
  };
  x["DeviceDisablePeerAccess"] = [] {
    const infinirtError_t e = infinirtDeviceEnablePeerAccess(1, 0);
    if (e != infinirtSuccess)
      return e == infinirtErrorPeerAccessUnsupported ? infinirtErrorNotSupported : e;
    return infinirtDeviceDisablePeerAccess(1);
  };
  x["DeviceGetP2PAttribute"] = [] {
    int value = -1;
    return infinirtDeviceGetP2PAttribute(&value, infinirtDevP2PAttrAccessSupported, 0, 1);
  };
  x["MallocManaged"] = [] {
    void* p = nullptr;
    const infinirtError_t e = infinirtMallocManaged(&p, kBytes, infinirtMemAttachGlobal);
    if (e == infinirtSuccess) {
      EXPECT_EQ(infinirtFree(p), infinirtSuccess);
    }
    return e;
  };
  x["MemPrefetchAsync"] = [] {
    void* p = nullptr;
    if (auto e = infinirtMallocManaged(&p, kBytes, infinirtMemAttachGlobal)) return e;
    infinirtMemLocation device{infinirtMemLocationTypeDevice, 0};
    const infinirtError_t e = infinirtMemPrefetchAsync(p, kBytes, device, 0, nullptr);
    infinirtStreamSynchronize(nullptr);
    infinirtFree(p);
    return e;
  };
  x["MemAdvise"] = [] {
    void* p = nullptr;
    if (auto e = infinirtMallocManaged(&p, kBytes, infinirtMemAttachGlobal)) return e;
    infinirtMemLocation host{infinirtMemLocationTypeHost, 0};
    const infinirtError_t e =
        infinirtMemAdvise(p, kBytes, infinirtMemAdviseSetPreferredLocation, host);
    infinirtFree(p);
    return e;
  };
  x["StreamDestroy"] = [] {
    infinirtStream_t stream = nullptr;
    EXPECT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
    return infinirtStreamDestroy(stream);
  };
  x["StreamSynchronize"] = [] {
    Fixture f;
    return infinirtStreamSynchronize(f.stream);
  };
  x["StreamQuery"] = [] {
    Fixture f;
    const infinirtError_t e = infinirtStreamQuery(f.stream);
    return e == infinirtErrorNotReady ? infinirtSuccess : e;
  };
  x["StreamGetNativeHandle"] = [] {
    Fixture f;
    void* native = nullptr;
    const infinirtError_t e = infinirtStreamGetNativeHandle(&native, f.stream);
    EXPECT_TRUE(e != infinirtSuccess || native != nullptr);
    return e;
  };
  x["StreamWaitEvent"] = [] {
    Fixture f;
    infinirtEvent_t event = nullptr;
    EXPECT_EQ(infinirtEventCreate(&event), infinirtSuccess);
    EXPECT_EQ(infinirtEventRecord(event, f.stream), infinirtSuccess);
    const infinirtError_t e = infinirtStreamWaitEvent(infinirtStreamLegacy, event, 0);
    infinirtEventDestroy(event);
    return e;
  };
  x["EventGetNativeHandle"] = [] {
    infinirtEvent_t event = nullptr;
    EXPECT_EQ(infinirtEventCreate(&event), infinirtSuccess);
    void* native = nullptr;
    const infinirtError_t e = infinirtEventGetNativeHandle(&native, event);
    EXPECT_TRUE(e != infinirtSuccess || native != nullptr);
    infinirtEventDestroy(event);
    return e;
  };
  // A second InfiniRT stream over the vendor stream of the fixture's: work goes through it, and
  // ending it leaves the fixture's stream working.
  x["StreamAdopt"] = [] {
    Fixture f;
    infinirtStream_t adopted = nullptr;
    const infinirtError_t e = AdoptFixtureStream(f, &adopted);
    if (e != infinirtSuccess) return e;
    EXPECT_EQ(infinirtMemsetAsync(f.device, 3, kBytes, adopted), infinirtSuccess);
    EXPECT_EQ(infinirtStreamSynchronize(adopted), infinirtSuccess);
    EXPECT_EQ(infinirtStreamDestroy(adopted), infinirtSuccess);
    return e;
  };
  x["StreamRelease"] = [] {
    Fixture f;
    infinirtStream_t adopted = nullptr;
    EXPECT_EQ(AdoptFixtureStream(f, &adopted), infinirtSuccess);
    const infinirtError_t e = infinirtStreamDestroy(adopted);
    EXPECT_EQ(infinirtMemsetAsync(f.device, 4, kBytes, f.stream), infinirtSuccess);
    EXPECT_EQ(infinirtStreamSynchronize(f.stream), infinirtSuccess);
    return e;
  };
  x["LaunchHostFunc"] = [] {
    Fixture f;
    return infinirtLaunchHostFunc(f.stream, NoOp, nullptr);
  };
  x["EventCreate"] = [] {
    infinirtEvent_t event = nullptr;
    const infinirtError_t e = infinirtEventCreateWithFlags(&event, infinirtEventDisableTiming);
    infinirtEventDestroy(event);
    return e;
  };
  x["EventDestroy"] = [] {
    infinirtEvent_t event = nullptr;
    EXPECT_EQ(infinirtEventCreate(&event), infinirtSuccess);
    return infinirtEventDestroy(event);
  };
  auto with_event = [](std::function<infinirtError_t(Fixture&, infinirtEvent_t)> body) {
    return [body] {
      Fixture f;
      infinirtEvent_t event = nullptr;
      EXPECT_EQ(infinirtEventCreate(&event), infinirtSuccess);
      const infinirtError_t e = body(f, event);
      infinirtEventDestroy(event);
      return e;
    };
  };
  x["EventRecord"] = with_event(
      [](Fixture& f, infinirtEvent_t event) { return infinirtEventRecord(event, f.stream); });
  x["EventQuery"] = with_event([](Fixture& f, infinirtEvent_t event) {
    EXPECT_EQ(infinirtEventRecord(event, f.stream), infinirtSuccess);
    EXPECT_EQ(infinirtStreamSynchronize(f.stream), infinirtSuccess);
    return infinirtEventQuery(event);
  });
  x["EventSynchronize"] = with_event([](Fixture& f, infinirtEvent_t event) {
    EXPECT_EQ(infinirtEventRecord(event, f.stream), infinirtSuccess);
    return infinirtEventSynchronize(event);
  });
  x["EventElapsedTime"] = with_event([](Fixture& f, infinirtEvent_t start) {
    infinirtEvent_t end = nullptr;
    EXPECT_EQ(infinirtEventCreate(&end), infinirtSuccess);
    EXPECT_EQ(infinirtEventRecord(start, f.stream), infinirtSuccess);
    EXPECT_EQ(infinirtEventRecord(end, f.stream), infinirtSuccess);
    EXPECT_EQ(infinirtStreamSynchronize(f.stream), infinirtSuccess);
    float ms = -1;
    const infinirtError_t e = infinirtEventElapsedTime(&ms, start, end);
    infinirtEventDestroy(end);
    return e;
  });
  auto with_pool = [](std::function<infinirtError_t(infinirtMemPool_t)> body) {
    return [body] {
      infinirtMemPool_t pool = nullptr;
      const infinirtError_t e = infinirtDeviceGetDefaultMemPool(&pool, 0);
      return e != infinirtSuccess ? e : body(pool);
    };
  };
  x["MemPoolGetAttribute"] = with_pool([](infinirtMemPool_t pool) {
    uint64_t value = 0;
    return infinirtMemPoolGetAttribute(pool, infinirtMemPoolAttrReleaseThreshold, &value);
  });
  x["MemPoolSetAttribute"] = with_pool([](infinirtMemPool_t pool) {
    uint64_t value = 0;
    return infinirtMemPoolSetAttribute(pool, infinirtMemPoolAttrReleaseThreshold, &value);
  });
  x["MemPoolTrimTo"] =
      with_pool([](infinirtMemPool_t pool) { return infinirtMemPoolTrimTo(pool, 0); });
  // A pool of the program's own on device 0, destroyed afterwards.
  auto with_own_pool = [](std::function<infinirtError_t(infinirtMemPool_t)> body) {
    return [body] {
      infinirtMemPoolProps props{};
      props.allocType = infinirtMemAllocationTypePinned;
      props.location = {infinirtMemLocationTypeDevice, 0};
      infinirtMemPool_t pool = nullptr;
      const infinirtError_t e = infinirtMemPoolCreate(&pool, &props);
      if (e != infinirtSuccess) return e;
      const infinirtError_t answer = body(pool);
      EXPECT_EQ(infinirtMemPoolDestroy(pool), infinirtSuccess);
      return answer;
    };
  };
  x["MemPoolCreate"] = with_own_pool([](infinirtMemPool_t) { return infinirtSuccess; });
  x["MemPoolDestroy"] = x["MemPoolCreate"];
  x["MallocFromPoolAsync"] = with_own_pool([](infinirtMemPool_t pool) {
    Fixture f;
    void* p = nullptr;
    const infinirtError_t e = infinirtMallocFromPoolAsync(&p, kBytes, pool, f.stream);
    if (e == infinirtSuccess) {
      EXPECT_EQ(infinirtFreeAsync(p, f.stream), infinirtSuccess);
    }
    return e;
  });
  x["PoolGetAttribute"] = with_own_pool([](infinirtMemPool_t pool) {
    uint64_t value = 0;
    return infinirtMemPoolGetAttribute(pool, infinirtMemPoolAttrUsedMemCurrent, &value);
  });
  x["PoolSetAttribute"] = with_own_pool([](infinirtMemPool_t pool) {
    uint64_t value = 1 << 20;
    return infinirtMemPoolSetAttribute(pool, infinirtMemPoolAttrReleaseThreshold, &value);
  });
  x["PoolTrimTo"] =
      with_own_pool([](infinirtMemPool_t pool) { return infinirtMemPoolTrimTo(pool, 0); });
  x["MemPoolSetAccess"] = with_own_pool([](infinirtMemPool_t pool) {
    const infinirtMemAccessDesc own{{infinirtMemLocationTypeDevice, 0},
                                    infinirtMemAccessFlagsProtReadWrite};
    return infinirtMemPoolSetAccess(pool, &own, 1);
  });
  x["MemPoolGetAccess"] = with_own_pool([](infinirtMemPool_t pool) {
    infinirtMemLocation own{infinirtMemLocationTypeDevice, 0};
    infinirtMemAccessFlags flags = infinirtMemAccessFlagsProtNone;
    const infinirtError_t e = infinirtMemPoolGetAccess(&flags, pool, &own);
    EXPECT_TRUE(e != infinirtSuccess || flags == infinirtMemAccessFlagsProtReadWrite);
    return e;
  });
  x["IpcGetMemHandle"] = [] {
    Fixture f;
    infinirtIpcMemHandle_t handle;
    return infinirtIpcGetMemHandle(&handle, f.device);
  };
  x["IpcGetEventHandle"] = [] {
    infinirtEvent_t event = nullptr;
    EXPECT_EQ(infinirtEventCreateWithFlags(&event,
                                           infinirtEventInterprocess | infinirtEventDisableTiming),
              infinirtSuccess);
    infinirtIpcEventHandle_t handle;
    const infinirtError_t e = infinirtIpcGetEventHandle(&handle, event);
    infinirtEventDestroy(event);
    return e;
  };
  // Handles are opened only in another process than the one that made them: a peer exports.
  auto with_exported = [](std::function<infinirtError_t(const infinirtIpcMemHandle_t&,
                                                        const infinirtIpcEventHandle_t&)>
                              body) {
    return [body] {
      using infinirt::testing::FromHex;
      infinirt::testing::Peer peer({"export", std::to_string(kBytes), "5"});
      std::istringstream words(peer.ReadLine());
      std::string word, memory_hex, event_hex;
      words >> word >> memory_hex >> event_hex;
      infinirtIpcMemHandle_t memory;
      infinirtIpcEventHandle_t event;
      EXPECT_EQ(word, "handles") << "the peer did not export";
      if (word != "handles" || !FromHex(memory_hex, &memory) || !FromHex(event_hex, &event)) {
        return infinirtErrorUnknown;
      }
      const infinirtError_t e = body(memory, event);
      peer.WriteLine("exit");
      EXPECT_EQ(peer.ReadLine(), "final 5");
      EXPECT_EQ(peer.Wait(), 0);
      return e;
    };
  };
  x["IpcOpenMemHandle"] = with_exported([](const infinirtIpcMemHandle_t& memory,
                                           const infinirtIpcEventHandle_t&) {
    void* opened = nullptr;
    const infinirtError_t e =
        infinirtIpcOpenMemHandle(&opened, memory, infinirtIpcMemLazyEnablePeerAccess);
    unsigned char first = 0;
    EXPECT_TRUE(e != infinirtSuccess ||
                (infinirtMemcpy(&first, opened, 1, infinirtMemcpyDeviceToHost) == infinirtSuccess &&
                 first == 5));
    if (e == infinirtSuccess) {
      EXPECT_EQ(infinirtIpcCloseMemHandle(opened), infinirtSuccess);
    }
    return e;
  });
  x["IpcCloseMemHandle"] =
      with_exported([](const infinirtIpcMemHandle_t& memory, const infinirtIpcEventHandle_t&) {
        void* opened = nullptr;
        if (auto e = infinirtIpcOpenMemHandle(&opened, memory, 0)) {
          // Opening may be what the backend lacks: then closing is not exercisable either.
          return e == infinirtErrorNotSupported ? infinirtErrorUnknown : e;
        }
        return infinirtIpcCloseMemHandle(opened);
      });
  x["IpcOpenEventHandle"] =
      with_exported([](const infinirtIpcMemHandle_t&, const infinirtIpcEventHandle_t& event) {
        infinirtEvent_t opened = nullptr;
        const infinirtError_t e = infinirtIpcOpenEventHandle(&opened, event);
        if (e == infinirtSuccess) {
          EXPECT_EQ(infinirtStreamWaitEvent(nullptr, opened, 0), infinirtSuccess);
          EXPECT_EQ(infinirtEventDestroy(opened), infinirtSuccess);
        }
        return e;
      });
  // A pool other processes open, shared with this one: every one of the four entries runs, the
  // exercise answers the first that fails.
  const Exercise share_pool = [] {
    Fixture f;
    infinirtMemPoolProps props{};
    props.allocType = infinirtMemAllocationTypePinned;
    props.handleTypes = infinirtMemHandleTypePosixFileDescriptor;
    props.location = {infinirtMemLocationTypeDevice, 0};
    infinirtMemPool_t pool = nullptr;
    infinirtError_t e = infinirtMemPoolCreate(&pool, &props);
    if (e != infinirtSuccess) return e;
    void* memory = nullptr;
    int fd = -1;
    infinirtMemPoolPtrExportData data{};
    infinirtMemPool_t imported = nullptr;
    void* opened = nullptr;
    e = infinirtMallocFromPoolAsync(&memory, kBytes, pool, f.stream);
    if (e == infinirtSuccess) e = infinirtStreamSynchronize(f.stream);
    if (e == infinirtSuccess) {
      e = infinirtMemPoolExportToShareableHandle(&fd, pool,
                                                 infinirtMemHandleTypePosixFileDescriptor, 0);
    }
    if (e == infinirtSuccess) e = infinirtMemPoolExportPointer(&data, memory);
    if (e == infinirtSuccess) {
      e = infinirtMemPoolImportFromShareableHandle(
          &imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
          infinirtMemHandleTypePosixFileDescriptor, 0);
    }
    if (e == infinirtSuccess) e = infinirtMemPoolImportPointer(&opened, imported, &data);
    if (opened != nullptr) {
      EXPECT_EQ(infinirtFree(opened), infinirtSuccess);
    }
    if (imported != nullptr) {
      EXPECT_EQ(infinirtMemPoolDestroy(imported), infinirtSuccess);
    }
    if (fd >= 0) close(fd);
    if (memory != nullptr) {
      EXPECT_EQ(infinirtFreeAsync(memory, f.stream), infinirtSuccess);
    }
    EXPECT_EQ(infinirtStreamSynchronize(f.stream), infinirtSuccess);
    EXPECT_EQ(infinirtMemPoolDestroy(pool), infinirtSuccess);
    return e;
  };
  x["MemPoolExportToShareableHandle"] = share_pool;
  x["MemPoolImportFromShareableHandle"] = share_pool;
  x["MemPoolExportPointer"] = share_pool;
  x["MemPoolImportPointer"] = share_pool;
  auto with_graph = [](bool launch, bool destroy_exec) {
    return [launch, destroy_exec] {
      Fixture f;
      infinirtGraph_t graph = nullptr;
      infinirtGraphExec_t exec = nullptr;
      infinirtError_t e = InstantiateOneMemset(f, &graph, &exec);
      if (e == infinirtSuccess && launch) e = infinirtGraphLaunch(exec, f.stream);
      infinirtStreamSynchronize(f.stream);
      const infinirtError_t destroyed = infinirtGraphExecDestroy(exec);
      if (e == infinirtSuccess && destroy_exec) e = destroyed;
      infinirtGraphDestroy(graph);
      return e;
    };
  };
  x["GraphInstantiate"] = with_graph(false, false);
  x["GraphLaunch"] = with_graph(true, false);
  x["GraphExecDestroy"] = with_graph(false, true);
  return x;
}

// Entries that only the core calls, around the others.
bool IsLifecycleEntry(const std::string& entry) {
  return entry == "Initialize" || entry == "Finalize" || entry == "GetInfo" ||
         entry == "GetSupport";
}

template <class... Args>
infinirtError_t CallWithZeros(infinirtError_t (*entry)(Args...)) {
  return entry(Args{}...);
}

std::vector<std::string> SplitFunctions(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream stream(text);
  for (std::string name; std::getline(stream, name, ',');) {
    const size_t first = name.find_first_not_of(' ');
    if (first != std::string::npos) names.push_back(name.substr(first));
  }
  return names;
}

class Support : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = LoadedVendorBackend();
    ASSERT_FALSE(backend_.name.empty()) << "no vendor backend loaded (INFINIRT_BACKENDS?)";
    runtime_ = std::make_unique<EmulatedRuntime>(backend_.runtime_library);
    ASSERT_TRUE(runtime_->loaded()) << backend_.runtime_library << " is not an emulated runtime";
  }
  VendorBackend backend_;
  std::unique_ptr<EmulatedRuntime> runtime_;
};

TEST_F(Support, EveryEntryIsDeclared) {
#define CHECK_DECLARED_(name, params)                                                 \
  if (!IsLifecycleEntry(#name)) {                                                     \
    infinirtPluginSupport support{};                                                  \
    support.struct_size = sizeof(support);                                            \
    EXPECT_EQ(backend_.table->GetSupport(#name, &support), infinirtSuccess) << #name; \
  }
  INFINIRT_PLUGIN_ENTRIES(CHECK_DECLARED_)
#undef CHECK_DECLARED_
  infinirtPluginSupport support{};
  support.struct_size = sizeof(support);
  EXPECT_EQ(backend_.table->GetSupport("NoSuchEntry", &support), infinirtErrorInvalidValue);
}

TEST_F(Support, UnsupportedEntriesAnswerNotSupported) {
#define CHECK_NONE_(name, params)                                                    \
  if (!IsLifecycleEntry(#name)) {                                                    \
    infinirtPluginSupport support{};                                                 \
    support.struct_size = sizeof(support);                                           \
    ASSERT_EQ(backend_.table->GetSupport(#name, &support), infinirtSuccess);         \
    if (support.level == INFINIRT_SUPPORT_NONE && backend_.table->name != nullptr) { \
      EXPECT_EQ(CallWithZeros(backend_.table->name), infinirtErrorNotSupported)      \
          << #name << " is declared NotSupported (" << support.note << ")";          \
    }                                                                                \
  }
  INFINIRT_PLUGIN_ENTRIES(CHECK_NONE_)
#undef CHECK_NONE_
}

TEST_F(Support, SupportedEntriesWorkThroughTheFunctionsTheyName) {
  const std::map<std::string, Exercise> exercises = Exercises();
  for (const std::string& entry : PluginEntryNames()) {
    if (IsLifecycleEntry(entry)) continue;
    SCOPED_TRACE(entry);
    infinirtPluginSupport support{};
    support.struct_size = sizeof(support);
    ASSERT_EQ(backend_.table->GetSupport(entry.c_str(), &support), infinirtSuccess);
    if (support.level == INFINIRT_SUPPORT_NONE) continue;
    const auto exercise = exercises.find(entry);
    ASSERT_NE(exercise, exercises.end()) << "no exercise for " << entry;
    runtime_->Reset();
    EXPECT_EQ(exercise->second(), infinirtSuccess) << entry << ": " << support.note;
    for (const std::string& function : SplitFunctions(support.vendor_functions)) {
      EXPECT_GT(runtime_->Calls(function), 0)
          << entry << " is declared to use " << function << ", which it did not call";
    }
    EXPECT_EQ(infinirtGetLastError(), infinirtSuccess);
    backend_ = LoadedVendorBackend();  // GetDeviceCount's exercise re-initialises
  }
}

// A vendor call failing mid-stream with a code InfiniRT does not know: the call answers
// infinirtErrorUnknown, which becomes the last error, and the next call works.
TEST_F(Support, AVendorFailureMidStreamIsReportedAndTheRuntimeGoesOn) {
  infinirtPluginSupport support{};
  support.struct_size = sizeof(support);
  ASSERT_EQ(backend_.table->GetSupport("MemsetAsync", &support), infinirtSuccess);
  const std::vector<std::string> functions = SplitFunctions(support.vendor_functions);
  ASSERT_FALSE(functions.empty()) << "MemsetAsync names no vendor function";
  const std::string function = functions.back();
  Fixture f;
  ASSERT_EQ(infinirtMemsetAsync(f.device, 1, kBytes, f.stream), infinirtSuccess);
  runtime_->Fail(function, 0, 987654);
  EXPECT_EQ(infinirtMemsetAsync(f.device, 2, kBytes, f.stream), infinirtErrorUnknown) << function;
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorUnknown);
  runtime_->ClearFailures();
  ASSERT_EQ(infinirtMemsetAsync(f.device, 3, kBytes, f.stream), infinirtSuccess);
  std::vector<unsigned char> result(kBytes);
  ASSERT_EQ(infinirtMemcpy(result.data(), f.device, kBytes, infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  EXPECT_EQ(result, std::vector<unsigned char>(kBytes, 3));
}

}  // namespace
}  // namespace infinirt::vendor_test
