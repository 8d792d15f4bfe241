// loader_environment_probe: initialises InfiniRT and prints what it saw, one fact per line.
// secure_environment_test.cc runs a setuid or setgid copy of it, where every InfiniRT variable
// must be ignored, and reads these lines:
//   at_secure <getauxval(AT_SECURE)>
//   device_count <n>
//   backend <name> <status number> <path> runtime=<runtime library>
#include <sys/auxv.h>

#include <cstdio>

#include "infinirt.h"

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
  return 0;
}
