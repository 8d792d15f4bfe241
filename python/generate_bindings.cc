// Writes the Python package's view of the C API (infinirt/_c_api.py) from the headers' own lists,
// so that the binding has no second copy of them: the functions with their return and parameter
// types as the headers spell them, the error codes, device types, dtypes and reduction operators,
// the vendor table's rows (its plugins, DLPack device types, ...), and the size and field offsets
// of the structures the package reads. The package turns the
// spelled types into ctypes prototypes when it loads the library.
#include <cstddef>
#include <cstdio>
#include <string>
#include <type_traits>

#include "infiniccl.h"
#include "infiniop.h"
#include "infiniop_backend.h"
#include "infinirt.h"
#include "infinirt/caching_allocator.h"
#include "infinirt_vendor_table.h"  // generated from config/vendors.json

namespace {

// A Python string literal of `text` (the headers' text has no quotes or backslashes to escape,
// but escape them anyway).
std::string Quoted(const char* text) {
  std::string out = "'";
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c == '\'' || *c == '\\') out += '\\';
    out += *c;
  }
  return out + "'";
}

// The `struct` module's code of a field's type ("<N>s" for a char array).
template <class T>
std::string FieldCode() {
  if constexpr (std::is_array_v<T>) {
    static_assert(std::is_same_v<std::remove_extent_t<T>, char>, "only char arrays are read");
    return std::to_string(std::extent_v<T>) + "s";
  } else if constexpr (std::is_enum_v<T>) {
    return FieldCode<std::underlying_type_t<T>>();
  } else if constexpr (std::is_same_v<T, double>) {
    return "d";
  } else if constexpr (std::is_same_v<T, float>) {
    return "f";
  } else if constexpr (std::is_pointer_v<T>) {
    return "P";
  } else {
    static_assert(std::is_integral_v<T>, "a field of a type the binding cannot read");
    const char* codes = std::is_signed_v<T> ? "bhiq" : "BHIQ";
    const int index = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
    return std::string(1, codes[index]);
  }
}

// A parameter's type as the binding spells C types: every pointer is "void*", every enum "int".
template <class T>
std::string Spelling() {
  if constexpr (std::is_pointer_v<T>) {
    return "void*";
  } else if constexpr (std::is_enum_v<T>) {
    static_assert(sizeof(T) == sizeof(int), "an enum the binding passes as int");
    return "int";
  } else if constexpr (std::is_same_v<T, float>) {
    return "float";
  } else if constexpr (std::is_same_v<T, double>) {
    return "double";
  } else if constexpr (std::is_same_v<T, int>) {
    return "int";
  } else if constexpr (std::is_same_v<T, char>) {
    return "char";
  } else if constexpr (std::is_same_v<T, bool>) {
    return "bool";
  } else {
    static_assert(std::is_same_v<T, size_t>, "a parameter type the binding does not know");
    return "size_t";
  }
}

// "(void* p, float p)": the parameter list of a function of type F, with the types only (named
// p). From the type alone (Parameters<decltype(f)>()): taking the function's address would link
// this tool against libinfiniop, which it does not need (and does not link at -O1, where the
// unused address is not optimised away).
template <class F>
struct ParameterList;

template <class R, class... Arguments>
struct ParameterList<R(Arguments...)> {
  static std::string Spelled() {
    std::string list;
    ((list += (list.empty() ? "" : ", ") + Spelling<Arguments>() + " p"), ...);
    return "(" + (list.empty() ? std::string("void") : list) + ")";
  }
};

template <class F>
std::string Parameters() {
  return ParameterList<F>::Spelled();
}

