// deviceQuery: every device's properties, which must agree with the attributes asked one by
// one, the runtime's versions, and which devices reach each other's memory.
#include "sample_check.h"

int main() {
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  EXPECT(count > 0);
  int driver = 0, runtime = 0;
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  std::printf("%d device(s); driver version %d, runtime version %d (CUDART_VERSION %d)\n", count,
              driver, runtime, CUDART_VERSION);
  EXPECT(runtime == CUDART_VERSION);
  for (int device = 0; device < count; ++device) {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, device));
    std::printf("Device %d: \"%s\"\n", device, prop.name);
    std::printf("  compute capability            %d.%d\n", prop.major, prop.minor);
    std::printf("  global memory                 %zu MiB\n", prop.totalGlobalMem >> 20);
    std::printf("  multiprocessors               %d\n", prop.multiProcessorCount);
    std::printf("  warp size                     %d\n", prop.warpSize);
    std::printf("  max threads per block         %d\n", prop.maxThreadsPerBlock);
    std::printf("  concurrent copy engines       %d\n", prop.asyncEngineCount);
    std::printf("  unified addressing            %s\n", prop.unifiedAddressing ? "yes" : "no");
    std::printf("  managed memory                %s\n", prop.managedMemory ? "yes" : "no");
    std::printf("  PCI domain/bus/device         %d/%d/%d\n", prop.pciDomainID, prop.pciBusID,
                prop.pciDeviceID);
    EXPECT(prop.name[0] != '\0');
    EXPECT(prop.totalGlobalMem > 0);
    int value = -1;
    CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device));
    EXPECT(value == prop.multiProcessorCount);
    CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, device));
    EXPECT(value == prop.warpSize);
    CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, device));
    std::printf("  clock rate                    %d kHz\n", value);
    EXPECT(value > 0);
    char bus_id[32] = {};
    CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), device));
    int found = -1;
    CHECK(cudaDeviceGetByPCIBusId(&found, bus_id));
    EXPECT(found == device);
  }
  for (int device = 0; device < count; ++device) {
    for (int peer = 0; peer < count; ++peer) {
      if (peer == device) continue;
      int can = -1;
      CHECK(cudaDeviceCanAccessPeer(&can, device, peer));
      std::printf("  device %d %s reach device %d's memory\n", device, can ? "can" : "cannot",
                  peer);
    }
  }
  std::printf("deviceQuery: PASSED\n");
  return 0;
}
