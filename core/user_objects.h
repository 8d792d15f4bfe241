// User objects (infinirtUserObjectCreate): a program's pointer and the function that destroys
// it, reference-counted. The program, graphs and execs hold references; the destructor runs on
// the thread that releases the last one (for an exec, a runtime thread once its pending launches
// are done). Handles are looked up in one process-wide table, so that a released or garbage
// handle is refused rather than followed.
#ifndef INFINIRT_CORE_USER_OBJECTS_H_
#define INFINIRT_CORE_USER_OBJECTS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>

#include "infinirt.h"

namespace infinirt::core {

class UserObject {
 public:
  UserObject(uint64_t handle, void* ptr, infinirtHostFn_t destroy, unsigned int references)
      : handle_(handle), ptr_(ptr), destroy_(destroy), references_(references) {}
  UserObject(const UserObject&) = delete;
  UserObject& operator=(const UserObject&) = delete;

  uint64_t handle() const { return handle_; }
  // Adds references; false (nothing added) when the object has none left.
  bool Retain(unsigned int count);
  // Drops references, running the destructor when none remain; false (nothing dropped) when
  // it holds fewer than `count`.
  bool Release(unsigned int count);
  // For a release of more references than the object holds (NVIDIA's runtime answers Success):
  // drops at most `count` of those that no graph or exec holds, as Release does; returns how
  // many it dropped.
  uint64_t ReleaseUnheld(unsigned int count);
  // Graphs and execs (UserObjectRefs) count the references they hold here.
  void NoteHeld(uint64_t count) { held_by_holders_.fetch_add(count); }
  void NoteUnheld(uint64_t count) { held_by_holders_.fetch_sub(count); }

 private:
  const uint64_t handle_;
  void* const ptr_;
  const infinirtHostFn_t destroy_;
  std::atomic<uint64_t> references_;
  std::atomic<uint64_t> held_by_holders_{0};  // of references_
};

// The table of live user objects.
std::shared_ptr<UserObject> CreateUserObject(void* ptr, infinirtHostFn_t destroy,
                                             unsigned int references);
// A live user object by handle; null for anything else.
std::shared_ptr<UserObject> FindUserObject(uint64_t handle);

// The references one graph or exec holds, released when it goes (or when taken and released by
// whoever takes them).
class UserObjectRefs {
 public:
  UserObjectRefs() = default;
  UserObjectRefs(const UserObjectRefs& other);  // retains the same references again
  UserObjectRefs& operator=(const UserObjectRefs&) = delete;
  ~UserObjectRefs() { ReleaseAll(); }

  // Records references the holder now owns (already counted in the object).
  void Add(const std::shared_ptr<UserObject>& object, unsigned int count);
  // Releases at most `count` references the holder owns; returns how many it released.
  unsigned int ReleaseAtMost(const std::shared_ptr<UserObject>& object, unsigned int count);
  // Moves every reference of `other` here.
  void Take(UserObjectRefs* other);
  void ReleaseAll();
  bool empty() const { return held_.empty(); }

 private:
  std::map<std::shared_ptr<UserObject>, unsigned int> held_;
};

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_USER_OBJECTS_H_