#define FUNCTION_(ret, name, params)                                              \
  std::printf("    (%s, %s, %s),\n", Quoted(#ret).c_str(), Quoted(#name).c_str(), \
              Quoted(#params).c_str());

#define FIELD_(type, field)                                                                \
  std::printf("        %s: (%zu, '%s'),\n", Quoted(#field).c_str(), offsetof(type, field), \
              FieldCode<decltype(type::field)>().c_str());

void Functions() {
  std::printf("RUNTIME_FUNCTIONS = [\n");
  INFINIRT_CUDA_FUNCTIONS(FUNCTION_)
  INFINIRT_EXTENSION_FUNCTIONS(FUNCTION_)
  std::printf("]\n\nCCL_FUNCTIONS = [\n");
  INFINICCL_INFINICORE_FUNCTIONS(FUNCTION_)
  INFINICCL_EXTENSION_FUNCTIONS(FUNCTION_)
  std::printf("]\n\nALLOCATOR_FUNCTIONS = [\n");
  INFINIRT_CACHING_ALLOCATOR_FUNCTIONS(FUNCTION_)
  std::printf("]\n\n");
}

// A scalar's default as a Python literal.
template <class T>
std::string PythonValue(T value) {
  char text[64];
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "True" : "False";
  } else if constexpr (std::is_floating_point_v<T>) {
    std::snprintf(text, sizeof text, "%.9g", static_cast<double>(value));
    std::string literal = text;
    // A float stays a float in Python: "1" would make an int.
    if (literal.find_first_of(".en") == std::string::npos) literal += ".0";
    return literal;
  } else {
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
    return text;
  }
}

// InfiniOP's operators, from its one list: the names, the tensors (name, whether an output,
// whether it may be absent, and for one Create takes no descriptor for, its dtype's name, the
// tensor whose rows and the call scalar whose value make its shape: None otherwise), the scalars
// of Create and of the call (name, default, whether the call repeats Create's: then the default
// is None), whether the call takes a workspace, the summary, and the parameters of the
// descriptor's Create and of the call as the headers declare them.
void Operators() {
  std::printf("OPERATORS = [\n");
#undef INFINIOP_IN_OPTIONAL
#undef INFINIOP_OUT_UNDESCRIBED
#undef INFINIOP_SCALAR_AS
#undef INFINIOP_SCALAR_AGAIN
#define INFINIOP_OUT(name, dtype, shape) "(" + Quoted(#name) + ", True, False, None), " +
#define INFINIOP_IN(name, dtype, shape) "(" + Quoted(#name) + ", False, False, None), " +
#define INFINIOP_IN_OPTIONAL(name, dtype, shape) "(" + Quoted(#name) + ", False, True, None), " +
#define INFINIOP_OUT_UNDESCRIBED(name, dtype, rows_of, cols_of, shape)                         \
  "(" + Quoted(#name) + ", True, False, (" + Quoted(#dtype) + ", " + Quoted(#rows_of) + ", " + \
      Quoted(#cols_of) + ")), " +
#define INFINIOP_SCALAR(type, name, default_value) \
  "(" + Quoted(#name) + ", " + PythonValue(static_cast<type>(default_value)) + ", False), " +
#define INFINIOP_SCALAR_AS(type, name, default_value, field) \
  INFINIOP_SCALAR(type, name, default_value)
#define INFINIOP_SCALAR_AGAIN(type, name) "(" + Quoted(#name) + ", None, True), " +
#define OPERATOR_(name, snake, number, workspace, tensors, create, call, summary)               \
  std::printf("    (%s, %s, [%s], [%s], [%s], %s, %s, %s, %s),\n", Quoted(#name).c_str(),       \
              Quoted(#snake).c_str(), (std::string() + INFINIOP_EXPAND tensors "").c_str(),     \
              (std::string() + INFINIOP_EXPAND create "").c_str(),                              \
              (std::string() + INFINIOP_EXPAND call "").c_str(),                                \
              workspace == INFINIOP_WORKSPACE ? "True" : "False", Quoted(summary).c_str(),      \
              Quoted(Parameters<decltype(infiniopCreate##name##Descriptor)>().c_str()).c_str(), \
              Quoted(Parameters<decltype(infiniop##name)>().c_str()).c_str());
  INFINIOP_OPERATORS(OPERATOR_)
#undef OPERATOR_
#undef INFINIOP_SCALAR_AGAIN
#undef INFINIOP_SCALAR_AS
#undef INFINIOP_SCALAR
#undef INFINIOP_OUT_UNDESCRIBED
#undef INFINIOP_IN_OPTIONAL
#undef INFINIOP_IN
#undef INFINIOP_OUT
#define INFINIOP_IN_OPTIONAL(name, dtype, shape) INFINIOP_IN(name, dtype, shape)
#define INFINIOP_OUT_UNDESCRIBED(name, dtype, rows_of, cols_of, shape) \
  INFINIOP_OUT(name, dtype, shape)
#define INFINIOP_SCALAR_AS(type, name, default_value, field) \
  INFINIOP_SCALAR(type, name, default_value)
#define INFINIOP_SCALAR_AGAIN(type, name) INFINIOP_SCALAR(type, name, 0)
  std::printf("]\n\nOP_FUNCTIONS = [\n");
#define OP_FUNCTION_(name)                                     \
  std::printf("    ('int', %s, %s),\n", Quoted(#name).c_str(), \
              Quoted(Parameters<decltype(infiniop##name)>().c_str()).c_str());
  OP_FUNCTION_(CreateHandle)
  OP_FUNCTION_(DestroyHandle)
  OP_FUNCTION_(CreateTensorDescriptor)
  OP_FUNCTION_(DestroyTensorDescriptor)
  std::printf("]\n\n");
}

void Lists() {
#define ERROR_(name, value, text) \
  std::printf("    (%s, %d, %s),\n", Quoted(#name).c_str(), value, Quoted(text).c_str());
  std::printf("ERRORS = [\n");
  INFINIRT_ERROR_LIST(ERROR_)
  std::printf("]\n\n");
#define DEVICE_TYPE_(name, value, display, plugin)                                              \
  std::printf("    (%s, %d, %s, %s),\n", Quoted(#name).c_str(), value, Quoted(display).c_str(), \
              Quoted(#plugin).c_str());
  std::printf("DEVICE_TYPES = [\n");
  INFINIRT_DEVICE_TYPES(DEVICE_TYPE_)
  std::printf("]\n\n");
  // The vendor table's rows (config/vendors.json), in its order: (plugin name, family, collective
  // engine, DLPack device type, has an operator backend).
#define VENDOR_(name, enumerator, family, engine, dlpack, operator_backend)                  \
  std::printf("    (%s, %s, %s, %s, %s),\n", Quoted(#name).c_str(), Quoted(#family).c_str(), \
              Quoted(#engine).c_str(), Quoted(#dlpack).c_str(),                              \
              operator_backend ? "True" : "False");
  std::printf("VENDORS = [\n");
  INFINIRT_VENDOR_TABLE(VENDOR_)
  std::printf("]\n\n");
#define DTYPE_(name, value, size) \
  std::printf("    (%s, %d, %d),\n", Quoted(#name).c_str(), value, size);
  std::printf("DTYPES = [\n");
  INFINIRT_DTYPE_LIST(DTYPE_)
  std::printf("]\n\n");
#define STATUS_(name, value, text) \
  std::printf("    (%s, %d, %s),\n", Quoted(#name).c_str(), value, Quoted(text).c_str());
  std::printf("STATUSES = [\n");
  INFINIRT_STATUS_LIST(STATUS_)
  std::printf("]\n\n");
#define REDUCE_OP_(name, value, text) std::printf("    (%s, %d),\n", Quoted(#name).c_str(), value);
  std::printf("REDUCE_OPS = [\n");
  INFINICCL_REDUCE_OPS(REDUCE_OP_)
  std::printf("]\n\n");
}

void Constants() {
  std::printf("CONSTANTS = {\n");
#define CONSTANT_(name) \
  std::printf("    %s: %lld,\n", Quoted(#name).c_str(), static_cast<long long>(name));
  CONSTANT_(infinirtMemcpyHostToHost)
  CONSTANT_(infinirtMemcpyHostToDevice)
  CONSTANT_(infinirtMemcpyDeviceToHost)
  CONSTANT_(infinirtMemcpyDeviceToDevice)
  CONSTANT_(infinirtMemcpyDefault)
  CONSTANT_(infinirtMemoryTypeUnregistered)
  CONSTANT_(infinirtMemoryTypeHost)
  CONSTANT_(infinirtMemoryTypeDevice)
  CONSTANT_(infinirtMemoryTypeManaged)
  CONSTANT_(infinirtStreamCaptureModeGlobal)
  CONSTANT_(infinirtStreamCaptureModeThreadLocal)
  CONSTANT_(infinirtStreamCaptureModeRelaxed)
  CONSTANT_(infinirtStreamCaptureStatusNone)
  CONSTANT_(infinirtStreamCaptureStatusActive)
  CONSTANT_(infinirtStreamCaptureStatusInvalidated)
  CONSTANT_(infinirtStreamDefault)
  CONSTANT_(infinirtStreamNonBlocking)
  CONSTANT_(infinirtEventDefault)
  CONSTANT_(infinirtEventBlockingSync)
  CONSTANT_(infinirtEventDisableTiming)
  CONSTANT_(infinirtHostAllocDefault)
  CONSTANT_(infinirtBackendLoaded)
  CONSTANT_(infinirtBackendNotFound)
  CONSTANT_(infinirtBackendDlopenFailed)
  CONSTANT_(infinirtBackendNoEntryPoint)
  CONSTANT_(infinirtBackendAbiTooOld)
  CONSTANT_(infinirtBackendAbiTooNew)
  CONSTANT_(infinirtBackendBadTable)
  CONSTANT_(infinirtBackendRuntimeMissing)
  CONSTANT_(infinirtBackendInitFailed)
  CONSTANT_(infinirtBackendFilteredOut)
  CONSTANT_(infinirtBackendDuplicate)
  CONSTANT_(infinirtBackendInsecure)
  CONSTANT_(infinirtBackendUnknownDeviceType)
  CONSTANT_(infinirtBackendNotBuilt)
  CONSTANT_(INFINI_DEVICE_TYPE_COUNT)
  CONSTANT_(INFINICCL_UNIQUE_ID_BYTES)
  CONSTANT_(INFINIRT_IPC_HANDLE_SIZE)
  std::printf("}\n\n");
}

void Structures() {
  std::printf("STRUCTS = {\n");
  std::printf("    'infinirtDeviceProp': (%zu, {\n", sizeof(infinirtDeviceProp));
#define DEVICE_PROP_FIELD_(field) FIELD_(infinirtDeviceProp, field)
  DEVICE_PROP_FIELD_(name)
  DEVICE_PROP_FIELD_(totalGlobalMem)
  DEVICE_PROP_FIELD_(sharedMemPerBlock)
  DEVICE_PROP_FIELD_(warpSize)
  DEVICE_PROP_FIELD_(maxThreadsPerBlock)
  DEVICE_PROP_FIELD_(major)
  DEVICE_PROP_FIELD_(minor)
  DEVICE_PROP_FIELD_(multiProcessorCount)
  DEVICE_PROP_FIELD_(integrated)
  DEVICE_PROP_FIELD_(canMapHostMemory)
  DEVICE_PROP_FIELD_(concurrentKernels)
  DEVICE_PROP_FIELD_(pciBusID)
  DEVICE_PROP_FIELD_(pciDeviceID)
  DEVICE_PROP_FIELD_(pciDomainID)
  DEVICE_PROP_FIELD_(asyncEngineCount)
  DEVICE_PROP_FIELD_(unifiedAddressing)
  DEVICE_PROP_FIELD_(l2CacheSize)
  DEVICE_PROP_FIELD_(managedMemory)
  DEVICE_PROP_FIELD_(memoryPoolsSupported)
  DEVICE_PROP_FIELD_(deviceType)
  DEVICE_PROP_FIELD_(vendorDeviceIndex)
  DEVICE_PROP_FIELD_(backendName)
  std::printf("    }),\n");
  std::printf("    'infinirtBackendProp': (%zu, {\n", sizeof(infinirtBackendProp));
#define BACKEND_PROP_FIELD_(field) FIELD_(infinirtBackendProp, field)
  BACKEND_PROP_FIELD_(name)
  BACKEND_PROP_FIELD_(deviceType)
  BACKEND_PROP_FIELD_(path)
  BACKEND_PROP_FIELD_(abiMajor)
  BACKEND_PROP_FIELD_(abiMinor)
  BACKEND_PROP_FIELD_(runtimeVersion)
  BACKEND_PROP_FIELD_(runtimeLibrary)
  BACKEND_PROP_FIELD_(deviceCount)
  BACKEND_PROP_FIELD_(loadTimeMs)
  BACKEND_PROP_FIELD_(status)
  BACKEND_PROP_FIELD_(reason)
  std::printf("    }),\n");
  // Passed by value: the binding makes ctypes structures of these (every field listed, in order).
  std::printf("    'infinirtMemLocation': (%zu, {\n", sizeof(infinirtMemLocation));
  FIELD_(infinirtMemLocation, type)
  FIELD_(infinirtMemLocation, id)
  std::printf("    }),\n");
  std::printf("    'infinirtPitchedPtr': (%zu, {\n", sizeof(infinirtPitchedPtr));
  FIELD_(infinirtPitchedPtr, ptr)
  FIELD_(infinirtPitchedPtr, pitch)
  FIELD_(infinirtPitchedPtr, xsize)
  FIELD_(infinirtPitchedPtr, ysize)
  std::printf("    }),\n");
  std::printf("    'infinirtExtent': (%zu, {\n", sizeof(infinirtExtent));
  FIELD_(infinirtExtent, width)
  FIELD_(infinirtExtent, height)
  FIELD_(infinirtExtent, depth)
  std::printf("    }),\n");
  std::printf("    'infinirtPointerAttributes': (%zu, {\n", sizeof(infinirtPointerAttributes));
  FIELD_(infinirtPointerAttributes, type)
  FIELD_(infinirtPointerAttributes, device)
  FIELD_(infinirtPointerAttributes, devicePointer)
  FIELD_(infinirtPointerAttributes, hostPointer)
  std::printf("    }),\n");
  // The allocator's statistics, flattened: "allocatedBytes.current", ..., then the counters.
  std::printf("    'infinirtAllocatorStats': (%zu, {\n", sizeof(infinirtAllocatorStats));
#define STAT_PART_(stat, part)                                                                \
  std::printf("        %s: (%zu, '%s'),\n", Quoted(#stat "." #part).c_str(),                  \
              offsetof(infinirtAllocatorStats, stat) + offsetof(infinirtAllocatorStat, part), \
              FieldCode<decltype(infinirtAllocatorStat::part)>().c_str());
#define STAT_(stat)           \
  STAT_PART_(stat, current)   \
  STAT_PART_(stat, peak)      \
  STAT_PART_(stat, allocated) \
  STAT_PART_(stat, freed)
  INFINIRT_ALLOCATOR_STATS(STAT_)
#define COUNTER_(counter) FIELD_(infinirtAllocatorStats, counter)
  INFINIRT_ALLOCATOR_COUNTERS(COUNTER_)
  std::printf("    }),\n}\n");
}

}  // namespace

int main() {
  std::printf("# Generated from InfiniRT's headers at build time (python/generate_bindings.cc).\n");
  std::printf("# Do not edit.\n\n");
  std::printf("VERSION = '%s'\n\n", INFINIRT_PYTHON_VERSION);
  Functions();
  Operators();
  Lists();
  Constants();
  Structures();
  return 0;
}
