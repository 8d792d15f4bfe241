/* A stand-in for NVIDIA's driver library, libcuda.so.1, for the test where the runtime says the
 * driver is too old: the plugin only opens it, to tell "too old" from "not found". */
int emuDriverStandIn(void) { return 0; }
