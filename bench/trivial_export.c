/* A trivial exported function in a shared library of its own: the floor of any call a program
 * makes into a library (through the PLT, like a call to infinirtGetDevice). */
__attribute__((visibility("default"))) int infinirt_bench_trivial(int* value) {
  *value = 0;
  return 0;
}
