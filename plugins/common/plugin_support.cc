#include "plugin_support.h"

#include <algorithm>
#include <cstring>

namespace infinirt::plugin {

infinirtError_t ErrorFromSuffix(const std::string& suffix) {
  // A constant table, not a map: nothing to allocate or destroy. A plugin unloaded after a
  // failed initialisation leaves nothing behind, and a thread that translates an answer while
  // the process exits finds the table intact.
  struct NamedError {
    const char* name;
    infinirtError_t value;
  };
  static constexpr NamedError kErrors[] = {
#define INFINIRT_ERROR_BY_NAME_(name, value, text) {#name, static_cast<infinirtError_t>(value)},
      INFINIRT_ERROR_LIST(INFINIRT_ERROR_BY_NAME_)
#undef INFINIRT_ERROR_BY_NAME_
  };
  for (const NamedError& error : kErrors) {
    if (suffix == error.name) return error.value;
  }
  return infinirtErrorUnknown;
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

namespace {
thread_local int t_host_function_depth = 0;  // nonzero while this thread runs a HostCall
}  // namespace

void HostCall::Run(void* data) {
  auto* call = static_cast<HostCall*>(data);
  ++t_host_function_depth;
  call->fn(call->user_data);
  --t_host_function_depth;
  if (call->once) delete call;
}

bool InHostFunction() { return t_host_function_depth > 0; }

infinirtError_t RefuseInHostFunction(const PluginLog& log, const char* entry) {
  log(INFINIRT_LOG_DEBUG, std::string(entry) + " called from a host function: not permitted");
  return infinirtErrorNotPermitted;
}

void CopyText(char* buffer, size_t size, const std::string& text) {
  if (size == 0) return;
  const size_t length = std::min(size - 1, text.size());
  std::memcpy(buffer, text.data(), length);
  buffer[length] = '\0';
}

}  // namespace infinirt::plugin
