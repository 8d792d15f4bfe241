/* Facts about infinirt.h as a strict C99 compiler sees it (header_c99.c), for api_list_test.cc
 * to compare with what the C++ compiler sees. */
#ifndef INFINIRT_TESTS_CONTRACT_HEADER_C99_H_
#define INFINIRT_TESTS_CONTRACT_HEADER_C99_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct InfinirtC99Facts {
  int function_count; /* entries of INFINIRT_CUDA_FUNCTIONS and INFINIRT_EXTENSION_FUNCTIONS */
  size_t device_prop_size;
  size_t pointer_attributes_size;
  size_t backend_prop_size;
  uintptr_t stream_legacy;
  int not_ready;                  /* infinirtErrorNotReady */
  const char* invalid_value_name; /* infinirtGetErrorName(infinirtErrorInvalidValue) */
  int device_type_count;          /* INFINI_DEVICE_TYPE_COUNT */
  int version_macro;              /* INFINIRT_VERSION (CUDART_VERSION renamed) */
  /* From INFINIRT_DEVICE_TYPES, indexed by value: the plugin names (#plugin) and display names. */
  const char* device_plugin_names[32];
  const char* device_display_names[32];
} InfinirtC99Facts;

void InfinirtC99GetFacts(InfinirtC99Facts* facts);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* INFINIRT_TESTS_CONTRACT_HEADER_C99_H_ */
