// loader_environment_probe: initialises InfiniRT and prints what it saw, one fact per line.
// secure_environment_test.cc runs a setuid or setgid copy of it, where every InfiniRT variable
// must be ignored, and reads these lines:
//   at_secure <getauxval(AT_SECURE)>
//   device_count <n>
//   backend <name> <status number> <path> runtime=<runtime library>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstdio>

#include "infinirt.h"

// In a sanitized build (scripts/test.sh --sanitize): a copy setuid to another user runs without
// leak checking. LeakSanitizer stops the threads with ptrace and reads /proc/self, both closed to
// a process whose real user is not its effective one; the same closed /proc/self/environ hides
// ASAN_OPTIONS, hence this compiled-in default (exported: CMakeLists.txt sets ENABLE_EXPORTS).
// Unused without the sanitizer.
extern "C" __attribute__((visibility("default"))) const char* __asan_default_options() {
  return getauxval(AT_SECURE) != 0 && geteuid() != getuid() ? "detect_leaks=0" : "";
}

int main() {
  std::printf("at_secure %lu\n", getauxval(AT_SECURE));
  int devices = 0;
  if (infinirtGetDeviceCount(&devices) != infinirtSuccess) devices = 0;
  std::printf("device_count %d\n", devices);
  int backends = 0;
  infinirtGetBackendCount(&backends);
  for (int i = 0; i < backends; ++i) {
    infinirtBackendProp prop{};
    if (infinirtGetBackendProperties(&prop, i) != infinirtSuccess) continue;
    std::printf("backend %s %d %s runtime=%s\n", prop.name, static_cast<int>(prop.status),
                prop.path[0] ? prop.path : "-", prop.runtimeLibrary);
  }
  infinirtFinalize();
  std::fflush(stdout);  // before sanitizer reports at exit, which may end the process
  return 0;
}
