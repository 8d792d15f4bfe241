#include "plugin_support.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace infinirt::plugin {

infinirtError_t ErrorFromSuffix(const std::string& suffix) {
  // Never destroyed: a plugin's thread may still translate an answer while the process exits.
  static const auto& errors = *new std::unordered_map<std::string, infinirtError_t>{
#define INFINIRT_ERROR_BY_NAME_(name, value, text) {#name, static_cast<infinirtError_t>(value)},
      INFINIRT_ERROR_LIST(INFINIRT_ERROR_BY_NAME_)
#undef INFINIRT_ERROR_BY_NAME_
  };
  const auto found = errors.find(suffix);
  return found == errors.end() ? infinirtErrorUnknown : found->second;
}

infinirtError_t ErrorFromNumber(int value) {
  switch (value) {
#define INFINIRT_ERROR_CASE_(name, number, text) \
  case number:                                   \
    return static_cast<infinirtError_t>(number);
    INFINIRT_ERROR_LIST(INFINIRT_ERROR_CASE_)
#undef INFINIRT_ERROR_CASE_
    default:
      return infinirtErrorUnknown;
  }
}

void* PerThreadStreams::Get(int device) {
  struct Owned {
    PerThreadStreams* owner;
    uint64_t epoch;
    int device;
    void* stream;
  };
  struct ThreadStreams {
    std::vector<Owned> streams;
    ~ThreadStreams() {
      for (const Owned& owned : streams) {
        if (owned.epoch == owned.owner->epoch_.load())
          owned.owner->destroy_(owned.device, owned.stream);
      }
    }
  };
  thread_local ThreadStreams mine;
  const uint64_t epoch = epoch_.load();
  for (Owned& owned : mine.streams) {
    if (owned.owner != this || owned.device != device) continue;
    if (owned.epoch == epoch) return owned.stream;
    owned.stream = create_(device);  // made before a re-initialisation: forget it
    owned.epoch = owned.stream != nullptr ? epoch : 0;
    return owned.stream;
  }
  void* stream = create_(device);
  if (stream != nullptr) mine.streams.push_back(Owned{this, epoch, device, stream});
  return stream;
}

void CopyText(char* buffer, size_t size, const std::string& text) {
  if (size == 0) return;
  const size_t length = std::min(size - 1, text.size());
  std::memcpy(buffer, text.data(), length);
  buffer[length] = '\0';
}

}  // namespace infinirt::plugin
