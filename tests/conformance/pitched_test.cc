// S48, S49: pitched memory, 2D and 3D copies and memsets; copies between devices' memory.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "conformance.h"

namespace infinirt::conformance {
namespace {

constexpr size_t kWidth = 100;  // bytes of a row
constexpr size_t kHeight = 9;   // rows

// A host image of `rows` rows `pitch` bytes apart; byte (x, y) is Pattern(x, y), padding 0xEE.
std::vector<unsigned char> Image(size_t pitch, size_t width, size_t rows) {
  std::vector<unsigned char> image(pitch * rows, 0xEE);
  for (size_t y = 0; y < rows; ++y) {
    for (size_t x = 0; x < width; ++x) image[y * pitch + x] = static_cast<unsigned char>(x * 7 + y);
  }
  return image;
}

bool SameRows(const unsigned char* a, size_t a_pitch, const unsigned char* b, size_t b_pitch,
              size_t width, size_t rows) {
  for (size_t y = 0; y < rows; ++y) {
    if (std::memcmp(a + y * a_pitch, b + y * b_pitch, width) != 0) return false;
  }
  return true;
}

// Device memory from MallocPitch, freed at the end of the test.
struct PitchedMemory {
  void* ptr = nullptr;
  size_t pitch = 0;
  PitchedMemory(size_t width, size_t height) {
    EXPECT_EQ(infinirtMallocPitch(&ptr, &pitch, width, height), infinirtSuccess);
  }
  ~PitchedMemory() { infinirtFree(ptr); }
  unsigned char* bytes() const { return static_cast<unsigned char*>(ptr); }
};

// ---------------------------------------------------------------------------------------------
// S48: 2D and 3D copies and memsets.

TEST_F(Conformance, S48_Copy2DRoundTripsThroughPitchedMemory) {
  PitchedMemory device(kWidth, kHeight);
  ASSERT_NE(device.ptr, nullptr);
  EXPECT_GE(device.pitch, kWidth);
  const std::vector<unsigned char> source = Image(128, kWidth, kHeight);
  ASSERT_EQ(infinirtMemcpy2D(device.ptr, device.pitch, source.data(), 128, kWidth, kHeight,
                             infinirtMemcpyHostToDevice),
            infinirtSuccess);
  std::vector<unsigned char> back(kWidth * kHeight, 0);
  infinirtStream_t stream = NewStream();
  ASSERT_EQ(infinirtMemcpy2DAsync(back.data(), kWidth, device.ptr, device.pitch, kWidth, kHeight,
                                  infinirtMemcpyDeviceToHost, stream),
            infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_TRUE(SameRows(back.data(), kWidth, source.data(), 128, kWidth, kHeight));
}

TEST_F(Conformance, S48_Memset2DSetsTheRowsAndNotThePadding) {
  PitchedMemory device(kWidth, kHeight);
  ASSERT_NE(device.ptr, nullptr);
  const size_t bytes = device.pitch * kHeight;
  ASSERT_EQ(infinirtMemset(device.ptr, 0x11, bytes), infinirtSuccess);
  ASSERT_EQ(infinirtMemset2D(device.ptr, device.pitch, 0x22, kWidth - 10, kHeight),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemset2DAsync(device.bytes() + device.pitch, device.pitch, 0x33, 5, 2, nullptr),
            infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
  const std::vector<unsigned char> back = ReadBack(device.ptr, bytes);
  for (size_t y = 0; y < kHeight; ++y) {
    for (size_t x = 0; x < device.pitch; ++x) {
      const unsigned char expected = (y == 1 || y == 2) && x < 5 ? 0x33
                                     : x < kWidth - 10           ? 0x22
                                                                 : 0x11;
      ASSERT_EQ(back[y * device.pitch + x], expected) << "x " << x << " y " << y;
    }
  }
}

// Copying one column range of an image into another of the same image: the spans overlap, the
// rows do not.
TEST_F(Conformance, S48_ColumnsOfOneImageCopyWithoutOverlap) {
  PitchedMemory device(256, kHeight);
  ASSERT_NE(device.ptr, nullptr);
  const std::vector<unsigned char> source = Image(device.pitch, 256, kHeight);
  ASSERT_EQ(infinirtMemcpy(device.ptr, source.data(), source.size(), infinirtMemcpyHostToDevice),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemcpy2D(device.bytes() + 128, device.pitch, device.ptr, device.pitch, 100,
                             kHeight, infinirtMemcpyDeviceToDevice),
            infinirtSuccess);
  const std::vector<unsigned char> back = ReadBack(device.ptr, source.size());
  EXPECT_TRUE(SameRows(back.data() + 128, device.pitch, source.data(), device.pitch, 100, kHeight));
  EXPECT_TRUE(SameRows(back.data(), device.pitch, source.data(), device.pitch, 128, kHeight))
      << "the source columns changed";
}

TEST_F(Conformance, S48_BadRegionsAreRefusedAndChangeNothing) {
  PitchedMemory device(kWidth, kHeight);
  ASSERT_NE(device.ptr, nullptr);
  const size_t bytes = device.pitch * kHeight;
  ASSERT_EQ(infinirtMemset(device.ptr, 0x5A, bytes), infinirtSuccess);
  std::vector<unsigned char> host = Image(kWidth, kWidth, kHeight + 1);
  // A pitch narrower than the rows.
  EXPECT_EQ(infinirtMemcpy2D(device.ptr, kWidth - 1, host.data(), kWidth, kWidth, kHeight,
                             infinirtMemcpyHostToDevice),
            infinirtErrorInvalidPitchValue);
  // NVIDIA's runtime: InvalidPitchValue for a copy's narrow pitch, InvalidValue for a memset's.
  EXPECT_EQ(infinirtMemset2D(device.ptr, 10, 0, 11, 2), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemset2DAsync(device.ptr, 10, 0, 11, 2, nullptr), infinirtErrorInvalidValue);
  // One row more than the allocation has.
  EXPECT_EQ(infinirtMemcpy2D(device.ptr, device.pitch, host.data(), kWidth, kWidth, kHeight + 1,
                             infinirtMemcpyHostToDevice),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemset2DAsync(device.ptr, device.pitch, 0, kWidth, kHeight + 1, nullptr),
            infinirtErrorInvalidValue);
  // Overlapping rows within one allocation.
  EXPECT_EQ(infinirtMemcpy2D(device.bytes() + 1, device.pitch, device.ptr, device.pitch, kWidth,
                             kHeight - 1, infinirtMemcpyDeviceToDevice),
            infinirtErrorInvalidValue);
  // NULL pointers.
  EXPECT_EQ(
      infinirtMemcpy2D(nullptr, kWidth, host.data(), kWidth, kWidth, 1, infinirtMemcpyHostToDevice),
      infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemset2D(nullptr, kWidth, 0, kWidth, 1), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
  ASSERT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  const std::vector<unsigned char> back = ReadBack(device.ptr, bytes);
  EXPECT_TRUE(AllBytesAre(back.data(), bytes, 0x5A)) << "a refused call changed the memory";
  // Nothing to do is no error.
  EXPECT_EQ(infinirtMemcpy2D(device.ptr, device.pitch, host.data(), kWidth, 0, kHeight,
                             infinirtMemcpyHostToDevice),
            infinirtSuccess);
  EXPECT_EQ(infinirtMemset2D(device.ptr, device.pitch, 0, kWidth, 0), infinirtSuccess);
}

TEST_F(Conformance, S48_Copy3DMovesABoxBetweenVolumes) {
  const infinirtExtent volume = make_infinirtExtent(40, 6, 4);
  infinirtPitchedPtr device{};
  ASSERT_EQ(infinirtMalloc3D(&device, volume), infinirtSuccess);
  EXPECT_GE(device.pitch, volume.width);
  EXPECT_EQ(device.xsize, volume.width);
  EXPECT_EQ(device.ysize, volume.height);
  const size_t device_bytes = device.pitch * volume.height * volume.depth;
  ASSERT_EQ(infinirtMemset3D(device, 0, volume), infinirtSuccess);

  // A 10 x 3 x 2 box of a host volume (pitch 64, 8 rows a slice), from (5, 2, 1) to (7, 1, 2).
  const std::vector<unsigned char> host = Image(64, 64, 8 * 4);
  infinirtMemcpy3DParms p{};
  p.srcPtr = make_infinirtPitchedPtr(const_cast<unsigned char*>(host.data()), 64, 64, 8);
  p.srcPos = make_infinirtPos(5, 2, 1);
  p.dstPtr = device;
  p.dstPos = make_infinirtPos(7, 1, 2);
  p.extent = make_infinirtExtent(10, 3, 2);
  p.kind = infinirtMemcpyHostToDevice;
  ASSERT_EQ(infinirtMemcpy3DAsync(&p, nullptr), infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);

  const std::vector<unsigned char> back = ReadBack(device.ptr, device_bytes);
  for (size_t z = 0; z < volume.depth; ++z) {
    for (size_t y = 0; y < volume.height; ++y) {
      for (size_t x = 0; x < volume.width; ++x) {
        const bool inside = z >= 2 && z < 4 && y >= 1 && y < 4 && x >= 7 && x < 17;
        const unsigned char expected = inside ? host[(z - 1) * 64 * 8 + (y + 1) * 64 + (x - 2)] : 0;
        ASSERT_EQ(back[z * device.pitch * volume.height + y * device.pitch + x], expected)
            << x << "," << y << "," << z;
      }
    }
  }
  ASSERT_EQ(infinirtMemcpy3D(&p), infinirtSuccess);
  // Refused: a CUDA array, NULL, a box leaving the slice or the pitch.
  infinirtMemcpy3DParms bad = p;
  bad.srcArray = reinterpret_cast<infinirtArray_t>(&bad);
  EXPECT_EQ(infinirtMemcpy3D(&bad), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemcpy3D(nullptr), infinirtErrorInvalidValue);
  bad = p;
  bad.dstPos.y = 4;
  EXPECT_EQ(infinirtMemcpy3D(&bad), infinirtErrorInvalidValue);
  // Rows that fit the pitch but leave it from their position: InvalidValue (NVIDIA's answer);
  // a pitch narrower than the rows: InvalidPitchValue.
  bad = p;
  bad.dstPos.x = device.pitch - 5;
  EXPECT_EQ(infinirtMemcpy3D(&bad), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemcpy3DAsync(&bad, nullptr), infinirtErrorInvalidValue);
  bad = p;
  bad.srcPtr.pitch = 8;
  bad.srcPos = make_infinirtPos(0, 0, 0);
  EXPECT_EQ(infinirtMemcpy3D(&bad), infinirtErrorInvalidPitchValue);
  EXPECT_EQ(infinirtMemcpy3DAsync(&bad, nullptr), infinirtErrorInvalidPitchValue);
  bad = p;
  bad.dstPos.z = 3;  // the last slice and one past it
  EXPECT_EQ(infinirtMemcpy3D(&bad), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemset3DAsync(device, 1, make_infinirtExtent(40, 7, 4), nullptr),
            infinirtErrorInvalidValue);
  infinirtGetLastError();
  EXPECT_EQ(infinirtFree(device.ptr), infinirtSuccess);
}

// A volume whose rows are contiguous (pitch == width) is set in one piece: every slice of it.
TEST_F(Conformance, S48_Memset3DOfContiguousRowsSetsEverySlice) {
  const infinirtExtent volume = make_infinirtExtent(32, 4, 5);
  const size_t bytes = volume.width * volume.height * volume.depth;
  void* memory = nullptr;
  ASSERT_EQ(infinirtMalloc(&memory, bytes + 64), infinirtSuccess);
  ASSERT_EQ(infinirtMemset(memory, 0x11, bytes + 64), infinirtSuccess);
  const infinirtPitchedPtr contiguous =
      make_infinirtPitchedPtr(memory, volume.width, volume.width, volume.height);
  ASSERT_EQ(infinirtMemset3D(contiguous, 0x7C, volume), infinirtSuccess);
  std::vector<unsigned char> back = ReadBack(memory, bytes + 64);
  EXPECT_TRUE(AllBytesAre(back.data(), bytes, 0x7C)) << "not every slice was set";
  EXPECT_TRUE(AllBytesAre(back.data() + bytes, 64, 0x11)) << "set past the volume";
  ASSERT_EQ(infinirtMemset3DAsync(contiguous, 0x3D, volume, nullptr), infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
  back = ReadBack(memory, bytes + 64);
  EXPECT_TRUE(AllBytesAre(back.data(), bytes, 0x3D)) << "not every slice was set (async)";
  EXPECT_TRUE(AllBytesAre(back.data() + bytes, 64, 0x11)) << "set past the volume (async)";
  EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
}

// NVIDIA's runtime answers InvalidValue for a 3D memset whose pitch is narrower than its rows.
TEST_F(Conformance, S48_Memset3DWithAPitchNarrowerThanTheRowsIsInvalidValue) {
  infinirtPitchedPtr device{};
  ASSERT_EQ(infinirtMalloc3D(&device, make_infinirtExtent(40, 6, 2)), infinirtSuccess);
  infinirtPitchedPtr narrow = device;
  narrow.pitch = 16;
  EXPECT_EQ(infinirtMemset3D(narrow, 0, make_infinirtExtent(40, 6, 2)), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemset3DAsync(narrow, 0, make_infinirtExtent(40, 6, 2), nullptr),
            infinirtErrorInvalidValue);
  infinirtGetLastError();
  EXPECT_EQ(infinirtFree(device.ptr), infinirtSuccess);
}

// A 3D copy whose pitch exceeds the device's maximum (infinirtDevAttrMaxPitch) is InvalidValue.
TEST_F(Conformance, S48_Copy3DWithAPitchAboveTheMaximumIsInvalidValue) {
  int device_ordinal = 0, max_pitch = 0;
  ASSERT_EQ(infinirtGetDevice(&device_ordinal), infinirtSuccess);
  ASSERT_OK_OR_SKIP(
      infinirtDeviceGetAttribute(&max_pitch, infinirtDevAttrMaxPitch, device_ordinal));
  infinirtPitchedPtr device{};
  ASSERT_EQ(infinirtMalloc3D(&device, make_infinirtExtent(40, 2, 1)), infinirtSuccess);
  std::vector<unsigned char> host(80, 1);
  infinirtMemcpy3DParms p{};
  p.srcPtr = make_infinirtPitchedPtr(host.data(), static_cast<size_t>(max_pitch) + 1, 40, 2);
  p.dstPtr = device;
  p.extent = make_infinirtExtent(40, 1, 1);
  p.kind = infinirtMemcpyHostToDevice;
  EXPECT_EQ(infinirtMemcpy3D(&p), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemcpy3DAsync(&p, nullptr), infinirtErrorInvalidValue);
  infinirtGetLastError();
  EXPECT_EQ(infinirtFree(device.ptr), infinirtSuccess);
}

// A width no pitch can hold is InvalidValue (NVIDIA's answer), not MemoryAllocation.
TEST_F(Conformance, S48_PitchedAllocationOfAWidthOfSizeMaxIsInvalidValue) {
  void* ptr = nullptr;
  size_t pitch = 0;
  EXPECT_EQ(infinirtMallocPitch(&ptr, &pitch, SIZE_MAX, 1), infinirtErrorInvalidValue);
  infinirtPitchedPtr pitched{};
  EXPECT_EQ(infinirtMalloc3D(&pitched, make_infinirtExtent(SIZE_MAX, 1, 1)),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
}

// Captured, a 2D copy is its rows' copies: the graph does it again at each launch.
TEST_F(Conformance, S48_Copy2DCanBeCaptured) {
  PitchedMemory device(kWidth, kHeight);
  ASSERT_NE(device.ptr, nullptr);
  std::vector<unsigned char>& source = NewPageableMemory(kWidth * kHeight);
  unsigned char* pinned = NewPinnedMemory(kWidth * kHeight);
  ASSERT_NE(pinned, nullptr);
  infinirtStream_t stream = NewStream();
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_EQ(infinirtMemcpy2DAsync(device.ptr, device.pitch, pinned, kWidth, kWidth, kHeight,
                                  infinirtMemcpyHostToDevice, stream),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemset2DAsync(device.ptr, device.pitch, 0x44, 3, kHeight, stream),
            infinirtSuccess);
  infinirtGraph_t graph = nullptr;
  ASSERT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtSuccess);
  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
  for (unsigned char fill : {0x10, 0x20}) {
    for (size_t i = 0; i < source.size(); ++i) pinned[i] = static_cast<unsigned char>(fill + i);
    ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
    ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    std::vector<unsigned char> back(kWidth * kHeight);
    ASSERT_EQ(infinirtMemcpy2D(back.data(), kWidth, device.ptr, device.pitch, kWidth, kHeight,
                               infinirtMemcpyDeviceToHost),
              infinirtSuccess);
    for (size_t i = 0; i < back.size(); ++i) {
      const unsigned char expected = i % kWidth < 3 ? 0x44 : static_cast<unsigned char>(fill + i);
      ASSERT_EQ(back[i], expected) << i;
    }
  }
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// S49: copies between the memory of two devices.

TEST_F(Conformance, S49_MemcpyPeerCopiesBetweenDevices) {
  const int other = device_count() > 1 ? 1 : 0;
  unsigned char* mine = NewDeviceMemory(kBytes);
  ASSERT_EQ(infinirtSetDevice(other), infinirtSuccess);
  unsigned char* theirs = NewDeviceMemory(kBytes);
  ASSERT_EQ(infinirtSetDevice(0), infinirtSuccess);
  ASSERT_NE(mine, nullptr);
  ASSERT_NE(theirs, nullptr);
  ASSERT_EQ(infinirtMemset(mine, 0x61, kBytes), infinirtSuccess);
  ASSERT_EQ(infinirtMemcpyPeer(theirs, other, mine, 0, kBytes), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(ReadBack(theirs, kBytes).data(), kBytes, 0x61));
  infinirtStream_t stream = NewStream();
  ASSERT_EQ(infinirtMemset(theirs, 0x62, kBytes / 2), infinirtSuccess);
  ASSERT_EQ(infinirtMemcpyPeerAsync(mine, 0, theirs, other, kBytes / 2, stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  const std::vector<unsigned char> back = ReadBack(mine, kBytes);
  EXPECT_TRUE(AllBytesAre(back.data(), kBytes / 2, 0x62));
  EXPECT_TRUE(AllBytesAre(back.data() + kBytes / 2, kBytes / 2, 0x61));

  EXPECT_EQ(infinirtMemcpyPeer(theirs, device_count(), mine, 0, kBytes),
            infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtMemcpyPeer(theirs, other, mine, -1, kBytes), infinirtErrorInvalidDevice);
  if (other != 0) {
    EXPECT_EQ(infinirtMemcpyPeer(theirs, 0, mine, 0, kBytes), infinirtErrorInvalidValue)
        << "dst is memory of device 1";
  }
  EXPECT_EQ(infinirtMemcpyPeer(theirs, other, mine, 0, 0), infinirtSuccess);
  infinirtGetLastError();
}

// ---------------------------------------------------------------------------------------------
// S51: managed memory.

TEST_F(Conformance, S51_ManagedMemoryIsUsedByTheHostAndTheDevice) {
  void* managed = nullptr;
  ASSERT_OK_OR_SKIP(infinirtMallocManaged(&managed, kBytes, infinirtMemAttachGlobal));
  ASSERT_NE(managed, nullptr);
  // Page-aligned, as NVIDIA's managed memory is (it migrates by pages).
  EXPECT_EQ(reinterpret_cast<uintptr_t>(managed) % static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)),
            0u);
  infinirtPointerAttributes attributes{};
  ASSERT_EQ(infinirtPointerGetAttributes(&attributes, static_cast<char*>(managed) + 10),
            infinirtSuccess);
  EXPECT_EQ(attributes.type, infinirtMemoryTypeManaged);
  EXPECT_EQ(attributes.hostPointer, static_cast<char*>(managed) + 10);
  EXPECT_EQ(attributes.devicePointer, static_cast<char*>(managed) + 10);
  infinirtDeviceProp prop{};
  ASSERT_EQ(infinirtGetDeviceProperties(&prop, 0), infinirtSuccess);
  int attribute = 0;  // the field is the attribute's, unknown where attributes are refused
  if (infinirtDeviceGetAttribute(&attribute, infinirtDevAttrManagedMemory, 0) !=
          infinirtErrorNotSupported ||
      !SkipsUnsupported()) {
    EXPECT_EQ(prop.managedMemory, 1) << "MallocManaged works";
  }

  // Written by the device (a memset in a stream), read by the host; written by the host, copied
  // by the device.
  infinirtStream_t stream = NewStream();
  infinirtMemLocation device{infinirtMemLocationTypeDevice, 0};
  const infinirtError_t prefetched = infinirtMemPrefetchAsync(managed, kBytes, device, 0, stream);
  EXPECT_TRUE(prefetched == infinirtSuccess ||
              (prefetched == infinirtErrorNotSupported && SkipsUnsupported()));
  ASSERT_EQ(infinirtMemsetAsync(managed, 0x71, kBytes, stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(static_cast<unsigned char*>(managed), kBytes, 0x71));
  std::memset(managed, 0x72, kBytes / 2);
  unsigned char* other = NewDeviceMemory(kBytes);
  ASSERT_EQ(infinirtMemcpy(other, managed, kBytes, infinirtMemcpyDefault), infinirtSuccess);
  const std::vector<unsigned char> back = ReadBack(other, kBytes);
  EXPECT_TRUE(AllBytesAre(back.data(), kBytes / 2, 0x72));
  EXPECT_TRUE(AllBytesAre(back.data() + kBytes / 2, kBytes / 2, 0x71));

  infinirtMemLocation host{infinirtMemLocationTypeHost, 0};
  const infinirtError_t advised =
      infinirtMemAdvise(managed, kBytes, infinirtMemAdviseSetPreferredLocation, host);
  EXPECT_TRUE(advised == infinirtSuccess ||
              (advised == infinirtErrorNotSupported && SkipsUnsupported()));
  EXPECT_EQ(infinirtFree(managed), infinirtSuccess);
  infinirtGetLastError();
}

// Advice about memory InfiniRT did not allocate (mmap'd) is taken where the device reaches pageable
// memory (infinirtDevAttrPageableMemoryAccess = 1), as NVIDIA's runtime takes it, and refused
// (InvalidValue) where it does not.
TEST_F(Conformance, S51_AdviceAboutMappedMemoryFollowsPageableMemoryAccess) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mapped = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  int pageable = 0;
  const infinirtError_t told =
      infinirtDeviceGetAttribute(&pageable, infinirtDevAttrPageableMemoryAccess, 0);
  const infinirtMemLocation device{infinirtMemLocationTypeDevice, 0};
  const infinirtError_t advised =
      infinirtMemAdvise(mapped, page, infinirtMemAdviseSetAccessedBy, device);
  if (told == infinirtSuccess && pageable == 1) {
    EXPECT_TRUE(advised == infinirtSuccess ||
                (advised == infinirtErrorNotSupported && SkipsUnsupported()))
        << infinirtGetErrorName(advised);
  } else {
    EXPECT_EQ(advised, infinirtErrorInvalidValue);
  }
  // A range that wraps around the address space is refused either way.
  EXPECT_EQ(infinirtMemAdvise(mapped, SIZE_MAX, infinirtMemAdviseSetAccessedBy, device),
            infinirtErrorInvalidValue);
  int read_mostly = 0;
  EXPECT_EQ(infinirtMemRangeGetAttribute(&read_mostly, sizeof read_mostly,
                                         infinirtMemRangeAttributeReadMostly, mapped, SIZE_MAX),
            infinirtErrorInvalidValue);
  infinirtGetLastError();
  munmap(mapped, page);
}

// infinirtMemRangeGetAttribute(s) report what MemAdvise and MemPrefetchAsync said, page by page:
// a value holds for a range only where every page of it has it.
TEST_F(Conformance, S51_RangeAttributesReportAdviceAndPrefetches) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* memory = nullptr;
  ASSERT_OK_OR_SKIP(infinirtMallocManaged(&memory, 3 * page, infinirtMemAttachGlobal));
  auto* managed = static_cast<unsigned char*>(memory);
  auto integer = [&](infinirtMemRangeAttribute attribute, const void* at, size_t count) {
    int value = 12345;
    EXPECT_EQ(infinirtMemRangeGetAttribute(&value, sizeof value, attribute, at, count),
              infinirtSuccess);
    return value;
  };
  auto accessed_by = [&](const void* at, size_t count) {
    std::vector<int> ids(3, 12345);
    EXPECT_EQ(infinirtMemRangeGetAttribute(ids.data(), ids.size() * sizeof(int),
                                           infinirtMemRangeAttributeAccessedBy, at, count),
              infinirtSuccess);
    return ids;
  };
  const std::vector<int> none(3, infinirtInvalidDeviceId);
  // Nothing said yet.
  EXPECT_EQ(integer(infinirtMemRangeAttributeReadMostly, managed, 3 * page), 0);
  EXPECT_EQ(integer(infinirtMemRangeAttributePreferredLocation, managed, 3 * page),
            infinirtInvalidDeviceId);
  EXPECT_EQ(integer(infinirtMemRangeAttributePreferredLocationType, managed, 3 * page),
            infinirtMemLocationTypeInvalid);
  EXPECT_EQ(integer(infinirtMemRangeAttributeLastPrefetchLocation, managed, 3 * page),
            infinirtInvalidDeviceId);
  EXPECT_EQ(accessed_by(managed, 3 * page), none);

  const infinirtMemLocation device{infinirtMemLocationTypeDevice, 0};
  const infinirtMemLocation host{infinirtMemLocationTypeHost, 0};
  ASSERT_OK_OR_SKIP(infinirtMemAdvise(managed, 3 * page, infinirtMemAdviseSetReadMostly, device));
  EXPECT_EQ(integer(infinirtMemRangeAttributeReadMostly, managed + page + 10, 100), 1);
  // A preferred location on the first page only: the whole range has none in common.
  ASSERT_EQ(infinirtMemAdvise(managed, 1, infinirtMemAdviseSetPreferredLocation, device),
            infinirtSuccess);
  EXPECT_EQ(integer(infinirtMemRangeAttributePreferredLocation, managed, page), 0);
  EXPECT_EQ(integer(infinirtMemRangeAttributePreferredLocationType, managed, page),
            infinirtMemLocationTypeDevice);
  EXPECT_EQ(integer(infinirtMemRangeAttributePreferredLocationId, managed, page), 0);
  EXPECT_EQ(integer(infinirtMemRangeAttributePreferredLocation, managed, 3 * page),
            infinirtInvalidDeviceId);
  ASSERT_EQ(infinirtMemAdvise(managed, 3 * page, infinirtMemAdviseSetPreferredLocation, host),
            infinirtSuccess);
  EXPECT_EQ(integer(infinirtMemRangeAttributePreferredLocation, managed, 3 * page),
            infinirtCpuDeviceId);
  EXPECT_EQ(integer(infinirtMemRangeAttributePreferredLocationType, managed, 3 * page),
            infinirtMemLocationTypeHost);
  // Accessed by device 0 everywhere, then not on the last page.
  ASSERT_EQ(infinirtMemAdvise(managed, 3 * page, infinirtMemAdviseSetAccessedBy, device),
            infinirtSuccess);
  EXPECT_EQ(accessed_by(managed, 3 * page),
            (std::vector<int>{0, infinirtInvalidDeviceId, infinirtInvalidDeviceId}));
  ASSERT_EQ(infinirtMemAdvise(managed + 2 * page, page, infinirtMemAdviseUnsetAccessedBy, device),
            infinirtSuccess);
  EXPECT_EQ(accessed_by(managed, 3 * page), none);
  EXPECT_EQ(accessed_by(managed, 2 * page)[0], 0);
  // Prefetched to the device.
  infinirtStream_t stream = NewStream();
  const infinirtError_t prefetched = infinirtMemPrefetchAsync(managed, 3 * page, device, 0, stream);
  if (prefetched == infinirtSuccess) {
    EXPECT_EQ(integer(infinirtMemRangeAttributeLastPrefetchLocation, managed, 3 * page), 0);
    EXPECT_EQ(integer(infinirtMemRangeAttributeLastPrefetchLocationType, managed, 3 * page),
              infinirtMemLocationTypeDevice);
    EXPECT_EQ(integer(infinirtMemRangeAttributeLastPrefetchLocationId, managed, 3 * page), 0);
  } else {
    EXPECT_TRUE(prefetched == infinirtErrorNotSupported && SkipsUnsupported());
    infinirtGetLastError();
  }
  // Several at once.
  int read_mostly = -1, preferred = -1;
  void* data[] = {&read_mostly, &preferred};
  size_t sizes[] = {sizeof read_mostly, sizeof preferred};
  infinirtMemRangeAttribute attributes[] = {infinirtMemRangeAttributeReadMostly,
                                            infinirtMemRangeAttributePreferredLocation};
  ASSERT_EQ(infinirtMemRangeGetAttributes(data, sizes, attributes, 2, managed, 3 * page),
            infinirtSuccess);
  EXPECT_EQ(read_mostly, 1);
  EXPECT_EQ(preferred, infinirtCpuDeviceId);

  // Refused: sizes that do not hold the value, no attribute, nothing to ask about, memory that
  // is not managed.
  int value = 0;
  int two[2] = {};
  EXPECT_EQ(infinirtMemRangeGetAttribute(two, sizeof two, infinirtMemRangeAttributeReadMostly,
                                         managed, page),
            infinirtErrorInvalidValue);
  EXPECT_EQ(
      infinirtMemRangeGetAttribute(two, 6, infinirtMemRangeAttributeAccessedBy, managed, page),
      infinirtErrorInvalidValue);
  EXPECT_EQ(
      infinirtMemRangeGetAttribute(two, 0, infinirtMemRangeAttributeAccessedBy, managed, page),
      infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemRangeGetAttribute(&value, sizeof value,
                                         static_cast<infinirtMemRangeAttribute>(9), managed, page),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemRangeGetAttribute(nullptr, sizeof value, infinirtMemRangeAttributeReadMostly,
                                         managed, page),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemRangeGetAttribute(&value, sizeof value, infinirtMemRangeAttributeReadMostly,
                                         managed, 0),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemRangeGetAttribute(&value, sizeof value, infinirtMemRangeAttributeReadMostly,
                                         managed, 4 * page),
            infinirtErrorInvalidValue)
      << "a range past the allocation";
  unsigned char* plain = NewDeviceMemory(kBytes);
  EXPECT_EQ(infinirtMemRangeGetAttribute(&value, sizeof value, infinirtMemRangeAttributeReadMostly,
                                         plain, kBytes),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemRangeGetAttributes(data, sizes, attributes, 0, managed, page),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemRangeGetAttributes(nullptr, sizes, attributes, 2, managed, page),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtFree(managed), infinirtSuccess);
  infinirtGetLastError();
}

TEST_F(Conformance, S51_BadManagedCallsAreRefused) {
  void* managed = nullptr;
  EXPECT_EQ(infinirtMallocManaged(nullptr, kBytes, infinirtMemAttachGlobal),
            infinirtErrorInvalidValue);
  // 0 bytes: Success and NULL, as NVIDIA's runtime answers.
  managed = &managed;
  EXPECT_EQ(infinirtMallocManaged(&managed, 0, infinirtMemAttachGlobal), infinirtSuccess);
  EXPECT_EQ(managed, nullptr);
  EXPECT_EQ(infinirtMallocManaged(&managed, kBytes, infinirtMemAttachSingle),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMallocManaged(&managed, kBytes, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(managed, nullptr);
  ASSERT_OK_OR_SKIP(infinirtMallocManaged(&managed, kBytes, infinirtMemAttachHost));
  unsigned char* plain = NewDeviceMemory(kBytes);
  const infinirtMemLocation device{infinirtMemLocationTypeDevice, 0};
  // Memory not from MallocManaged, a range past the allocation, a bad location, flags, advice.
  EXPECT_EQ(infinirtMemPrefetchAsync(plain, kBytes, device, 0, nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPrefetchAsync(managed, kBytes + 1, device, 0, nullptr),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPrefetchAsync(managed, kBytes, device, 1, nullptr),
            infinirtErrorInvalidValue);
  EXPECT_EQ(
      infinirtMemPrefetchAsync(managed, kBytes,
                               infinirtMemLocation{infinirtMemLocationTypeInvalid, 0}, 0, nullptr),
      infinirtErrorInvalidValue);
  EXPECT_EQ(
      infinirtMemPrefetchAsync(managed, kBytes,
                               infinirtMemLocation{infinirtMemLocationTypeDevice, 99}, 0, nullptr),
      infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtMemPrefetchAsync(nullptr, kBytes, device, 0, nullptr),
            infinirtErrorInvalidValue);
  // Nothing to prefetch or advise: InvalidValue (NVIDIA's answer).
  EXPECT_EQ(infinirtMemPrefetchAsync(managed, 0, device, 0, nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemAdvise(managed, 0, infinirtMemAdviseSetReadMostly, device),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemAdvise(managed, kBytes, static_cast<infinirtMemoryAdvise>(7), device),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemAdvise(plain, kBytes, infinirtMemAdviseSetAccessedBy, device),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtFreeHost(managed), infinirtErrorInvalidValue) << "freed with Free";
  EXPECT_EQ(infinirtFree(managed), infinirtSuccess);
  EXPECT_EQ(infinirtFree(managed), infinirtErrorInvalidValue);
  infinirtGetLastError();
}

}  // namespace
}  // namespace infinirt::conformance
