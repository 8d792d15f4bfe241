// S62: device memory and events shared with another process of the host by their IPC handles.
// The other process is tests/common/ipc_peer.cc, on the same backend as this one.
#include <sstream>
#include <string>
#include <vector>

#include "conformance.h"
#include "ipc_peer.h"

namespace infinirt::conformance {
namespace {

using infinirt::testing::FromHex;
using infinirt::testing::HexOf;
using infinirt::testing::kPeerUnsupported;
using infinirt::testing::Peer;

constexpr unsigned int kInterprocess = infinirtEventInterprocess | infinirtEventDisableTiming;

// A host function that holds its stream until the peer, once started, says what it did (that its
// stream waits for the event); bounded.
struct PeerSignal {
  std::atomic<Peer*> peer{nullptr};
  std::string line;
};
void AwaitPeerLine(void* signal) {
  auto* s = static_cast<PeerSignal*>(signal);
  if (!WaitUntil([s] { return s->peer.load() != nullptr; })) return;
  s->line = s->peer.load()->ReadLine();
}

// Whether the peer said the backend does not support a call it made ("unsupported <call>").
bool PeerUnsupported(const std::string& line) { return line.rfind("unsupported ", 0) == 0; }

// The words of a line.
std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

TEST_F(Conformance, S62_AnotherProcessOpensTheMemoryAndWaitsForTheEvent) {
  unsigned char* memory = NewDeviceMemory(kBytes);
  ASSERT_NE(memory, nullptr);
  ASSERT_EQ(infinirtMemset(memory, 0, kBytes), infinirtSuccess);
  infinirtIpcMemHandle_t memory_handle;
  ASSERT_OK_OR_SKIP(infinirtIpcGetMemHandle(&memory_handle, memory));
  infinirtEvent_t event = NewEvent(kInterprocess);
  infinirtIpcEventHandle_t event_handle;
  ASSERT_OK_OR_SKIP(infinirtIpcGetEventHandle(&event_handle, event));

  // This stream writes 7 and records the event, held until the peer's stream waits for the
  // record, so that the peer sees 7 only if its wait held. The peer starts once the record is
  // made (a wait for an event never recorded waits for nothing).
  infinirtStream_t stream = NewStream();
  PeerSignal& signal = Keep<PeerSignal>();
  ASSERT_EQ(infinirtLaunchHostFunc(stream, AwaitPeerLine, &signal), infinirtSuccess);
  ASSERT_EQ(infinirtMemsetAsync(memory, 7, kBytes, stream), infinirtSuccess);
  ASSERT_EQ(infinirtEventRecord(event, stream), infinirtSuccess);
  Peer& peer = Keep<Peer>(std::vector<std::string>{
      "import", HexOf(memory_handle), HexOf(event_handle), std::to_string(kBytes), "7"});
  signal.peer.store(&peer);
  ASSERT_TRUE(peer.running());
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  if (PeerUnsupported(signal.line)) {
    ASSERT_EQ(peer.Wait(), kPeerUnsupported);
    if (SkipsUnsupported())
      GTEST_SKIP() << "not supported by " << BackendName() << ": " << signal.line;
  }
  ASSERT_EQ(signal.line, "waiting");
  EXPECT_EQ(peer.ReadLine(), "done");
  EXPECT_EQ(peer.Wait(), 0);
  // What the peer wrote is here.
  EXPECT_TRUE(AllBytesAre(ReadBack(memory, kBytes).data(), kBytes, 8));
}

TEST_F(Conformance, S62_MemoryOfAnotherProcessOpensHere) {
  Peer peer({"export", std::to_string(kBytes), "9"});
  ASSERT_TRUE(peer.running());
  const std::string line = peer.ReadLine();
  if (PeerUnsupported(line)) {
    ASSERT_EQ(peer.Wait(), kPeerUnsupported);
    if (SkipsUnsupported()) GTEST_SKIP() << "not supported by " << BackendName() << ": " << line;
  }
  const std::vector<std::string> words = Words(line);
  ASSERT_EQ(words.size(), 3u) << "the peer did not export";
  ASSERT_EQ(words[0], "handles");
  infinirtIpcMemHandle_t memory_handle;
  infinirtIpcEventHandle_t event_handle;
  ASSERT_TRUE(FromHex(words[1], &memory_handle) && FromHex(words[2], &event_handle));

  void* opened = nullptr;
  ASSERT_OK_OR_SKIP(
      infinirtIpcOpenMemHandle(&opened, memory_handle, infinirtIpcMemLazyEnablePeerAccess));
  // Opened again: the same address, closed once per open.
  void* again = nullptr;
  ASSERT_EQ(infinirtIpcOpenMemHandle(&again, memory_handle, 0), infinirtSuccess);
  EXPECT_EQ(again, opened);
  infinirtPointerAttributes attributes{};
  ASSERT_EQ(infinirtPointerGetAttributes(&attributes, opened), infinirtSuccess);
  EXPECT_EQ(attributes.type, infinirtMemoryTypeDevice);
  EXPECT_EQ(infinirtFree(opened), infinirtErrorInvalidValue) << "opened memory is not freed";
  infinirtGetLastError();

  infinirtEvent_t event = nullptr;
  ASSERT_EQ(infinirtIpcOpenEventHandle(&event, event_handle), infinirtSuccess);
  infinirtStream_t stream = NewStream();
  ASSERT_EQ(infinirtStreamWaitEvent(stream, event, 0), infinirtSuccess);
  std::vector<unsigned char>& seen = NewPageableMemory(kBytes);
  ASSERT_EQ(infinirtMemcpyAsync(seen.data(), opened, kBytes, infinirtMemcpyDefault, stream),
            infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(seen.data(), kBytes, 9));
  EXPECT_EQ(infinirtEventQuery(event), infinirtSuccess);
  ASSERT_EQ(infinirtMemset(static_cast<unsigned char*>(opened) + 0, 10, kBytes), infinirtSuccess);

  EXPECT_EQ(infinirtIpcCloseMemHandle(opened), infinirtSuccess);
  EXPECT_EQ(infinirtIpcCloseMemHandle(again), infinirtSuccess);
  EXPECT_EQ(infinirtIpcCloseMemHandle(opened), infinirtErrorInvalidValue) << "closed twice";
  EXPECT_EQ(infinirtEventDestroy(event), infinirtSuccess);
  infinirtGetLastError();
  peer.WriteLine("exit");
  EXPECT_EQ(peer.ReadLine(), "final 10") << "the peer sees what this process wrote";
  EXPECT_EQ(peer.Wait(), 0);
}

TEST_F(Conformance, S62_BadMemoryHandlesAreRefused) {
  unsigned char* memory = NewDeviceMemory(kBytes);
  ASSERT_NE(memory, nullptr);
  infinirtIpcMemHandle_t handle;
  ASSERT_OK_OR_SKIP(infinirtIpcGetMemHandle(&handle, memory));
  EXPECT_EQ(infinirtIpcGetMemHandle(nullptr, memory), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtIpcGetMemHandle(&handle, nullptr), infinirtErrorInvalidValue);
  unsigned char* pinned = NewPinnedMemory(kBytes);
  EXPECT_EQ(infinirtIpcGetMemHandle(&handle, pinned), infinirtErrorInvalidValue);
  std::vector<unsigned char> pageable(kBytes);
  EXPECT_EQ(infinirtIpcGetMemHandle(&handle, pageable.data()), infinirtErrorInvalidValue);
  // Flags are checked before anything is opened.
  void* opened = nullptr;
  EXPECT_EQ(infinirtIpcOpenMemHandle(&opened, handle, 0x2), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtIpcOpenMemHandle(nullptr, handle, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtIpcCloseMemHandle(memory), infinirtErrorInvalidValue) << "never opened";
  EXPECT_EQ(infinirtIpcCloseMemHandle(nullptr), infinirtErrorInvalidValue);

  // Opened only in another process; bytes nobody made.
  const infinirtError_t own =
      infinirtIpcOpenMemHandle(&opened, handle, infinirtIpcMemLazyEnablePeerAccess);
  if (own == infinirtErrorNotSupported && SkipsUnsupported()) {
    GTEST_SKIP() << "not supported by " << BackendName() << ": infinirtIpcOpenMemHandle";
  }
  EXPECT_EQ(own, infinirtErrorDeviceUninitialized);
  infinirtIpcMemHandle_t zeros{};
  EXPECT_EQ(infinirtIpcOpenMemHandle(&opened, zeros, 0), infinirtErrorInvalidValue);
  infinirtGetLastError();
}

TEST_F(Conformance, S62_BadEventHandlesAreRefused) {
  // Only interprocess events have handles.
  infinirtEvent_t shared = nullptr;
  ASSERT_OK_OR_SKIP(infinirtEventCreateWithFlags(&shared, kInterprocess));
  infinirtIpcEventHandle_t event_handle;
  const infinirtError_t exported = infinirtIpcGetEventHandle(&event_handle, shared);
  if (exported != infinirtSuccess) infinirtEventDestroy(shared);
  if (exported == infinirtErrorNotSupported && SkipsUnsupported()) {
    GTEST_SKIP() << "not supported by " << BackendName() << ": infinirtIpcGetEventHandle";
  }
  ASSERT_EQ(exported, infinirtSuccess);
  infinirtEvent_t plain = NewEvent(infinirtEventDisableTiming);
  EXPECT_EQ(infinirtIpcGetEventHandle(&event_handle, plain), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtIpcGetEventHandle(nullptr, shared), infinirtErrorInvalidValue);
  infinirtEvent_t opened_event = nullptr;
  EXPECT_EQ(infinirtIpcOpenEventHandle(&opened_event, event_handle),
            infinirtErrorDeviceUninitialized);
  EXPECT_EQ(infinirtIpcOpenEventHandle(nullptr, event_handle), infinirtErrorInvalidValue);
  infinirtIpcEventHandle_t event_zeros{};
  EXPECT_EQ(infinirtIpcOpenEventHandle(&opened_event, event_zeros), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtEventDestroy(shared), infinirtSuccess);
  EXPECT_EQ(infinirtIpcGetEventHandle(&event_handle, shared), infinirtErrorInvalidResourceHandle);
  infinirtGetLastError();
}

// S63: a pool made with a POSIX file descriptor handle type is shared with another process: the
// pool as a descriptor (passed here by inheritance), each allocation as 64 bytes of export data.
infinirtMemPoolProps ShareablePoolProps() {
  infinirtMemPoolProps props{};
  props.allocType = infinirtMemAllocationTypePinned;
  props.handleTypes = infinirtMemHandleTypePosixFileDescriptor;
  props.location = {infinirtMemLocationTypeDevice, 0};
  return props;
}

// A shareable pool with one allocation of kBytes, all `value`, exported: the pool as a
// descriptor, the allocation as its export data. Released (memory, pool, descriptor) with the
// object.
struct SharedAllocation {
  infinirtStream_t stream = nullptr;
  infinirtMemPool_t pool = nullptr;
  void* memory = nullptr;
  int fd = -1;
  infinirtMemPoolPtrExportData data{};

  // The first failing call's answer (NotSupported where the backend shares no pools).
  infinirtError_t Make(infinirtStream_t on, unsigned char value) {
    stream = on;
    const infinirtMemPoolProps props = ShareablePoolProps();
    infinirtError_t e = infinirtMemPoolCreate(&pool, &props);
    if (e == infinirtSuccess) e = infinirtMallocFromPoolAsync(&memory, kBytes, pool, stream);
    if (e == infinirtSuccess) e = infinirtMemsetAsync(memory, value, kBytes, stream);
    if (e == infinirtSuccess) e = infinirtStreamSynchronize(stream);
    if (e == infinirtSuccess) {
      e = infinirtMemPoolExportToShareableHandle(&fd, pool,
                                                 infinirtMemHandleTypePosixFileDescriptor, 0);
    }
    if (e == infinirtSuccess) e = infinirtMemPoolExportPointer(&data, memory);
    return e;
  }
  ~SharedAllocation() {
    if (memory != nullptr) {
      EXPECT_EQ(infinirtFreeAsync(memory, stream), infinirtSuccess);
      EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    }
    if (pool != nullptr) {
      EXPECT_EQ(infinirtMemPoolDestroy(pool), infinirtSuccess);
    }
    if (fd >= 0) close(fd);
  }
};

TEST_F(Conformance, S63_AnotherProcessImportsAnAllocationOfASharedPool) {
  SharedAllocation shared;
  ASSERT_OK_OR_SKIP(shared.Make(NewStream(), 21));
  // The peer inherits a copy of the descriptor that is not closed on exec.
  const int inherited = fcntl(shared.fd, F_DUPFD, 0);
  ASSERT_GE(inherited, 0);
  {
    Peer peer({"pool-import", std::to_string(inherited), HexOf(shared.data),
               std::to_string(kBytes), "21"});
    close(inherited);
    ASSERT_TRUE(peer.running());
    const std::string line = peer.ReadLine();
    EXPECT_EQ(line, "done");
    EXPECT_EQ(peer.Wait(), 0) << line;
  }
  EXPECT_TRUE(AllBytesAre(ReadBack(shared.memory, kBytes).data(), kBytes, 22))
      << "this process sees what the other wrote";
}

// Within one process too: the imported allocation is the same memory at another address, freed
// with infinirtFree; an imported pool makes no allocations.
TEST_F(Conformance, S63_ImportedPoolsImportAllocationsOnly) {
  SharedAllocation shared;
  ASSERT_OK_OR_SKIP(shared.Make(NewStream(), 5));
  infinirtMemPool_t imported = nullptr;
  ASSERT_EQ(infinirtMemPoolImportFromShareableHandle(
                &imported, reinterpret_cast<void*>(static_cast<intptr_t>(shared.fd)),
                infinirtMemHandleTypePosixFileDescriptor, 0),
            infinirtSuccess);
  close(shared.fd);  // the imported pool keeps what it needs
  shared.fd = -1;
  void* opened = nullptr;
  ASSERT_EQ(infinirtMemPoolImportPointer(&opened, imported, &shared.data), infinirtSuccess);
  EXPECT_NE(opened, shared.memory);
  EXPECT_TRUE(AllBytesAre(ReadBack(opened, kBytes).data(), kBytes, 5));
  ASSERT_EQ(infinirtMemset(opened, 6, kBytes), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(ReadBack(shared.memory, kBytes).data(), kBytes, 6));
  void* more = nullptr;
  EXPECT_EQ(infinirtMallocFromPoolAsync(&more, kBytes, imported, shared.stream),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtDeviceSetMemPool(0, imported), infinirtErrorInvalidValue);
  int fd = -1;
  EXPECT_EQ(infinirtMemPoolExportToShareableHandle(&fd, imported,
                                                   infinirtMemHandleTypePosixFileDescriptor, 0),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtFree(opened), infinirtSuccess);
  EXPECT_EQ(infinirtMemPoolDestroy(imported), infinirtSuccess);
  infinirtGetLastError();
}

TEST_F(Conformance, S63_BadPoolSharingCallsAreRefused) {
  const infinirtMemPoolProps shareable = ShareablePoolProps();
  infinirtMemPool_t pool = nullptr;
  ASSERT_OK_OR_SKIP(infinirtMemPoolCreate(&pool, &shareable));
  int fd = -1;
  // Handle types that are not POSIX descriptors are not supported; unknown ones are refused.
  infinirtMemPoolProps props = ShareablePoolProps();
  infinirtMemPool_t made = nullptr;
  props.handleTypes = infinirtMemHandleTypeFabric;
  EXPECT_EQ(infinirtMemPoolCreate(&made, &props), infinirtErrorNotSupported);
  EXPECT_EQ(infinirtMemPoolExportToShareableHandle(&fd, pool, infinirtMemHandleTypeWin32, 0),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolExportToShareableHandle(nullptr, pool,
                                                   infinirtMemHandleTypePosixFileDescriptor, 0),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolExportToShareableHandle(&fd, pool,
                                                   infinirtMemHandleTypePosixFileDescriptor, 1),
            infinirtErrorInvalidValue);
  // A pool made without a handle type, and a device's default pool, are not shareable.
  props = ShareablePoolProps();
  props.handleTypes = infinirtMemHandleTypeNone;
  ASSERT_EQ(infinirtMemPoolCreate(&made, &props), infinirtSuccess);
  EXPECT_EQ(infinirtMemPoolExportToShareableHandle(&fd, made,
                                                   infinirtMemHandleTypePosixFileDescriptor, 0),
            infinirtErrorInvalidValue);
  infinirtMemPool_t default_pool = nullptr;
  ASSERT_EQ(infinirtDeviceGetDefaultMemPool(&default_pool, 0), infinirtSuccess);
  EXPECT_EQ(infinirtMemPoolExportToShareableHandle(&fd, default_pool,
                                                   infinirtMemHandleTypePosixFileDescriptor, 0),
            infinirtErrorInvalidValue);
  // Export data of memory that is not a shareable pool's; a descriptor that is not a pool's.
  infinirtStream_t stream = NewStream();
  void* plain = nullptr;
  ASSERT_EQ(infinirtMallocFromPoolAsync(&plain, kBytes, made, stream), infinirtSuccess);
  infinirtMemPoolPtrExportData data{};
  EXPECT_EQ(infinirtMemPoolExportPointer(&data, plain), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolExportPointer(&data, NewDeviceMemory(kBytes)),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolExportPointer(nullptr, plain), infinirtErrorInvalidValue);
  infinirtMemPool_t imported = nullptr;
  EXPECT_EQ(
      infinirtMemPoolImportFromShareableHandle(&imported, reinterpret_cast<void*>(intptr_t{0}),
                                               infinirtMemHandleTypePosixFileDescriptor, 0),
      infinirtErrorInvalidValue)
      << "standard input is no pool";
  EXPECT_EQ(
      infinirtMemPoolImportFromShareableHandle(&imported, reinterpret_cast<void*>(intptr_t{-1}),
                                               infinirtMemHandleTypePosixFileDescriptor, 0),
      infinirtErrorInvalidValue);
  EXPECT_EQ(imported, nullptr);
  // Export data that names nothing of the imported pool; a pool that was not imported.
  ASSERT_EQ(infinirtMemPoolExportToShareableHandle(&fd, pool,
                                                   infinirtMemHandleTypePosixFileDescriptor, 0),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemPoolImportFromShareableHandle(
                &imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                infinirtMemHandleTypePosixFileDescriptor, 0),
            infinirtSuccess);
  close(fd);
  void* opened = nullptr;
  infinirtMemPoolPtrExportData zeros{};
  EXPECT_EQ(infinirtMemPoolImportPointer(&opened, imported, &zeros), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolImportPointer(&opened, pool, &zeros), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolImportPointer(nullptr, imported, &zeros), infinirtErrorInvalidValue);
  EXPECT_EQ(opened, nullptr);
  EXPECT_EQ(infinirtMemPoolDestroy(imported), infinirtSuccess);
  ASSERT_EQ(infinirtFreeAsync(plain, stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(infinirtMemPoolDestroy(made), infinirtSuccess);
  EXPECT_EQ(infinirtMemPoolDestroy(pool), infinirtSuccess);
  infinirtGetLastError();
}

}  // namespace
}  // namespace infinirt::conformance
