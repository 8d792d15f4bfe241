// Reads the function list of CUDA's cuda_runtime_api.h, grouped as the header's own doxygen
// modules group it ("\defgroup CUDART_DEVICE Device Management", "\addtogroup", "@{" ... "@}"),
// for docs/porting.md's table (porting_table.cc).
//
// A function is an `extern` declaration marked `__host__` whose name starts with "cuda"
// (`__cudart_builtin__` ones included). Preprocessor lines (the `#define cudaX cudaX_ptds`
// redirections among them) and comments are not code; `_ptsz`/`_ptds` per-thread variants are
// left out. A name declared more than once (C and C++ alternatives, the internal redeclarations
// at the end of the header) is listed once, in the module of its first declaration.
#pragma once

#include <string>
#include <vector>

namespace porting {

struct CudaModule {
  std::string id;     // the group's name: CUDART_DEVICE
  std::string title;  // its title: Device Management
};

struct CudaFunction {
  std::string name;       // cudaMalloc
  std::string module_id;  // the group open at its declaration; "" outside every group
  // Marked __CUDA_DEPRECATED or CUDART_DEPRECATED, or declared in a module whose title says
  // "[DEPRECATED]".
  bool deprecated = false;
};

struct CudaRuntimeApi {
  int version = 0;                      // CUDART_VERSION; 0 where the header does not define it
  std::vector<CudaModule> modules;      // every group the header names, in order of appearance
  std::vector<CudaFunction> functions;  // one per name, in order of first declaration

  // The module named `id`, or nullptr.
  const CudaModule* FindModule(const std::string& id) const;
};

CudaRuntimeApi ParseCudaRuntimeHeader(const std::string& text);

}  // namespace porting
