// Why a CUDA Runtime function has no InfiniRT counterpart: the one hand-kept input of the table
// in docs/porting.md (porting_table.cc generates the rest).
//
// A key is either a module of cuda_runtime_api.h (its doxygen group name, "CUDART_OCCUPANCY") or
// the start of function names ("cudaGraphKernelNode" covers cudaGraphKernelNodeGetParams, ...).
// An absent function takes the reason of the longest name key it starts with, else its module's;
// a function no key matches shows as "absent — not yet implemented". A function InfiniRT
// declares is available whatever this table says. A key that matches no module and no function
// of the header fails the generator (a typo, or CUDA removed it).
#pragma once

namespace porting {

struct AbsenceReason {
  const char* key;     // "CUDART_..." module, or "cuda..." name prefix
  const char* reason;  // shown after "absent — "
};

inline constexpr char kNoKernels[] = "kernels are not part of InfiniRT yet";
inline constexpr char kNoDeviceSymbols[] =
    "`__device__` variables belong to compiled device code; kernels are not part of InfiniRT yet";
inline constexpr char kNoTextures[] =
    "no texture hardware abstraction (textures, surfaces, CUDA arrays); not planned";
inline constexpr char kNoGraphicsInterop[] =
    "graphics interop (OpenGL, Direct3D, VDPAU, EGL) is out of scope";
inline constexpr char kNoExternalResources[] =
    "external resource interop (Vulkan, Direct3D, NvSci memory and semaphores) is out of scope";
inline constexpr char kNvidiaOnly[] =
    "NVIDIA's CUDA Driver API, which other vendors lack: out of scope";

inline constexpr AbsenceReason kAbsenceReasons[] = {
    // Kernels: launching, attributes, occupancy, device code libraries.
    {"CUDART_EXECUTION", kNoKernels},
    {"CUDART_EXECUTION_DEPRECATED", kNoKernels},
    {"CUDART_OCCUPANCY", kNoKernels},
    {"CUDART_LIBRARY", kNoKernels},
    {"CUDART_DRIVER", kNoKernels},             // cudaGetKernel, cudaGetFuncBySymbol
    {"CUDART_DEVICE_DEPRECATED", kNoKernels},  // kernels' shared memory bank configuration
    {"cudaGraphAddKernelNode", kNoKernels},
    {"cudaGraphKernelNode", kNoKernels},
    {"cudaGraphExecKernelNode", kNoKernels},
    {"cudaGraphConditionalHandleCreate", kNoKernels},  // conditions are set by device code
    {"cudaGetSymbol", kNoDeviceSymbols},
    {"cudaMemcpyToSymbol", kNoDeviceSymbols},
    {"cudaMemcpyFromSymbol", kNoDeviceSymbols},
    {"cudaGraphAddMemcpyNodeToSymbol", kNoDeviceSymbols},
    {"cudaGraphAddMemcpyNodeFromSymbol", kNoDeviceSymbols},
    {"cudaGraphMemcpyNodeSetParamsToSymbol", kNoDeviceSymbols},
    {"cudaGraphMemcpyNodeSetParamsFromSymbol", kNoDeviceSymbols},
    {"cudaGraphExecMemcpyNodeSetParamsToSymbol", kNoDeviceSymbols},
    {"cudaGraphExecMemcpyNodeSetParamsFromSymbol", kNoDeviceSymbols},

    // Textures, surfaces and the CUDA arrays and mipmapped arrays behind them.
    {"CUDART_TEXTURE_OBJECT", kNoTextures},
    {"CUDART_SURFACE_OBJECT", kNoTextures},
    {"CUDART_MEMORY_DEPRECATED", kNoTextures},  // the cudaMemcpy*Array* copies
    {"cudaArray", kNoTextures},
    {"cudaMallocArray", kNoTextures},
    {"cudaMalloc3DArray", kNoTextures},
    {"cudaMallocMipmappedArray", kNoTextures},
    {"cudaFreeArray", kNoTextures},
    {"cudaFreeMipmappedArray", kNoTextures},
    {"cudaGetMipmappedArrayLevel", kNoTextures},
    {"cudaMipmappedArray", kNoTextures},
    {"cudaMemcpy2DToArray", kNoTextures},
    {"cudaMemcpy2DFromArray", kNoTextures},
    {"cudaMemcpy2DArrayToArray", kNoTextures},
    {"cudaDeviceGetTexture1DLinearMaxWidth", kNoTextures},

    // Interop with other APIs.
    {"CUDART_INTEROP", kNoGraphicsInterop},
    {"CUDART_EXTRES_INTEROP", kNoExternalResources},
    {"cudaGraphAddExternalSemaphores", kNoExternalResources},
    {"cudaGraphExternalSemaphores", kNoExternalResources},
    {"cudaGraphExecExternalSemaphores", kNoExternalResources},
    {"cudaDeviceGetNvSciSyncAttributes", kNoExternalResources},

    // NVIDIA's own.
    {"CUDART_DRIVER_ENTRY_POINT", kNvidiaOnly},
    {"cudaGetExportTable", "CUDA's undocumented export table for NVIDIA's libraries: out of scope"},
};

}  // namespace porting
