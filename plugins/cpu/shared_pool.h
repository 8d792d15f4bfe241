// Memory pools whose memory other processes of the host open (infinirtMemPoolCreate with
// props->handleTypes = infinirtMemHandleTypePosixFileDescriptor), the CPU backend's way.
//
// Such a pool carves its blocks out of one file in RAM (a memfd), mapped shared: the exporting
// process hands the program a descriptor of that file (MemPoolExportToShareableHandle), which
// the program passes to another process by any means (a Unix socket, inheritance); that
// process maps the whole file (MemPoolImportFromShareableHandle) and finds an allocation in it
// by the export data (MemPoolExportPointer: the file's serial number, the allocation's offset
// and size). The file is sparse: pages exist only once written, and a freed block's pages go
// back to the system, so its size (the pool's maxSize, else the host's memory) costs only
// address space.
#ifndef INFINIRT_PLUGINS_CPU_SHARED_POOL_H_
#define INFINIRT_PLUGINS_CPU_SHARED_POOL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "infinirt.h"

namespace infinirt::cpu {

// The exporting side: the file a shareable pool's blocks come from.
class SharedArena {
 public:
  // An arena of `capacity` bytes (0: the host's memory); null when it cannot be had.
  static std::shared_ptr<SharedArena> Create(size_t capacity);
  ~SharedArena();
  SharedArena(const SharedArena&) = delete;
  SharedArena& operator=(const SharedArena&) = delete;

  // A block of `size` bytes, aligned as device memory; null when the arena is full.
  void* Allocate(size_t size);
  // Gives a block back; its pages go back to the system.
  void Free(void* block, size_t size);

  // A new descriptor of the file, for another process (the caller's to close).
  int DuplicateDescriptor() const;
  // The export data of a block of `size` bytes at `block`.
  void Export(const void* block, size_t size, infinirtMemPoolPtrExportData* data) const;

 private:
  SharedArena(int fd, unsigned char* map, size_t map_size, uint64_t serial);

  const int fd_;
  unsigned char* const map_;  // the whole file: a header page, then the blocks
  const size_t map_size_;
  const uint64_t serial_;
  std::mutex mutex_;
  std::map<size_t, size_t> free_;  // offset -> size, of the data area; neighbours merged
};

// The importing side: another process's pool file, mapped whole, and the allocations imported
// from it.
class ImportedPool {
 public:
  // Maps the pool file `fd` (not taken: the caller keeps and closes it). *why says what went
  // wrong when the answer is not success.
  static infinirtError_t Open(int fd, std::shared_ptr<ImportedPool>* pool, std::string* why);
  ~ImportedPool();
  ImportedPool(const ImportedPool&) = delete;
  ImportedPool& operator=(const ImportedPool&) = delete;

  // The allocation the export data names; InvalidValue for data of another pool, or not
  // export data at all.
  infinirtError_t Import(const infinirtMemPoolPtrExportData& data, void** pointer,
                         size_t* size) const;

 private:
  ImportedPool(unsigned char* map, size_t map_size, uint64_t serial)
      : map_(map), map_size_(map_size), serial_(serial) {}

  unsigned char* const map_;
  const size_t map_size_;
  const uint64_t serial_;
};

}  // namespace infinirt::cpu

#endif  // INFINIRT_PLUGINS_CPU_SHARED_POOL_H_
