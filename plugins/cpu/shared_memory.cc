#include "shared_memory.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <tuple>

#include "host_memory.h"

namespace infinirt::cpu {
namespace {

// Tell the CPU backend's handles and files from anything else (arbitrary values).
constexpr uint64_t kMemoryHandleMagic = 0x6d43'7049'5452'4931;
constexpr uint64_t kEventHandleMagic = 0x6543'7049'5452'4931;
constexpr uint64_t kMemoryFileMagic = 0x6d46'7049'5452'4931;
constexpr uint64_t kEventFileMagic = 0x6546'7049'5452'4931;

// The 64 bytes of a handle.
struct HandleBody {
  uint64_t magic;
  uint64_t serial;      // repeated in the file's first bytes
  uint64_t start_time;  // the exporter's (StartTime)
  uint64_t file_size;
  int32_t pid;  // the exporter
  int32_t fd;   // the file's descriptor in the exporter
  uint8_t unused[24];
};
static_assert(sizeof(HandleBody) == INFINIRT_IPC_HANDLE_SIZE, "a handle is 64 bytes");

// The first bytes of a shared allocation's file. Then, up to kDataOffset, the BlockHeader of
// host_memory.h (whose `raw` is the mapping's address with bit 0 set), then the memory.
struct FileHeader {
  uint64_t magic;
  uint64_t serial;
  uint64_t file_size;
  uint64_t size;  // what Malloc was asked for
  int32_t fd;     // in the exporting process
};
constexpr size_t kDataOffset = kDeviceAlignment;
static_assert(sizeof(FileHeader) + sizeof(detail::BlockHeader) <= kDataOffset,
              "the headers fit before the memory");
constexpr uintptr_t kSharedTag = 1;  // in BlockHeader::raw: a mapping, not a malloc block

std::atomic<uint64_t> g_serial{0};

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// When process `pid` started, in clock ticks since boot (field 22 of /proc/<pid>/stat); 0 when
// it is gone. With the pid it names one process, as a pid alone does not once it is reused.
uint64_t StartTime(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* file = std::fopen(path, "re");
  if (file == nullptr) return 0;
  char text[1024];
  const size_t length = std::fread(text, 1, sizeof text - 1, file);
  std::fclose(file);
  text[length] = '\0';
  // The command name (field 2, in parentheses) may hold spaces: count from its end.
  const char* at = std::strrchr(text, ')');
  if (at == nullptr) return 0;
  ++at;  // the space before field 3
  for (int field = 3; field < 22 && at != nullptr; ++field) at = std::strchr(at + 1, ' ');
  return at == nullptr ? 0 : std::strtoull(at + 1, nullptr, 10);
}

// A memfd of `size` bytes mapped shared; the descriptor in *fd. Null when it cannot be had.
void* MapNewFile(const char* what, uint64_t serial, size_t size, int* fd) {
  char name[48];
  std::snprintf(name, sizeof name, "infinirt-%s-%llu", what,
                static_cast<unsigned long long>(serial));
  const int file = memfd_create(name, MFD_CLOEXEC);
  if (file < 0) return nullptr;
  void* map = MAP_FAILED;
  if (ftruncate(file, static_cast<off_t>(size)) == 0) {
    map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
  }
  if (map == MAP_FAILED) {
    close(file);
    return nullptr;
  }
  *fd = file;
  return map;
}

HandleBody MakeHandle(uint64_t magic, uint64_t serial, uint64_t file_size, int fd) {
  HandleBody body{};
  body.magic = magic;
  body.serial = serial;
  body.start_time = StartTime(getpid());
  body.file_size = file_size;
  body.pid = static_cast<int32_t>(getpid());
  body.fd = fd;
  return body;
}

// Whether an open file begins as the CPU backend's file of this kind and serial does: a
// descriptor number the exporter reused for another file is told apart, and nothing but such a
// file is ever mapped.
bool FileMatches(int fd, uint64_t magic, uint64_t serial) {
  uint64_t head[2];
  return pread(fd, head, sizeof head, 0) == static_cast<ssize_t>(sizeof head) && head[0] == magic &&
         head[1] == serial;
}

// Maps the file a handle of another process names. `handle_magic` and `file_magic` are the
// kind's.
infinirtError_t MapExportedFile(const void* handle, uint64_t handle_magic, uint64_t file_magic,
                                HandleBody* body, void** map, std::string* why) {
  std::memcpy(body, handle, sizeof *body);
  if (body->magic != handle_magic || body->file_size == 0 || body->pid <= 0 || body->fd < 0) {
    *why = "not a handle the CPU backend made";
    return infinirtErrorInvalidValue;
  }
  if (body->pid == getpid()) {
    *why = "the handle was made in this process; it opens only in another one";
    return infinirtErrorDeviceUninitialized;
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", body->pid, body->fd);
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *why = std::string("cannot open ") + path + ": " + std::strerror(errno) +
           " (the exporting process has ended or freed it, or belongs to another user)";
    return infinirtErrorMapBufferObjectFailed;
  }
  struct stat status;
  const bool same_process = StartTime(body->pid) == body->start_time;
  const bool same_file = fstat(fd, &status) == 0 &&
                         static_cast<uint64_t>(status.st_size) == body->file_size &&
                         FileMatches(fd, file_magic, body->serial);
  void* mapped = MAP_FAILED;
  if (same_process && same_file) {
    mapped = mmap(nullptr, body->file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  close(fd);  // the mapping keeps the file
  if (mapped == MAP_FAILED) {
    *why = "the exporting process has ended, or freed what the handle names";
    return infinirtErrorMapBufferObjectFailed;
  }
  *map = mapped;
  return infinirtSuccess;
}

// Memory this process opened, by exporter and serial, and by address.
struct OpenedMemory {
  void* map;
  size_t file_size;
  int opens;
};
std::mutex g_opened_mutex;
// The exporter's pid and start time and the serial name one export.
using ExportKey = std::tuple<int32_t, uint64_t, uint64_t>;
std::map<ExportKey, OpenedMemory>& OpenedByKey() {
  static auto* opened = new std::map<ExportKey, OpenedMemory>;
  return *opened;
}
std::map<void*, ExportKey>& OpenedByAddress() {
  static auto* opened = new std::map<void*, ExportKey>;
  return *opened;
}

void* DataOf(void* map) { return static_cast<char*>(map) + kDataOffset; }
FileHeader HeaderOfMap(const void* map) {
  FileHeader header;
  std::memcpy(&header, map, sizeof header);
  return header;
}
uintptr_t RawOf(void* pointer) {
  detail::BlockHeader block;
  std::memcpy(&block, detail::HeaderOf(pointer), sizeof block);
  return reinterpret_cast<uintptr_t>(block.raw);
}
void* MapOf(void* pointer) { return reinterpret_cast<void*>(RawOf(pointer) & ~kSharedTag); }

long Futex(std::atomic<uint32_t>* word, int operation, uint32_t value,
           const struct timespec* timeout) {
  // Not FUTEX_PRIVATE_FLAG: the word is in memory other processes map.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), operation, value, timeout, nullptr,
                 0);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Memory

void* AllocateSharedMemory(size_t size) {
  const size_t page = PageSize();
  if (size > SIZE_MAX - kDataOffset - page) return nullptr;
  const size_t file_size = (kDataOffset + size + page - 1) / page * page;
  const uint64_t serial = ++g_serial;
  int fd = -1;
  void* map = MapNewFile("memory", serial, file_size, &fd);
  if (map == nullptr) return nullptr;
  const FileHeader header{kMemoryFileMagic, serial, file_size, size, fd};
  std::memcpy(map, &header, sizeof header);
  const detail::BlockHeader block{
      reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(map) | kSharedTag), size};
  void* data = DataOf(map);
  std::memcpy(detail::HeaderOf(data), &block, sizeof block);
  return data;
}

bool IsSharedMemory(void* pointer) { return (RawOf(pointer) & kSharedTag) != 0; }

void FreeSharedMemory(void* pointer) {
  void* map = MapOf(pointer);
  const FileHeader header = HeaderOfMap(map);
  munmap(map, header.file_size);
  close(header.fd);
}

void ExportSharedMemory(void* pointer, infinirtIpcMemHandle_t* handle) {
  const FileHeader header = HeaderOfMap(MapOf(pointer));
  const HandleBody body =
      MakeHandle(kMemoryHandleMagic, header.serial, header.file_size, header.fd);
  std::memcpy(handle, &body, sizeof body);
}

infinirtError_t OpenSharedMemory(const infinirtIpcMemHandle_t& handle, void** pointer, size_t* size,
                                 std::string* why) {
  HandleBody body;
  std::memcpy(&body, &handle, sizeof body);
  std::lock_guard<std::mutex> lock(g_opened_mutex);
  const ExportKey key{body.pid, body.start_time, body.serial};
  if (auto known = OpenedByKey().find(key);
      body.magic == kMemoryHandleMagic && known != OpenedByKey().end()) {
    ++known->second.opens;
    *pointer = DataOf(known->second.map);
    *size = HeaderOfMap(known->second.map).size;
    return infinirtSuccess;
  }
  void* map = nullptr;
  if (auto error =
          MapExportedFile(&handle, kMemoryHandleMagic, kMemoryFileMagic, &body, &map, why)) {
    return error;
  }
  OpenedByKey().emplace(key, OpenedMemory{map, body.file_size, 1});
  OpenedByAddress().emplace(DataOf(map), key);
  *pointer = DataOf(map);
  *size = HeaderOfMap(map).size;
  return infinirtSuccess;
}

bool CloseSharedMemory(void* pointer) {
  std::lock_guard<std::mutex> lock(g_opened_mutex);
  auto by_address = OpenedByAddress().find(pointer);
  if (by_address == OpenedByAddress().end()) return false;
  auto opened = OpenedByKey().find(by_address->second);
  if (--opened->second.opens == 0) {
    munmap(opened->second.map, opened->second.file_size);
    OpenedByKey().erase(opened);
    OpenedByAddress().erase(by_address);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Events

struct SharedEvent::Page {
  uint64_t magic;
  uint64_t serial;
  std::atomic<uint32_t> recorded{0};   // the last record's number
  std::atomic<uint32_t> completed{0};  // records up to this number are complete (a futex word)
  std::atomic<int32_t> recorder{0};    // the process that made the last record
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared counters need no lock");

SharedEvent* SharedEvent::Create() {
  const uint64_t serial = ++g_serial;
  int fd = -1;
  void* map = MapNewFile("event", serial, PageSize(), &fd);
  if (map == nullptr) return nullptr;
  Page* page = new (map) Page;
  page->magic = kEventFileMagic;
  page->serial = serial;
  return new SharedEvent(page, fd);
}

infinirtError_t SharedEvent::Open(const infinirtIpcEventHandle_t& handle, SharedEvent** event,
                                  std::string* why) {
  HandleBody body;
  void* map = nullptr;
  if (auto error = MapExportedFile(&handle, kEventHandleMagic, kEventFileMagic, &body, &map, why)) {
    return error;
  }
  if (body.file_size < sizeof(Page)) {
    munmap(map, body.file_size);
    *why = "not a handle the CPU backend made";
    return infinirtErrorInvalidValue;
  }
  auto* opened = new SharedEvent(static_cast<Page*>(map), -1);
  opened->origin_ = handle;
  *event = opened;
  return infinirtSuccess;
}

SharedEvent::~SharedEvent() {
  munmap(page_, PageSize());
  if (fd_ >= 0) close(fd_);
}

void SharedEvent::Export(infinirtIpcEventHandle_t* handle) const {
  if (fd_ < 0) {
    *handle = origin_;
    return;
  }
  const HandleBody body = MakeHandle(kEventHandleMagic, page_->serial, PageSize(), fd_);
  std::memcpy(handle, &body, sizeof body);
}

uint32_t SharedEvent::BeginRecord() {
  page_->recorder.store(static_cast<int32_t>(getpid()), std::memory_order_relaxed);
  return page_->recorded.fetch_add(1, std::memory_order_acq_rel) + 1;
}

void SharedEvent::Complete(uint32_t number) {
  uint32_t current = page_->completed.load(std::memory_order_relaxed);
  // Numbers wrap around: compare by difference. Records of several streams may complete out of
  // order; the completed number only moves forward.
  while (static_cast<int32_t>(number - current) > 0 &&
         !page_->completed.compare_exchange_weak(current, number, std::memory_order_release)) {
  }
  Futex(&page_->completed, FUTEX_WAKE, INT_MAX, nullptr);
}

uint32_t SharedEvent::LastRecord() const { return page_->recorded.load(std::memory_order_acquire); }

bool SharedEvent::Reached(uint32_t number) const {
  const uint32_t completed = page_->completed.load(std::memory_order_acquire);
  return static_cast<int32_t>(completed - number) >= 0;
}

bool SharedEvent::WaitFor(uint32_t number) const {
  const struct timespec kCheckEvery = {0, 100 * 1000 * 1000};
  for (;;) {
    const uint32_t completed = page_->completed.load(std::memory_order_acquire);
    if (static_cast<int32_t>(completed - number) >= 0) return true;
    if (Futex(&page_->completed, FUTEX_WAIT, completed, &kCheckEvery) != 0 && errno == ETIMEDOUT) {
      // A process that ended never completes its record: stop waiting for it.
      const pid_t recorder = page_->recorder.load(std::memory_order_relaxed);
      if (recorder != getpid() && kill(recorder, 0) != 0 && errno == ESRCH) return false;
    }
  }
}

}  // namespace infinirt::cpu
