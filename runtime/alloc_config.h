// The caching allocator's settings, from INFINIRT_ALLOC_CONF: "key:value,key:value" (or
// key=value), the keys below. Parsed once per process; a malformed value is an infinirt::Error
// (InvalidValue) naming the key, thrown by every allocator until the variable is fixed.
#ifndef INFINIRT_RUNTIME_ALLOC_CONFIG_H_
#define INFINIRT_RUNTIME_ALLOC_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace infinirt::detail {

struct AllocConfig {
  // max_split_size_mb: cached blocks larger than this are never split, and serve only requests
  // of at least this size (none: every block may be split).
  size_t max_split_size = SIZE_MAX;
  // garbage_collection_threshold: a fraction in (0, 1) of the device's memory; when the
  // reserved memory would pass it, cached blocks nobody uses are released first (0: off).
  double garbage_collection_threshold = 0;
  // expandable: segments that grow in place. Only "off" (the default) is supported.
  bool expandable = false;

  // Parses a setting string (the variable's value); throws infinirt::Error on any problem.
  static AllocConfig Parse(const std::string& text);
  // INFINIRT_ALLOC_CONF's settings (the defaults when it is unset or empty).
  static const AllocConfig& FromEnvironment();
};

}  // namespace infinirt::detail

#endif  // INFINIRT_RUNTIME_ALLOC_CONFIG_H_
