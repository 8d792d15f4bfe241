#include "user_objects.h"

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
    if (object->Retain(count)) held_.emplace(object, count);
  }
}

void UserObjectRefs::Add(const std::shared_ptr<UserObject>& object, unsigned int count) {
  held_[object] += count;
}

bool UserObjectRefs::Release(const std::shared_ptr<UserObject>& object, unsigned int count) {
  auto found = held_.find(object);
  if (found == held_.end() || found->second < count) return false;
  found->second -= count;
  if (found->second == 0) held_.erase(found);
  object->Release(count);
  return true;
}

void UserObjectRefs::Take(UserObjectRefs* other) {
  for (const auto& [object, count] : other->held_) held_[object] += count;
  other->held_.clear();
}

void UserObjectRefs::ReleaseAll() {
  auto held = std::move(held_);
  held_.clear();
  for (const auto& [object, count] : held) object->Release(count);
}

}  // namespace infinirt::core
