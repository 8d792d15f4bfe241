/* A C program that uses InfiniRT from an installed tree: it must find the CPU plugin through
 * the install layout (lib/infinirt/ beside lib/libinfinirt.so) with no environment set. */
#include <infinirt.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  int count = 0;
  char in[64] = "installed InfiniRT copies bytes", out[64] = {0};
  void* device = NULL;
  infinirtStream_t stream = NULL;
  if (infinirtGetDeviceCount(&count) != infinirtSuccess || count < 1) {
    fprintf(stderr, "no device: %s\n", infinirtGetErrorName(infinirtGetLastError()));
    return 1;
  }
  if (infinirtMalloc(&device, sizeof in) || infinirtStreamCreate(&stream) ||
      infinirtMemcpyAsync(device, in, sizeof in, infinirtMemcpyHostToDevice, stream) ||
      infinirtMemcpyAsync(out, device, sizeof out, infinirtMemcpyDeviceToHost, stream) ||
      infinirtStreamSynchronize(stream) || infinirtStreamDestroy(stream) || infinirtFree(device)) {
    fprintf(stderr, "failed: %s\n", infinirtGetErrorName(infinirtGetLastError()));
    return 1;
  }
  if (strcmp(in, out) != 0) return 1;
  printf("ok: %d device(s), \"%s\"\n", count, out);
  return 0;
}
