/* Compiled as strict C99 (-std=c99 -pedantic -Werror -Wall -Wextra, see CMakeLists.txt): proves
 * that infinirt.h is valid C, and reports what a C compiler makes of it. */
#include "header_c99.h"

#include "infinirt.h"

/* A pointer to every public function, declared with its prototype as C parses it. */
static int CountFunctions(void) {
  int count = 0;
#define INFINIRT_C99_TAKE_ADDRESS(ret, name, params) \
  {                                                  \
    ret(*pointer) params = infinirt##name;           \
    (void)pointer;                                   \
    ++count;                                         \
  }
  INFINIRT_CUDA_FUNCTIONS(INFINIRT_C99_TAKE_ADDRESS)
  INFINIRT_EXTENSION_FUNCTIONS(INFINIRT_C99_TAKE_ADDRESS)
#undef INFINIRT_C99_TAKE_ADDRESS
  return count;
}

/* The renamed CUDART_* macros as a ported program uses them: a host callback declared with
 * INFINIRT_CB, and a pointer to an API function declared with INFINIRTAPI. */
static void INFINIRT_CB IgnoreUserData(void* userData) { (void)userData; }
typedef infinirtError_t(INFINIRTAPI* MallocFunction)(void** devPtr, size_t size);

void InfinirtC99GetFacts(InfinirtC99Facts* facts) {
  infinirtHostFn_t callback = IgnoreUserData;
  MallocFunction allocate = infinirtMalloc;
  (void)callback;
  (void)allocate;
  facts->version_macro = INFINIRT_VERSION;
  enum infinirtError not_ready = infinirtErrorNotReady;
  infinirtStream_t legacy = infinirtStreamLegacy;
  facts->function_count = CountFunctions();
  facts->device_prop_size = sizeof(struct infinirtDeviceProp);
  facts->pointer_attributes_size = sizeof(struct infinirtPointerAttributes);
  facts->backend_prop_size = sizeof(infinirtBackendProp);
  facts->stream_legacy = (uintptr_t)legacy;
  facts->not_ready = (int)not_ready;
  facts->invalid_value_name = infinirtGetErrorName(infinirtErrorInvalidValue);
  facts->device_type_count = INFINI_DEVICE_TYPE_COUNT;
#define INFINIRT_C99_DEVICE_TYPE(name, value, display, plugin) \
  facts->device_plugin_names[INFINI_DEVICE_##name] = #plugin;  \
  facts->device_display_names[value] = display;
  INFINIRT_DEVICE_TYPES(INFINIRT_C99_DEVICE_TYPE)
#undef INFINIRT_C99_DEVICE_TYPE
}
