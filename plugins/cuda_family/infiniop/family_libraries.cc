// A CUDA-family operator backend's vendor libraries: the runtime (the one the vendor's runtime
// plugin opened), the BLAS (opened with dlopen on first use) and, for NVIDIA, the backend's own
// kernels (a fatbin built into the backend, loaded with cudaLibraryLoadData on first use).
#include <dlfcn.h>
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "family_backend.h"
#include "family_operator_spec.h"
#include "infinirt.h"

namespace infinirt::infiniop_cuda_family {

namespace {

RuntimeFunctions g_runtime;
// The flavour of the vendor's libraries that matches its runtime (set by LoadRuntime).
const FamilyLibraries* g_flavour = nullptr;

// The path of the library the loaded runtime plugin of this vendor uses, or "" with the reason.
std::string VendorRuntimeLibrary(std::string* why) {
  int count = 0;
  if (infinirtGetBackendCount(&count) != infinirtSuccess) {
    infinirtGetLastError();
    *why = "the backend listing is unavailable";
    return "";
  }
  for (int index = 0; index < count; ++index) {
    infinirtBackendProp prop;
    if (infinirtGetBackendProperties(&prop, index) != infinirtSuccess) {
      infinirtGetLastError();
      continue;
    }
    if (prop.deviceType != ThisVendor().device_type || prop.status != infinirtBackendLoaded) {
      continue;
    }
    if (prop.runtimeLibrary[0] != '\0') return prop.runtimeLibrary;
  }
  *why = std::string("the ") + ThisVendor().name + " runtime plugin is not loaded";
  return "";
}

// The first flavour whose mark is in the runtime library's file name.
const FamilyLibraries* FlavourOf(const std::string& runtime_path) {
  const std::string file = runtime_path.substr(runtime_path.rfind('/') + 1);
  for (const FamilyLibraries& flavour : ThisVendor().flavours) {
    if (flavour.runtime_prefix == nullptr) break;
    if (flavour.runtime_library_mark == nullptr ||
        file.find(flavour.runtime_library_mark) != std::string::npos) {
      return &flavour;
    }
  }
  return nullptr;
}

// The vendor's name of a cuBLAS function: cublasCreate_v2 is mcblasCreate for MetaX's MACA.
std::string BlasSymbol(const FamilyLibraries& flavour, const char* cublas_name) {
  std::string rest = cublas_name + std::strlen("cublas");
  const std::string v2 = "_v2";
  if (!flavour.blas_v2_names && rest.size() > v2.size() &&
      rest.compare(rest.size() - v2.size(), v2.size(), v2) == 0) {
    rest.resize(rest.size() - v2.size());
  }
  return flavour.blas_prefix + rest;
}

template <class Pointer>
void Resolve(void* library, const char* symbol, Pointer* pointer) {
  *pointer = reinterpret_cast<Pointer>(dlsym(library, symbol));
}

// The colon-separated entries of a list.
std::vector<std::string> SplitPaths(const std::string& list) {
  std::vector<std::string> paths;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(':', start), list.size());
    if (end > start) paths.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return paths;
}

// Where to look for the BLAS: the vendor's variable's list, or the flavour's names and the same
// names in the runtime library's directory.
std::vector<std::string> BlasCandidates() {
  if (const char* listed = secure_getenv(ThisVendor().blas_variable)) return SplitPaths(listed);
  std::vector<std::string> names;
  for (const char* name : g_flavour->blas_libraries) {
    if (name != nullptr) names.push_back(name);
  }
  std::vector<std::string> candidates = names;
  std::string ignored;
  const std::string runtime = VendorRuntimeLibrary(&ignored);
  const size_t slash = runtime.rfind('/');
  if (slash != std::string::npos) {
    for (const std::string& name : names) candidates.push_back(runtime.substr(0, slash + 1) + name);
  }
  return candidates;
}

struct CublasLibrary {
  CublasFunctions functions;
  bool loaded = false;
  std::string why;
};

CublasLibrary OpenCublas() {
  CublasLibrary cublas;
  std::string tried;
  if (g_flavour == nullptr) {
    cublas.why = "the runtime is not loaded";
    return cublas;
  }
  for (const std::string& candidate : BlasCandidates()) {
    void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* error = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(error != nullptr ? error : candidate);
      continue;
    }
    std::string missing;
#define NV_RESOLVE_CUBLAS_(name, params)                                           \
  Resolve(library, BlasSymbol(*g_flavour, #name).c_str(), &cublas.functions.name); \
  if (cublas.functions.name == nullptr) missing += " " + BlasSymbol(*g_flavour, #name);
    FAMILY_OPERATOR_BLAS_FUNCTIONS(NV_RESOLVE_CUBLAS_)
#undef NV_RESOLVE_CUBLAS_
    if (missing.empty()) {
      cublas.loaded = true;  // kept open until the process exits, as the backend is
      return cublas;
    }
    tried += (tried.empty() ? "" : "; ") + candidate + " lacks" + missing;
    dlclose(library);
  }
  cublas.why = std::string("no usable ") + g_flavour->blas_prefix + " library (" + tried + ")";
  return cublas;
}

// The fatbin loaded once; kernels looked up by name once each.
struct KernelLibrary {
  std::mutex mutex;
  bool tried = false;
  void* library = nullptr;
  std::string why;
  bool architecture = false;
  std::unordered_map<std::string, void*> kernels;
};

KernelLibrary& Kernels() {
  static auto* kernels = new KernelLibrary();  // never destroyed: launches may run at exit
  return *kernels;
}

// Loads the fatbin into kernels.library, or says why not (called with the mutex held).
void LoadKernelLibrary(KernelLibrary& kernels) {
  kernels.tried = true;
  if (ThisVendor().fatbin == nullptr) {
    kernels.why = std::string("the ") + ThisVendor().name +
                  " operator backend has no kernels (nvcc builds them, for NVIDIA GPUs, where the "
                  "CUDA Toolkit is installed)";
    return;
  }
  if (g_runtime.LibraryLoadData == nullptr || g_runtime.LibraryGetKernel == nullptr ||
      g_runtime.LaunchKernel == nullptr) {
    kernels.why =
        "the CUDA Runtime lacks cudaLibraryLoadData, cudaLibraryGetKernel or "
        "cudaLaunchKernel (CUDA 12.0 and later have them)";
    return;
  }
  const int status = g_runtime.LibraryLoadData(&kernels.library, ThisVendor().fatbin, nullptr,
                                               nullptr, 0, nullptr, nullptr, 0);
  if (status != kCudaSuccess) {
    kernels.library = nullptr;
    kernels.architecture =
        status == kCudaErrorNoKernelImageForDevice || status == kCudaErrorUnsupportedPtxVersion;
    kernels.why = "cudaLibraryLoadData failed with CUDA error " + std::to_string(status);
  }
}

}  // namespace

bool LoadRuntime(std::string* why) {
  const std::string path = VendorRuntimeLibrary(why);
  if (path.empty()) return false;
  g_flavour = FlavourOf(path);
  if (g_flavour == nullptr) {
    *why = path + " is of no flavour this backend knows";
    return false;
  }
  // The instance the plugin opened (RTLD_NOLOAD: never a second copy of the runtime).
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) {
    *why = path + " is not loaded";
    return false;
  }
  const std::string prefix = g_flavour->runtime_prefix;
#define NV_RESOLVE_RUNTIME_(name, params) \
  Resolve(library, (prefix + #name).c_str(), &g_runtime.name);
  FAMILY_OPERATOR_RUNTIME_FUNCTIONS(NV_RESOLVE_RUNTIME_)
#undef NV_RESOLVE_RUNTIME_
  if (g_runtime.GetDevice == nullptr) {
    *why = path + " lacks " + prefix + "GetDevice";
    return false;
  }
  return true;
}

const RuntimeFunctions& Runtime() { return g_runtime; }

const CublasFunctions* Cublas(std::string* why) {
  static const CublasLibrary* cublas = new CublasLibrary(OpenCublas());
  if (!cublas->loaded) {
    *why = cublas->why;
    return nullptr;
  }
  return &cublas->functions;
}

void* KernelFunction(const char* name, std::string* why, bool* architecture) {
  KernelLibrary& kernels = Kernels();
  std::lock_guard<std::mutex> lock(kernels.mutex);
  if (!kernels.tried) LoadKernelLibrary(kernels);
  *architecture = kernels.architecture;
  if (kernels.library == nullptr) {
    *why = kernels.why;
    return nullptr;
  }
  auto found = kernels.kernels.find(name);
  if (found != kernels.kernels.end()) return found->second;
  void* kernel = nullptr;
  const int status = g_runtime.LibraryGetKernel(&kernel, kernels.library, name);
  if (status != kCudaSuccess || kernel == nullptr) {
    *why = std::string("the fatbin has no kernel ") + name + " (CUDA error " +
           std::to_string(status) + ")";
    return nullptr;
  }
  kernels.kernels.emplace(name, kernel);
  return kernel;
}

void LogDebug(const std::string& message) {
  static const bool shown = [] {
    const char* level = secure_getenv("INFINIRT_LOG_LEVEL");
    return level != nullptr &&
           (std::strcmp(level, "debug") == 0 || std::strcmp(level, "trace") == 0);
  }();
  if (shown) std::fprintf(stderr, "[infiniop %s] %s\n", ThisVendor().name, message.c_str());
}

}  // namespace infinirt::infiniop_cuda_family
