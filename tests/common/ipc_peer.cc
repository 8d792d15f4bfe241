// The other process of the interprocess tests (ipc_peer.h says what each role does).
#include "ipc_peer.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "infinirt.h"

namespace {

using infinirt::testing::FromHex;
using infinirt::testing::HexOf;

// Ends the process with the answer's meaning when a call fails.
void Require(infinirtError_t error, const char* call) {
  if (error == infinirtSuccess) return;
  if (error == infinirtErrorNotSupported) {
    std::printf("unsupported %s\n", call);
    std::fflush(stdout);
    std::exit(infinirt::testing::kPeerUnsupported);
  }
  std::printf("failed %s: %s\n", call, infinirtGetErrorName(error));
  std::fflush(stdout);
  std::exit(1);
}
#define REQUIRE(call) Require((call), #call)

void Say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// Whether every byte is `expected`; says the first that is not.
bool AllBytesAre(const std::vector<unsigned char>& seen, int expected) {
  for (size_t i = 0; i < seen.size(); ++i) {
    if (seen[i] != expected) {
      Say("failed: byte " + std::to_string(i) + " is " + std::to_string(seen[i]) + ", not " +
          std::to_string(expected));
      return false;
    }
  }
  return true;
}

int Export(size_t bytes, int value) {
  void* memory = nullptr;
  REQUIRE(infinirtMalloc(&memory, bytes));
  REQUIRE(infinirtMemset(memory, value, bytes));
  infinirtEvent_t event = nullptr;
  REQUIRE(
      infinirtEventCreateWithFlags(&event, infinirtEventInterprocess | infinirtEventDisableTiming));
  REQUIRE(infinirtEventRecord(event, nullptr));
  infinirtIpcMemHandle_t memory_handle;
  infinirtIpcEventHandle_t event_handle;
  REQUIRE(infinirtIpcGetMemHandle(&memory_handle, memory));
  REQUIRE(infinirtIpcGetEventHandle(&event_handle, event));
  Say("handles " + HexOf(memory_handle) + " " + HexOf(event_handle));
  std::string line;
  std::getline(std::cin, line);
  unsigned char first = 0;
  REQUIRE(infinirtMemcpy(&first, memory, 1, infinirtMemcpyDeviceToHost));
  Say("final " + std::to_string(first));
  REQUIRE(infinirtEventDestroy(event));
  REQUIRE(infinirtFree(memory));
  return 0;
}

int Import(const std::string& memory_hex, const std::string& event_hex, size_t bytes,
           int expected) {
  infinirtIpcMemHandle_t memory_handle;
  infinirtIpcEventHandle_t event_handle;
  if (!FromHex(memory_hex, &memory_handle) || !FromHex(event_hex, &event_handle)) {
    Say("failed: malformed handles");
    return 1;
  }
  void* memory = nullptr;
  REQUIRE(infinirtIpcOpenMemHandle(&memory, memory_handle, infinirtIpcMemLazyEnablePeerAccess));
  infinirtEvent_t event = nullptr;
  REQUIRE(infinirtIpcOpenEventHandle(&event, event_handle));
  infinirtStream_t stream = nullptr;
  REQUIRE(infinirtStreamCreate(&stream));
  REQUIRE(infinirtStreamWaitEvent(stream, event, 0));
  Say("waiting");
  std::vector<unsigned char> seen(bytes, 0);
  REQUIRE(infinirtMemcpyAsync(seen.data(), memory, bytes, infinirtMemcpyDeviceToHost, stream));
  REQUIRE(infinirtStreamSynchronize(stream));
  if (!AllBytesAre(seen, expected)) return 1;
  REQUIRE(infinirtMemset(memory, expected + 1, bytes));
  REQUIRE(infinirtIpcCloseMemHandle(memory));
  REQUIRE(infinirtEventDestroy(event));
  REQUIRE(infinirtStreamDestroy(stream));
  Say("done");
  return 0;
}

// Imports the pool shared as descriptor `fd` (inherited) and the allocation of `data_hex`, checks
// that every byte is EXPECTED, sets them to EXPECTED + 1, frees the allocation and the pool.
int PoolImport(int fd, const std::string& data_hex, size_t bytes, int expected) {
  infinirtMemPoolPtrExportData data;
  if (!FromHex(data_hex, &data)) {
    Say("failed: malformed export data");
    return 1;
  }
  infinirtMemPool_t pool = nullptr;
  REQUIRE(infinirtMemPoolImportFromShareableHandle(
      &pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
      infinirtMemHandleTypePosixFileDescriptor, 0));
  void* memory = nullptr;
  REQUIRE(infinirtMemPoolImportPointer(&memory, pool, &data));
  std::vector<unsigned char> seen(bytes, 0);
  REQUIRE(infinirtMemcpy(seen.data(), memory, bytes, infinirtMemcpyDeviceToHost));
  if (!AllBytesAre(seen, expected)) return 1;
  REQUIRE(infinirtMemset(memory, expected + 1, bytes));
  REQUIRE(infinirtFree(memory));
  REQUIRE(infinirtMemPoolDestroy(pool));
  Say("done");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 3 && args[0] == "export") {
    return Export(std::stoul(args[1]), std::stoi(args[2]));
  }
  if (args.size() == 5 && args[0] == "import") {
    return Import(args[1], args[2], std::stoul(args[3]), std::stoi(args[4]));
  }
  if (args.size() == 5 && args[0] == "pool-import") {
    return PoolImport(std::stoi(args[1]), args[2], std::stoul(args[3]), std::stoi(args[4]));
  }
  std::fprintf(stderr,
               "usage: ipc_peer export BYTES VALUE | import MEMORY EVENT BYTES EXPECTED | "
               "pool-import FD DATA BYTES EXPECTED\n");
  return 2;
}
