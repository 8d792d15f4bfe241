/* A library for the dynamic loader to find, or not (loader_search_test.cc). */
int infinirt_loader_search_probe(void) { return 7; }
