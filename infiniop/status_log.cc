#include "status_log.h"

#include <strings.h>

#include <cstdio>
#include <cstdlib>

namespace infiniop {

namespace {

bool DebugLogging() {
  static const bool debug = [] {
    const char* level = secure_getenv("INFINIRT_LOG_LEVEL");
    return level != nullptr && (strcasecmp(level, "debug") == 0 || strcasecmp(level, "trace") == 0);
  }();
  return debug;
}

}  // namespace

infiniStatus_t Refuse(infiniStatus_t status, const std::string& why) {
  if (DebugLogging()) std::fprintf(stderr, "[infiniop] [debug] %s\n", why.c_str());
  return status;
}

}  // namespace infiniop
