#include "user_objects.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

namespace infinirt::core {

namespace {

// Handles: a tag in the top bits and a serial number, never reused.
constexpr uint64_t kUserObjectTag = uint64_t{0xC} << 60;

struct UserObjectTable {
  std::mutex mutex;
  std::unordered_map<uint64_t, std::shared_ptr<UserObject>> live;
  uint64_t next = 0;
};

UserObjectTable& Table() {
  static auto* table = new UserObjectTable;  // never destroyed: objects may outlive statics
  return *table;
}

void Forget(uint64_t handle) {
  std::lock_guard<std::mutex> lock(Table().mutex);
  Table().live.erase(handle);
}

}  // namespace

bool UserObject::Retain(unsigned int count) {
  uint64_t now = references_.load();
  do {
    if (now == 0) return false;
  } while (!references_.compare_exchange_weak(now, now + count));
  return true;
}

bool UserObject::Release(unsigned int count) {
  uint64_t now = references_.load();
  do {
    if (now < count) return false;
  } while (!references_.compare_exchange_weak(now, now - count));
  if (now == count) {
    Forget(handle_);
    destroy_(ptr_);
  }
  return true;
}

uint64_t UserObject::ReleaseUnheld(unsigned int count) {
  uint64_t now = references_.load();
  uint64_t dropped = 0;
  do {
    const uint64_t held = held_by_holders_.load();
    dropped = std::min<uint64_t>(count, now > held ? now - held : 0);
    if (dropped == 0) return 0;
  } while (!references_.compare_exchange_weak(now, now - dropped));
  if (now == dropped) {
    Forget(handle_);
    destroy_(ptr_);
  }
  return dropped;
}

std::shared_ptr<UserObject> CreateUserObject(void* ptr, infinirtHostFn_t destroy,
                                             unsigned int references) {
  UserObjectTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mutex);
  const uint64_t handle = kUserObjectTag | ++table.next;
  auto object = std::make_shared<UserObject>(handle, ptr, destroy, references);
  table.live.emplace(handle, object);
  return object;
}

std::shared_ptr<UserObject> FindUserObject(uint64_t handle) {
  if ((handle & (uint64_t{0xF} << 60)) != kUserObjectTag) return nullptr;
  std::lock_guard<std::mutex> lock(Table().mutex);
  auto found = Table().live.find(handle);
  return found == Table().live.end() ? nullptr : found->second;
}

UserObjectRefs::UserObjectRefs(const UserObjectRefs& other) {
  for (const auto& [object, count] : other.held_) {
    if (!object->Retain(count)) continue;
    object->NoteHeld(count);
    held_.emplace(object, count);
  }
}

void UserObjectRefs::Add(const std::shared_ptr<UserObject>& object, unsigned int count) {
  object->NoteHeld(count);
  held_[object] += count;
}

unsigned int UserObjectRefs::ReleaseAtMost(const std::shared_ptr<UserObject>& object,
                                           unsigned int count) {
  auto found = held_.find(object);
  if (found == held_.end()) return 0;
  const unsigned int released = std::min(count, found->second);
  found->second -= released;
  if (found->second == 0) held_.erase(found);
  object->NoteUnheld(released);
  object->Release(released);
  return released;
}

void UserObjectRefs::Take(UserObjectRefs* other) {
  for (const auto& [object, count] : other->held_) held_[object] += count;
  other->held_.clear();
}

void UserObjectRefs::ReleaseAll() {
  auto held = std::move(held_);
  held_.clear();
  for (const auto& [object, count] : held) {
    object->NoteUnheld(count);
    object->Release(count);
  }
}

}  // namespace infinirt::core
