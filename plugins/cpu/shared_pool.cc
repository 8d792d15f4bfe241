#include "shared_pool.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <random>

#include "host_memory.h"

namespace infinirt::cpu {
namespace {

// Tell a pool file and its export data from anything else (arbitrary values).
constexpr uint64_t kPoolFileMagic = 0x7046'6c6f'6f50'5452;
constexpr uint64_t kExportMagic = 0x7845'6c6f'6f50'5452;

// The file's first page.
struct PoolFileHeader {
  uint64_t magic;
  uint64_t serial;
  uint64_t map_size;  // the whole file
};

// The 64 bytes of export data.
struct ExportBody {
  uint64_t magic;
  uint64_t serial;  // the pool file's
  uint64_t offset;  // of the block, in the file
  uint64_t size;
  unsigned char unused[32];
};
static_assert(sizeof(ExportBody) == sizeof(infinirtMemPoolPtrExportData),
              "export data is 64 bytes");

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

size_t HostMemory() { return static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * PageSize(); }

// Unpredictable, so that export data of one process's pool is not mistaken for another's.
uint64_t NewSerial() {
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

size_t RoundUp(size_t size, size_t to) { return (size + to - 1) / to * to; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// SharedArena

std::shared_ptr<SharedArena> SharedArena::Create(size_t capacity) {
  // A pool cannot hold more than the host's memory: a larger maxSize bounds nothing more.
  const size_t page = PageSize();
  const size_t data =
      RoundUp(capacity != 0 ? std::min(capacity, HostMemory()) : HostMemory(), page);
  const size_t map_size = page + data;
  const uint64_t serial = NewSerial();
  char name[48];
  std::snprintf(name, sizeof name, "infinirt-pool-%llx", static_cast<unsigned long long>(serial));
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  void* map = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(map_size)) == 0) {
    map = mmap(nullptr, map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  }
  if (map == MAP_FAILED) {
    close(fd);
    return nullptr;
  }
  const PoolFileHeader header{kPoolFileMagic, serial, map_size};
  std::memcpy(map, &header, sizeof header);
  return std::shared_ptr<SharedArena>(
      new SharedArena(fd, static_cast<unsigned char*>(map), map_size, serial));
}

SharedArena::SharedArena(int fd, unsigned char* map, size_t map_size, uint64_t serial)
    : fd_(fd), map_(map), map_size_(map_size), serial_(serial) {
  const size_t page = PageSize();
  free_.emplace(page, map_size - page);
}

SharedArena::~SharedArena() {
  munmap(map_, map_size_);
  close(fd_);
}

// First fit: the pool above it keeps freed blocks by size for reuse, so the arena sees few
// requests (a new block, or the pool's trimming).
void* SharedArena::Allocate(size_t size) {
  const size_t rounded = RoundUp(size == 0 ? 1 : size, kDeviceAlignment);
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < rounded) continue;
    const size_t offset = it->first;
    const size_t left = it->second - rounded;
    free_.erase(it);
    if (left != 0) free_.emplace(offset + rounded, left);
    return map_ + offset;
  }
  return nullptr;
}

void SharedArena::Free(void* block, size_t size) {
  const size_t rounded = RoundUp(size == 0 ? 1 : size, kDeviceAlignment);
  size_t offset = static_cast<size_t>(static_cast<unsigned char*>(block) - map_);
  size_t length = rounded;
  // The whole pages of the block go back to the system (reading them again gives zeros).
  const size_t page = PageSize();
  const size_t first_page = RoundUp(offset, page);
  const size_t end_page = (offset + length) / page * page;
  if (end_page > first_page) {
    fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(first_page),
              static_cast<off_t>(end_page - first_page));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && offset + length == next->first) {
    length += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == offset) {
      previous->second += length;
      return;
    }
  }
  free_.emplace_hint(next, offset, length);
}

int SharedArena::DuplicateDescriptor() const { return fcntl(fd_, F_DUPFD_CLOEXEC, 0); }

void SharedArena::Export(const void* block, size_t size, infinirtMemPoolPtrExportData* data) const {
  ExportBody body{};
  body.magic = kExportMagic;
  body.serial = serial_;
  body.offset = static_cast<uint64_t>(static_cast<const unsigned char*>(block) - map_);
  body.size = size;
  std::memcpy(data, &body, sizeof body);
}

// ---------------------------------------------------------------------------------------------
// ImportedPool

infinirtError_t ImportedPool::Open(int fd, std::shared_ptr<ImportedPool>* pool, std::string* why) {
  PoolFileHeader header{};
  struct stat status {};
  if (fstat(fd, &status) != 0) {
    *why = std::string("the handle is no open descriptor: ") + std::strerror(errno);
    return infinirtErrorInvalidValue;
  }
  if (pread(fd, &header, sizeof header, 0) != static_cast<ssize_t>(sizeof header) ||
      header.magic != kPoolFileMagic || header.map_size != static_cast<uint64_t>(status.st_size)) {
    *why = "the descriptor is not a shareable pool's";
    return infinirtErrorInvalidValue;
  }
  void* map =
      mmap(nullptr, header.map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (map == MAP_FAILED) {
    *why = std::string("the pool's file cannot be mapped: ") + std::strerror(errno);
    return infinirtErrorMemoryAllocation;
  }
  pool->reset(new ImportedPool(static_cast<unsigned char*>(map), header.map_size, header.serial));
  return infinirtSuccess;
}

ImportedPool::~ImportedPool() { munmap(map_, map_size_); }

infinirtError_t ImportedPool::Import(const infinirtMemPoolPtrExportData& data, void** pointer,
                                     size_t* size) const {
  ExportBody body;
  std::memcpy(&body, &data, sizeof body);
  const size_t page = PageSize();
  if (body.magic != kExportMagic || body.serial != serial_ || body.offset < page ||
      body.offset > map_size_ || body.size > map_size_ - body.offset) {
    return infinirtErrorInvalidValue;
  }
  *pointer = map_ + body.offset;
  *size = body.size;
  return infinirtSuccess;
}

}  // namespace infinirt::cpu
