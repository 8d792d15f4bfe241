// S45 to S47: the device properties' CUDA layout and their agreement with the attributes and
// the device's behaviour; limits and the cache configuration; choosing, initialising and
// listing devices, and the device's current memory pool.
#include <cstring>
#include <string>
#include <thread>

#include "conformance.h"

namespace infinirt::conformance {
namespace {

// A property field equals the attribute's value, where the backend answers the attribute.
template <class Field>
void ExpectFieldIsAttribute(Field field, enum infinirtDeviceAttr attribute, int device) {
  int value = 0;
  const infinirtError_t answer = infinirtDeviceGetAttribute(&value, attribute, device);
  if (answer == infinirtErrorNotSupported && SkipsUnsupported()) {
    infinirtGetLastError();
    return;
  }
  ASSERT_EQ(answer, infinirtSuccess) << "attribute " << attribute;
  EXPECT_EQ(field, static_cast<Field>(value)) << "attribute " << attribute;
}

// ---------------------------------------------------------------------------------------------
// S45: a field that an attribute also answers holds the attribute's value, and the capability
// fields say what the device does.

TEST_F(Conformance, S45_PropertiesHoldTheAttributesValues) {
  for (int device = 0; device < device_count(); ++device) {
    SCOPED_TRACE("device " + std::to_string(device));
    infinirtDeviceProp prop;
    std::memset(&prop, 0x5a, sizeof prop);  // no field may keep this
    ASSERT_EQ(infinirtGetDeviceProperties(&prop, device), infinirtSuccess);
    ExpectFieldIsAttribute(prop.warpSize, infinirtDevAttrWarpSize, device);
    ExpectFieldIsAttribute(prop.multiProcessorCount, infinirtDevAttrMultiProcessorCount, device);
    ExpectFieldIsAttribute(prop.maxThreadsDim[2], infinirtDevAttrMaxBlockDimZ, device);
    ExpectFieldIsAttribute(prop.maxGridSize[0], infinirtDevAttrMaxGridDimX, device);
    ExpectFieldIsAttribute(prop.memPitch, infinirtDevAttrMaxPitch, device);
    ExpectFieldIsAttribute(prop.maxTexture2D[1], infinirtDevAttrMaxTexture2DHeight, device);
    ExpectFieldIsAttribute(prop.pciDeviceID, infinirtDevAttrPciDeviceId, device);
    ExpectFieldIsAttribute(prop.reservedSharedMemPerBlock,
                           infinirtDevAttrReservedSharedMemoryPerBlock, device);
    ExpectFieldIsAttribute(prop.ipcEventSupported, infinirtDevAttrIpcEventSupport, device);
    ExpectFieldIsAttribute(prop.hostNumaId, infinirtDevAttrHostNumaId, device);
    ExpectFieldIsAttribute(prop.memoryPoolSupportedHandleTypes,
                           infinirtDevAttrMemoryPoolSupportedHandleTypes, device);
    // Windows only, and the tail CUDA reserves.
    for (char byte : prop.luid) EXPECT_EQ(byte, 0);
    EXPECT_EQ(prop.luidDeviceNodeMask, 0u);
    for (int word : prop.reserved) EXPECT_EQ(word, 0);
    size_t free_bytes = 0, total_bytes = 0;
    if (infinirtSetDevice(device) == infinirtSuccess &&
        infinirtMemGetInfo(&free_bytes, &total_bytes) == infinirtSuccess) {
      EXPECT_EQ(prop.totalGlobalMem, total_bytes);
    }
    ASSERT_EQ(infinirtSetDevice(0), infinirtSuccess);
    EXPECT_NE(prop.name[0], '\0');
  }
}

TEST_F(Conformance, S45_CapabilityFieldsSayWhatTheDeviceDoes) {
  // The fields are the attributes'. Where a backend refuses attributes they stay 0, which then
  // means "unknown": a field that says yes must still be right.
  int probe = 0;
  const bool known = infinirtDeviceGetAttribute(&probe, infinirtDevAttrHostRegisterSupported, 0) !=
                         infinirtErrorNotSupported ||
                     !SkipsUnsupported();
  infinirtDeviceProp prop{};
  ASSERT_EQ(infinirtGetDeviceProperties(&prop, 0), infinirtSuccess);
  int least = 0, greatest = 0;
  const bool priorities =
      infinirtDeviceGetStreamPriorityRange(&least, &greatest) == infinirtSuccess &&
      least != greatest;
  if (known || prop.streamPrioritiesSupported != 0) {
    EXPECT_EQ(prop.streamPrioritiesSupported != 0, priorities);
  }
  std::vector<unsigned char> host(kBytes);
  const infinirtError_t registered = infinirtHostRegister(host.data(), host.size(), 0);
  if (known || prop.hostRegisterSupported != 0) {
    EXPECT_EQ(prop.hostRegisterSupported != 0, registered == infinirtSuccess)
        << infinirtGetErrorName(registered);
  }
  if (registered == infinirtSuccess) {
    EXPECT_EQ(infinirtHostUnregister(host.data()), infinirtSuccess);
  }
  void* pool_memory = nullptr;
  const infinirtError_t pooled = infinirtMallocAsync(&pool_memory, kBytes, nullptr);
  // A device that claims pools must have them; a plugin may still serve MallocAsync without
  // them (by waiting for the stream), as Ascend's does.
  if (prop.memoryPoolsSupported != 0) {
    EXPECT_EQ(pooled, infinirtSuccess);
  }
  if (pooled == infinirtSuccess) {
    EXPECT_EQ(infinirtFreeAsync(pool_memory, nullptr), infinirtSuccess);
  }
  ASSERT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
  infinirtGetLastError();
}

// ---------------------------------------------------------------------------------------------
// S46: limits and the cache configuration of the current device.

TEST_F(Conformance, S46_LimitsAreKeptAndReported) {
  size_t stack = 0;
  ASSERT_OK_OR_SKIP(infinirtDeviceGetLimit(&stack, infinirtLimitStackSize));
  EXPECT_GT(stack, 0u);
  size_t heap = 0;
  ASSERT_EQ(infinirtDeviceGetLimit(&heap, infinirtLimitMallocHeapSize), infinirtSuccess);
  ASSERT_EQ(infinirtDeviceSetLimit(infinirtLimitMallocHeapSize, heap + (4 << 20)), infinirtSuccess);
  size_t changed = 0;
  ASSERT_EQ(infinirtDeviceGetLimit(&changed, infinirtLimitMallocHeapSize), infinirtSuccess);
  EXPECT_EQ(changed, heap + (4 << 20));
  ASSERT_EQ(infinirtDeviceSetLimit(infinirtLimitMallocHeapSize, heap), infinirtSuccess);

  // Hints that are clamped: the persisting L2 size to the device's maximum, the L2 fetch
  // granularity to 128 bytes.
  infinirtDeviceProp prop{};
  ASSERT_EQ(infinirtGetDeviceProperties(&prop, 0), infinirtSuccess);
  ASSERT_EQ(infinirtDeviceSetLimit(infinirtLimitPersistingL2CacheSize, size_t{1} << 40),
            infinirtSuccess);
  size_t persisting = 0;
  ASSERT_EQ(infinirtDeviceGetLimit(&persisting, infinirtLimitPersistingL2CacheSize),
            infinirtSuccess);
  EXPECT_LE(persisting, static_cast<size_t>(prop.persistingL2CacheMaxSize));
  ASSERT_EQ(infinirtDeviceSetLimit(infinirtLimitMaxL2FetchGranularity, 4096), infinirtSuccess);
  size_t granularity = 0;
  ASSERT_EQ(infinirtDeviceGetLimit(&granularity, infinirtLimitMaxL2FetchGranularity),
            infinirtSuccess);
  EXPECT_LE(granularity, 128u);

  // The device runtime's synchronisation depth exists only before compute capability 9.0.
  size_t depth = 0;
  const infinirtError_t depth_answer =
      infinirtDeviceGetLimit(&depth, infinirtLimitDevRuntimeSyncDepth);
  EXPECT_TRUE(depth_answer == infinirtSuccess || depth_answer == infinirtErrorUnsupportedLimit)
      << infinirtGetErrorName(depth_answer);
  infinirtGetLastError();
}

TEST_F(Conformance, S46_BadLimitsAreRefused) {
  size_t value = 7;
  EXPECT_EQ(infinirtDeviceGetLimit(nullptr, infinirtLimitStackSize), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtDeviceGetLimit(&value, static_cast<enum infinirtLimit>(7)),
            infinirtErrorUnsupportedLimit);
  EXPECT_EQ(infinirtDeviceGetLimit(&value, static_cast<enum infinirtLimit>(-1)),
            infinirtErrorUnsupportedLimit);
  EXPECT_EQ(infinirtDeviceSetLimit(static_cast<enum infinirtLimit>(99), 1),
            infinirtErrorUnsupportedLimit);
  EXPECT_EQ(value, 7u);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorUnsupportedLimit);
}

TEST_F(Conformance, S46_CacheConfigIsAHint) {
  ASSERT_OK_OR_SKIP(infinirtDeviceSetCacheConfig(infinirtFuncCachePreferL1));
  enum infinirtFuncCache config = static_cast<enum infinirtFuncCache>(-1);
  ASSERT_EQ(infinirtDeviceGetCacheConfig(&config), infinirtSuccess);
  EXPECT_TRUE(config == infinirtFuncCachePreferNone || config == infinirtFuncCachePreferL1)
      << config;
  EXPECT_EQ(infinirtDeviceSetCacheConfig(static_cast<enum infinirtFuncCache>(4)),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtDeviceGetCacheConfig(nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtDeviceSetCacheConfig(infinirtFuncCachePreferNone), infinirtSuccess);
  infinirtGetLastError();
}

// ---------------------------------------------------------------------------------------------
// S47: ChooseDevice, SetValidDevices, InitDevice, DeviceGetMemPool/DeviceSetMemPool.

TEST_F(Conformance, S47_ChooseDeviceFindsTheBestMatch) {
  int chosen = -1;
  infinirtDeviceProp wanted{};
  ASSERT_EQ(infinirtChooseDevice(&chosen, &wanted), infinirtSuccess);
  EXPECT_EQ(chosen, 0) << "nothing asked: the first device";
  for (int device = 0; device < device_count(); ++device) {
    infinirtDeviceProp prop{};
    ASSERT_EQ(infinirtGetDeviceProperties(&prop, device), infinirtSuccess);
    wanted = infinirtDeviceProp{};
    std::memcpy(wanted.name, prop.name, sizeof wanted.name);
    std::memcpy(wanted.backendName, prop.backendName, sizeof wanted.backendName);
    wanted.totalGlobalMem = prop.totalGlobalMem;
    ASSERT_EQ(infinirtChooseDevice(&chosen, &wanted), infinirtSuccess);
    infinirtDeviceProp found{};
    ASSERT_EQ(infinirtGetDeviceProperties(&found, chosen), infinirtSuccess);
    EXPECT_STREQ(found.name, prop.name);
    EXPECT_LE(chosen, device) << "the lowest ordinal among equals";
  }
  wanted = infinirtDeviceProp{};
  std::strcpy(wanted.backendName, "no-such-backend");
  chosen = -1;
  EXPECT_EQ(infinirtChooseDevice(&chosen, &wanted), infinirtErrorInvalidDevice);
  EXPECT_EQ(chosen, -1);
  EXPECT_EQ(infinirtChooseDevice(nullptr, &wanted), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtChooseDevice(&chosen, nullptr), infinirtErrorInvalidValue);
  infinirtGetLastError();
}

int DeviceOfANewThread() {
  int device = -1;
  std::thread([&] { EXPECT_EQ(infinirtGetDevice(&device), infinirtSuccess); }).join();
  return device;
}

TEST_F(Conformance, S47_SetValidDevicesChoosesWhereNewThreadsStart) {
  int list[2] = {device_count() - 1, 0};
  ASSERT_EQ(infinirtSetValidDevices(list, device_count() > 1 ? 2 : 1), infinirtSuccess);
  EXPECT_EQ(DeviceOfANewThread(), device_count() - 1);
  int current = -1;
  ASSERT_EQ(infinirtGetDevice(&current), infinirtSuccess);
  EXPECT_EQ(current, 0) << "a thread that has its device keeps it";

  int bad[1] = {device_count()};
  EXPECT_EQ(infinirtSetValidDevices(bad, 1), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtSetValidDevices(nullptr, 1), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtSetValidDevices(list, -1), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtSetValidDevices(list, device_count() + 1), infinirtErrorInvalidValue);
  EXPECT_EQ(DeviceOfANewThread(), device_count() - 1) << "a refused call changed the list";

  ASSERT_EQ(infinirtSetValidDevices(nullptr, 0), infinirtSuccess);
  EXPECT_EQ(DeviceOfANewThread(), 0) << "len 0 restores the default";
  infinirtGetLastError();
}

TEST_F(Conformance, S47_InitDeviceSetsFlagsWithoutMakingTheDeviceCurrent) {
  const int last = device_count() - 1;
  ASSERT_EQ(infinirtInitDevice(last, 0, 0), infinirtSuccess);
  ASSERT_EQ(infinirtInitDevice(last, infinirtDeviceScheduleYield, infinirtInitDeviceFlagsAreValid),
            infinirtSuccess);
  int current = -1;
  ASSERT_EQ(infinirtGetDevice(&current), infinirtSuccess);
  EXPECT_EQ(current, 0);
  ASSERT_EQ(infinirtSetDevice(last), infinirtSuccess);
  unsigned int flags = 0;
  ASSERT_EQ(infinirtGetDeviceFlags(&flags), infinirtSuccess);
  EXPECT_EQ(flags & infinirtDeviceScheduleMask,
            static_cast<unsigned int>(infinirtDeviceScheduleYield));
  EXPECT_EQ(infinirtInitDevice(last, 0x3, infinirtInitDeviceFlagsAreValid),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtInitDevice(last, 0, 0x2), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtInitDevice(device_count(), 0, 0), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtInitDevice(-1, 0, 0), infinirtErrorInvalidDevice);
  ASSERT_EQ(infinirtGetDeviceFlags(&flags), infinirtSuccess);
  EXPECT_EQ(flags & infinirtDeviceScheduleMask,
            static_cast<unsigned int>(infinirtDeviceScheduleYield))
      << "a refused call changed the flags";
  ASSERT_EQ(infinirtSetDeviceFlags(infinirtDeviceScheduleAuto), infinirtSuccess);
  ASSERT_EQ(infinirtSetDevice(0), infinirtSuccess);
  infinirtGetLastError();
}

TEST_F(Conformance, S47_TheCurrentMemPoolIsTheDefaultUntilSet) {
  for (int device = 0; device < device_count(); ++device) {
    infinirtMemPool_t current = nullptr, fallback = nullptr;
    ASSERT_EQ(infinirtDeviceGetMemPool(&current, device), infinirtSuccess);
    ASSERT_EQ(infinirtDeviceGetDefaultMemPool(&fallback, device), infinirtSuccess);
    EXPECT_EQ(current, fallback);
    EXPECT_EQ(infinirtDeviceSetMemPool(device, fallback), infinirtSuccess);
    ASSERT_EQ(infinirtDeviceGetMemPool(&current, device), infinirtSuccess);
    EXPECT_EQ(current, fallback);
  }
  infinirtMemPool_t pool0 = nullptr;
  ASSERT_EQ(infinirtDeviceGetDefaultMemPool(&pool0, 0), infinirtSuccess);
  if (device_count() > 1) {
    EXPECT_EQ(infinirtDeviceSetMemPool(1, pool0), infinirtErrorInvalidValue)
        << "a pool of another device";
  }
  EXPECT_EQ(infinirtDeviceSetMemPool(0, nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtDeviceSetMemPool(device_count(), pool0), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtDeviceGetMemPool(nullptr, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtDeviceGetMemPool(&pool0, -1), infinirtErrorInvalidDevice);
  infinirtGetLastError();
}

// ---------------------------------------------------------------------------------------------
// S50: peers.

TEST_F(Conformance, S50_PeerAccessIsEnabledOnceAndDisabledOnce) {
  int can = -1;
  ASSERT_EQ(infinirtDeviceCanAccessPeer(&can, 0, 0), infinirtSuccess);
  EXPECT_EQ(can, 0) << "a device is not its own peer";
  EXPECT_EQ(infinirtDeviceEnablePeerAccess(0, 0), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtDeviceDisablePeerAccess(0), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtDeviceCanAccessPeer(nullptr, 0, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtDeviceCanAccessPeer(&can, 0, device_count()), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtDeviceEnablePeerAccess(device_count(), 0), infinirtErrorInvalidDevice);
  int value = -1;
  EXPECT_EQ(infinirtDeviceGetP2PAttribute(&value, infinirtDevP2PAttrAccessSupported, 0, 0),
            infinirtErrorInvalidDevice);
  infinirtGetLastError();
  if (device_count() < 2) GTEST_SKIP() << "peers need two devices";

  ASSERT_EQ(infinirtDeviceCanAccessPeer(&can, 0, 1), infinirtSuccess);
  ASSERT_EQ(infinirtDeviceGetP2PAttribute(&value, infinirtDevP2PAttrAccessSupported, 0, 1),
            infinirtSuccess);
  EXPECT_EQ(value, can) << "the attribute says what DeviceCanAccessPeer says";
  if (!can) {
    EXPECT_EQ(infinirtDeviceEnablePeerAccess(1, 0), infinirtErrorPeerAccessUnsupported);
    infinirtGetLastError();
    if (SkipsUnsupported()) GTEST_SKIP() << "device 0 cannot reach device 1's memory";
    FAIL() << "the backend's devices are not peers";
  }
  EXPECT_EQ(infinirtDeviceEnablePeerAccess(1, 1), infinirtErrorInvalidValue) << "flags";
  EXPECT_EQ(infinirtDeviceDisablePeerAccess(1), infinirtErrorPeerAccessNotEnabled);
  ASSERT_EQ(infinirtDeviceEnablePeerAccess(1, 0), infinirtSuccess);
  EXPECT_EQ(infinirtDeviceEnablePeerAccess(1, 0), infinirtErrorPeerAccessAlreadyEnabled);

  // One direction only: device 1 has no access to device 0 yet.
  ASSERT_EQ(infinirtSetDevice(1), infinirtSuccess);
  EXPECT_EQ(infinirtDeviceDisablePeerAccess(0), infinirtErrorPeerAccessNotEnabled);
  ASSERT_EQ(infinirtSetDevice(0), infinirtSuccess);

  // Enabled, device 0 copies device 1's memory in its stream.
  unsigned char* mine = NewDeviceMemory(kBytes);
  ASSERT_EQ(infinirtSetDevice(1), infinirtSuccess);
  unsigned char* theirs = NewDeviceMemory(kBytes);
  ASSERT_EQ(infinirtMemset(theirs, 0x50, kBytes), infinirtSuccess);
  ASSERT_EQ(infinirtSetDevice(0), infinirtSuccess);
  infinirtStream_t stream = NewStream();
  ASSERT_EQ(infinirtMemcpyAsync(mine, theirs, kBytes, infinirtMemcpyDeviceToDevice, stream),
            infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(ReadBack(mine, kBytes).data(), kBytes, 0x50));

  ASSERT_EQ(infinirtDeviceDisablePeerAccess(1), infinirtSuccess);
  EXPECT_EQ(infinirtDeviceDisablePeerAccess(1), infinirtErrorPeerAccessNotEnabled);
  // A reset ends the access.
  ASSERT_EQ(infinirtDeviceEnablePeerAccess(1, 0), infinirtSuccess);
  ASSERT_EQ(infinirtDeviceReset(), infinirtSuccess);
  EXPECT_EQ(infinirtDeviceDisablePeerAccess(1), infinirtErrorPeerAccessNotEnabled);
  EXPECT_EQ(infinirtDeviceGetP2PAttribute(&value, static_cast<infinirtDeviceP2PAttr>(9), 0, 1),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtDeviceGetP2PAttribute(nullptr, infinirtDevP2PAttrAccessSupported, 0, 1),
            infinirtErrorInvalidValue);
  infinirtGetLastError();
}

}  // namespace
}  // namespace infinirt::conformance
