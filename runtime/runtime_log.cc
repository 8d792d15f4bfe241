#include "runtime_log.h"

#include <strings.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace infinirt {

namespace {

// The core's levels, from most to least verbose; unknown values keep the default ("warn").
int LevelRank(const char* level) {
  static const char* const kLevels[] = {"trace", "debug", "info", "warn", "error", "off"};
  for (int rank = 0; rank < 6; ++rank) {
    if (level != nullptr && strcasecmp(level, kLevels[rank]) == 0) return rank;
  }
  return 3;
}

// secure_getenv, as the core reads its variables: ignored in setuid and similar processes.
bool Shows(int rank) { return LevelRank(secure_getenv("INFINIRT_LOG_LEVEL")) <= rank; }

}  // namespace

void Debug(const std::string& message) {
  if (Shows(1)) std::fprintf(stderr, "[infinirt] [debug] %s\n", message.c_str());
}

void Warn(const char* message) {
  if (Shows(3)) std::fprintf(stderr, "[infinirt] [warning] %s\n", message);
}

void ReportIfFailed(infinirtError_t code, const char* what) noexcept {
  if (code == infinirtSuccess) return;
  infinirtGetLastError();
  // At process exit the runtime may be torn down before a thread's runtimes go: nothing is lost.
  if (code == infinirtErrorCudartUnloading) return;
  if (Shows(4)) {
    std::fprintf(stderr, "[infinirt] [error] %s: %s (%s)\n", what, infinirtGetErrorName(code),
                 infinirtGetErrorString(code));
  }
}

}  // namespace infinirt
