// What the CPU backend shares with the other processes of its host (infinirtIpc*).
//
// Memory. One process maps another's memory only through a file both can open, so shareable
// device memory is a memfd (a file in RAM with no name in the file system): with
// plugins.cpu.shareable_memory (INFINIRT_CPU_SHAREABLE_MEMORY=1), Malloc gives each allocation a
// memfd of its own, mapped shared, and keeps its descriptor open until Free. A handle names the
// exporting process, the time it started (a pid the system reused is told apart), the
// descriptor, and a serial number the file's first bytes repeat (a descriptor number reused for
// another file is told apart). The opening process opens /proc/<pid>/fd/<n> (Linux lets a
// process of the same user open it), maps the file and closes its descriptor.
//
// What that costs, and why it is not the default: a descriptor per live allocation (the
// process's descriptor limit bounds them; past it, Malloc gives unshared memory), three system
// calls more per Malloc and two per Free, whole pages (one byte takes 4 KiB), and a child made
// with fork() shares the memory instead of getting a copy.
//
// Events. An interprocess event's state is a shared page (a memfd of its own): how many records
// were made and up to which one they are complete, in every process that has the event. A
// record takes the next number and, when its stream reaches it, raises the completed number to
// it; a wait or a query compares the completed number with that of the last record made before
// it. A stream that waits for a record another process made holds a worker thread while it
// waits (a futex on the shared page); waits for records of this process wait as any event's.
#ifndef INFINIRT_PLUGINS_CPU_SHARED_MEMORY_H_
#define INFINIRT_PLUGINS_CPU_SHARED_MEMORY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "infinirt.h"

namespace infinirt::cpu {

// ---- memory

// Device memory in a memfd of its own, aligned as AllocateDeviceMemory's (host_memory.h, whose
// DeviceMemorySize it answers too); null when it cannot be had. Freed with FreeSharedMemory.
void* AllocateSharedMemory(size_t size);
// Whether AllocateSharedMemory gave this address (or IpcOpenMemHandle mapped it).
bool IsSharedMemory(void* pointer);
void FreeSharedMemory(void* pointer);

// The handle of memory AllocateSharedMemory gave.
void ExportSharedMemory(void* pointer, infinirtIpcMemHandle_t* handle);

// Maps memory another process exported; opening one handle again gives the same address.
// *why says what went wrong when the answer is not success.
infinirtError_t OpenSharedMemory(const infinirtIpcMemHandle_t& handle, void** pointer, size_t* size,
                                 std::string* why);
// Unmaps it after its last close. False when the address is not open.
bool CloseSharedMemory(void* pointer);

// ---- events

// The state an interprocess event shares with the other processes that opened it.
class SharedEvent {
 public:
  // A new one (null when the page cannot be had), or one another process exported.
  static SharedEvent* Create();
  static infinirtError_t Open(const infinirtIpcEventHandle_t& handle, SharedEvent** event,
                              std::string* why);
  ~SharedEvent();
  SharedEvent(const SharedEvent&) = delete;
  SharedEvent& operator=(const SharedEvent&) = delete;

  // The handle another process opens it by: where it was opened, the handle it was opened from.
  void Export(infinirtIpcEventHandle_t* handle) const;

  // A new record's number; Complete(number) once its stream reaches it.
  uint32_t BeginRecord();
  void Complete(uint32_t number);
  // The number of the last record made (0: none).
  uint32_t LastRecord() const;
  bool Reached(uint32_t number) const;
  // Blocks until record `number` is complete, or until the process that made the last record
  // has ended without completing it (false then).
  bool WaitFor(uint32_t number) const;

 private:
  struct Page;
  SharedEvent(Page* page, int fd) : page_(page), fd_(fd) {}
  Page* page_;
  int fd_;                             // the exporter's descriptor; -1 where opened
  infinirtIpcEventHandle_t origin_{};  // where opened: the handle it was opened from
};

}  // namespace infinirt::cpu

#endif  // INFINIRT_PLUGINS_CPU_SHARED_MEMORY_H_
