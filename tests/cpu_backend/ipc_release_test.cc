// The CPU backend's interprocess sharing below what CUDA promises: memory is shareable only when
// the config says so (INFINIRT_CPU_SHAREABLE_MEMORY, CTest runs this with 1 and with 0), each
// shareable allocation holds one descriptor until Free, an opened allocation is unmapped at its
// last close, memory stays readable after its exporter ends, and a handle of memory freed or of
// a process ended no longer opens. The other process is tests/common/ipc_peer.cc.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "infinirt.h"
#include "ipc_peer.h"
#include "test_support.h"

namespace infinirt::testing {
namespace {

constexpr size_t kBytes = 8192;

bool Shareable() {
  const char* value = std::getenv("INFINIRT_CPU_SHAREABLE_MEMORY");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

// This process's descriptors of the CPU backend's shared memory files.
int MemoryDescriptors() {
  int count = 0;
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return -1;
  while (dirent* entry = readdir(fds)) {
    char target[256] = {};
    const std::string path = std::string("/proc/self/fd/") + entry->d_name;
    if (readlink(path.c_str(), target, sizeof target - 1) > 0 &&
        std::strstr(target, "memfd:infinirt-memory-") != nullptr) {
      ++count;
    }
  }
  closedir(fds);
  return count;
}

// This process's mappings of such files.
int MemoryMappings() {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("memfd:infinirt-memory-") != std::string::npos) ++count;
  }
  return count;
}

struct Exported {
  infinirtIpcMemHandle_t memory;
  infinirtIpcEventHandle_t event;
};

// Reads the handles an exporting peer printed; false when it printed none.
bool StartExporter(Peer& peer, Exported* handles) {
  std::istringstream words(peer.ReadLine());
  std::string word, memory, event;
  words >> word >> memory >> event;
  return word == "handles" && FromHex(memory, &handles->memory) && FromHex(event, &handles->event);
}

class CpuIpc : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(infinirtSetDevice(0)); }
  void TearDown() override { infinirtGetLastError(); }
};

TEST_F(CpuIpc, MallocGivesShareableMemoryOnlyWhenConfigured) {
  void* memory = nullptr;
  const int before = MemoryDescriptors();
  ASSERT_OK(infinirtMalloc(&memory, kBytes));
  infinirtIpcMemHandle_t handle;
  if (Shareable()) {
    EXPECT_EQ(MemoryDescriptors(), before + 1) << "one descriptor per shareable allocation";
    EXPECT_OK(infinirtIpcGetMemHandle(&handle, memory));
    // An interior address stands for its allocation.
    infinirtIpcMemHandle_t interior;
    EXPECT_OK(infinirtIpcGetMemHandle(&interior, static_cast<char*>(memory) + 100));
    EXPECT_EQ(std::memcmp(&handle, &interior, sizeof handle), 0);
  } else {
    EXPECT_EQ(MemoryDescriptors(), before);
    EXPECT_EQ(infinirtIpcGetMemHandle(&handle, memory), infinirtErrorNotSupported);
  }
  ASSERT_OK(infinirtFree(memory));
  EXPECT_EQ(MemoryDescriptors(), before) << "Free gives the descriptor back";
}

TEST_F(CpuIpc, TheLastCloseUnmaps) {
  if (!Shareable()) GTEST_SKIP() << "runs with INFINIRT_CPU_SHAREABLE_MEMORY=1";
  Peer peer({"export", std::to_string(kBytes), "9"});
  Exported handles;
  ASSERT_TRUE(peer.running() && StartExporter(peer, &handles));
  const int before = MemoryMappings();
  void* first = nullptr;
  void* second = nullptr;
  ASSERT_OK(infinirtIpcOpenMemHandle(&first, handles.memory, 0));
  ASSERT_OK(infinirtIpcOpenMemHandle(&second, handles.memory, 0));
  EXPECT_EQ(first, second);
  EXPECT_EQ(MemoryMappings(), before + 1) << "a handle opened twice is mapped once";
  ASSERT_OK(infinirtIpcCloseMemHandle(first));
  EXPECT_EQ(MemoryMappings(), before + 1) << "still open once";
  ASSERT_OK(infinirtIpcCloseMemHandle(second));
  EXPECT_EQ(MemoryMappings(), before);
  peer.WriteLine("exit");
  EXPECT_EQ(peer.ReadLine(), "final 9");
  EXPECT_EQ(peer.Wait(), 0);
}

