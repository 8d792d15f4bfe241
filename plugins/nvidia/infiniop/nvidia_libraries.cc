// The NVIDIA operator backend's vendor libraries: the CUDA Runtime (the NVIDIA runtime plugin's),
// cuBLAS (opened with dlopen on first use) and the backend's own kernels (a fatbin built into the
// backend, loaded with cudaLibraryLoadData on first use).
#include <dlfcn.h>
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "infinirt.h"
#include "nvidia_backend.h"

#ifdef INFINIOP_NVIDIA_KERNELS
// The fatbin nvcc made of kernels/*.cu, from nvidia_fatbin.c.
extern "C" const unsigned char infiniop_nvidia_fatbin[];
#endif

namespace infinirt::infiniop_nvidia {

namespace {

RuntimeFunctions g_runtime;

// The path of the library the loaded NVIDIA runtime plugin uses, or "" with the reason.
std::string NvidiaRuntimeLibrary(std::string* why) {
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
    if (prop.deviceType != INFINI_DEVICE_NVIDIA || prop.status != infinirtBackendLoaded) continue;
    if (prop.runtimeLibrary[0] != '\0') return prop.runtimeLibrary;
  }
  *why = "the NVIDIA runtime plugin is not loaded";
  return "";
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

// Where to look for cuBLAS: the variable's list, or the names and the CUDA Runtime's directory.
std::vector<std::string> CublasCandidates() {
  if (const char* listed = secure_getenv("INFINIOP_NVIDIA_CUBLAS")) return SplitPaths(listed);
  std::vector<std::string> candidates = {"libcublas.so.13", "libcublas.so.12"};
  std::string ignored;
  const std::string runtime = NvidiaRuntimeLibrary(&ignored);
  const size_t slash = runtime.rfind('/');
  if (slash != std::string::npos) {
    const std::string directory = runtime.substr(0, slash + 1);
    candidates.push_back(directory + "libcublas.so.13");
    candidates.push_back(directory + "libcublas.so.12");
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
  for (const std::string& candidate : CublasCandidates()) {
    void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* error = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(error != nullptr ? error : candidate);
      continue;
    }
    std::string missing;
#define NV_RESOLVE_CUBLAS_(name, params)           \
  Resolve(library, #name, &cublas.functions.name); \
  if (cublas.functions.name == nullptr) missing += " " #name;
    NVIDIA_OPERATOR_CUBLAS_FUNCTIONS(NV_RESOLVE_CUBLAS_)
#undef NV_RESOLVE_CUBLAS_
    if (missing.empty()) {
      cublas.loaded = true;  // kept open until the process exits, as the backend is
      return cublas;
    }
    tried += (tried.empty() ? "" : "; ") + candidate + " lacks" + missing;
    dlclose(library);
  }
  cublas.why = "no usable cuBLAS (" + tried + ")";
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
#ifndef INFINIOP_NVIDIA_KERNELS
  kernels.why = "this backend was built without the CUDA Toolkit's nvcc: it has no kernels";
#else
  if (g_runtime.LibraryLoadData == nullptr || g_runtime.LibraryGetKernel == nullptr ||
      g_runtime.LaunchKernel == nullptr) {
    kernels.why =
        "the CUDA Runtime lacks cudaLibraryLoadData, cudaLibraryGetKernel or "
        "cudaLaunchKernel (CUDA 12.0 and later have them)";
    return;
  }
  const int status = g_runtime.LibraryLoadData(&kernels.library, infiniop_nvidia_fatbin, nullptr,
                                               nullptr, 0, nullptr, nullptr, 0);
  if (status != kCudaSuccess) {
    kernels.library = nullptr;
    kernels.architecture =
        status == kCudaErrorNoKernelImageForDevice || status == kCudaErrorUnsupportedPtxVersion;
    kernels.why = "cudaLibraryLoadData failed with CUDA error " + std::to_string(status);
  }
#endif
}

}  // namespace

bool LoadRuntime(std::string* why) {
  const std::string path = NvidiaRuntimeLibrary(why);
  if (path.empty()) return false;
  // The instance the plugin opened (RTLD_NOLOAD: never a second copy of the runtime).
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) {
    *why = path + " is not loaded";
    return false;
  }
#define NV_RESOLVE_RUNTIME_(name, params) Resolve(library, "cuda" #name, &g_runtime.name);
  NVIDIA_OPERATOR_RUNTIME_FUNCTIONS(NV_RESOLVE_RUNTIME_)
#undef NV_RESOLVE_RUNTIME_
  if (g_runtime.GetDevice == nullptr) {
    *why = path + " lacks cudaGetDevice";
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
  if (shown) std::fprintf(stderr, "[infiniop nvidia] %s\n", message.c_str());
}

}  // namespace infinirt::infiniop_nvidia