TEST_F(CpuIpc, OpenedMemoryOutlivesItsExporter) {
  if (!Shareable()) GTEST_SKIP() << "runs with INFINIRT_CPU_SHAREABLE_MEMORY=1";
  Peer peer({"export", std::to_string(kBytes), "9"});
  Exported handles;
  ASSERT_TRUE(peer.running() && StartExporter(peer, &handles));
  void* opened = nullptr;
  ASSERT_OK(infinirtIpcOpenMemHandle(&opened, handles.memory, 0));
  peer.WriteLine("exit");
  EXPECT_EQ(peer.ReadLine(), "final 9");
  ASSERT_EQ(peer.Wait(), 0);  // freed and ended
  std::vector<unsigned char> seen(kBytes, 0);
  ASSERT_OK(infinirtMemcpy(seen.data(), opened, kBytes, infinirtMemcpyDeviceToHost));
  EXPECT_EQ(seen, std::vector<unsigned char>(kBytes, 9));
  const int mapped = MemoryMappings();
  ASSERT_OK(infinirtIpcCloseMemHandle(opened));
  EXPECT_EQ(MemoryMappings(), mapped - 1);
}

TEST_F(CpuIpc, HandlesOfAnEndedProcessDoNotOpen) {
  if (!Shareable()) GTEST_SKIP() << "runs with INFINIRT_CPU_SHAREABLE_MEMORY=1";
  Exported handles;
  {
    Peer peer({"export", std::to_string(kBytes), "9"});
    ASSERT_TRUE(peer.running() && StartExporter(peer, &handles));
    peer.WriteLine("exit");
    EXPECT_EQ(peer.ReadLine(), "final 9");
    ASSERT_EQ(peer.Wait(), 0);
  }
  void* opened = nullptr;
  EXPECT_EQ(infinirtIpcOpenMemHandle(&opened, handles.memory, 0),
            infinirtErrorMapBufferObjectFailed);
  infinirtEvent_t event = nullptr;
  EXPECT_EQ(infinirtIpcOpenEventHandle(&event, handles.event), infinirtErrorMapBufferObjectFailed);
}

// An event opened from another process is exported again by the handle it was opened from, so a
// third process opens the same event.
TEST_F(CpuIpc, AnOpenedEventExportsTheHandleItWasOpenedFrom) {
  Peer peer({"export", std::to_string(kBytes), "9"});
  Exported handles;
  ASSERT_TRUE(peer.running() && StartExporter(peer, &handles));
  infinirtEvent_t event = nullptr;
  ASSERT_OK(infinirtIpcOpenEventHandle(&event, handles.event));
  infinirtIpcEventHandle_t again;
  ASSERT_OK(infinirtIpcGetEventHandle(&again, event));
  EXPECT_EQ(std::memcmp(&again, &handles.event, sizeof again), 0);
  ASSERT_OK(infinirtEventDestroy(event));
  peer.WriteLine("exit");
  EXPECT_EQ(peer.ReadLine(), "final 9");
  EXPECT_EQ(peer.Wait(), 0);
}

// A handle whose descriptor number now names another file of the exporter (its memory freed,
// another allocated) does not open the other file.
TEST_F(CpuIpc, AHandleOfFreedMemoryDoesNotOpenItsSuccessor) {
  if (!Shareable()) GTEST_SKIP() << "runs with INFINIRT_CPU_SHAREABLE_MEMORY=1";
  // This process exports; a handle is only ever opened in another one, so the test forges what
  // another process would see: the same handle after the memory is freed and its descriptor
  // number reused. Opening it here is refused before the file is looked at, so the check runs
  // in the peer's role: the peer imports.
  void* memory = nullptr;
  ASSERT_OK(infinirtMalloc(&memory, kBytes));
  infinirtIpcMemHandle_t handle;
  ASSERT_OK(infinirtIpcGetMemHandle(&handle, memory));
  ASSERT_OK(infinirtFree(memory));
  void* successor = nullptr;
  ASSERT_OK(infinirtMalloc(&successor, kBytes));  // takes the freed descriptor number
  infinirtEvent_t event = nullptr;
  ASSERT_OK(
      infinirtEventCreateWithFlags(&event, infinirtEventInterprocess | infinirtEventDisableTiming));
  infinirtIpcEventHandle_t event_handle;
  ASSERT_OK(infinirtIpcGetEventHandle(&event_handle, event));
  Peer peer({"import", HexOf(handle), HexOf(event_handle), std::to_string(kBytes), "0"});
  ASSERT_TRUE(peer.running());
  EXPECT_EQ(peer.ReadLine().rfind("failed infinirtIpcOpenMemHandle", 0), 0u);
  EXPECT_EQ(peer.Wait(), 1);
  ASSERT_OK(infinirtEventDestroy(event));
  ASSERT_OK(infinirtFree(successor));
}

}  // namespace
}  // namespace infinirt::testing
