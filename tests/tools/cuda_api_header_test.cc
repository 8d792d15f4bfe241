// The cuda_runtime_api.h reader of porting_table (cuda_api_header.h), over a small header written
// the way CUDA's is: no CUDA Toolkit needed.
#include "cuda_api_header.h"

#include <gtest/gtest.h>

#include <string>

namespace porting {
namespace {

const char kSampleHeader[] = R"(
#define CUDART_VERSION  13000
#if defined(__CUDART_API_PER_THREAD_DEFAULT_STREAM)
    #define cudaMemcpyAsync __CUDART_API_PTSZ(cudaMemcpyAsync)
    #define cudaStreamQuery(s) \
        cudaStreamQuery_ptsz(s)
#endif

/** \cond impl_private */
extern __host__ cudaError_t CUDARTAPI cudaPrivateBeforeModules(void);
/** \endcond impl_private */

extern "C" {

/**
 * \defgroup CUDART_DEVICE Device Management
 *
 * This section describes the device management functions. Example, not code:
 * \code
   cudaSetDevice(1);
 * \endcode
 * @{
 */

/**
 * \brief Returns the number of devices
 */
extern __host__ __cudart_builtin__ cudaError_t CUDARTAPI cudaGetDeviceCount(int *count);

extern __host__ struct cudaChannelFormatDesc CUDARTAPI cudaCreateChannelDesc(int x, int y,
    int z, int w, enum cudaChannelFormatKind f);

/* a device-only function is no host API */
extern __device__ cudaError_t CUDARTAPI cudaDeviceOnly(void);

extern __CUDA_DEPRECATED __host__ cudaError_t CUDARTAPI cudaThreadExit(void);

extern __host__ cudaError_t CUDARTAPI cudaStreamGetCaptureInfo(cudaStream_t stream,
    enum cudaStreamCaptureStatus *captureStatus_out, // an output
    unsigned long long *id_out __dv(0));

static __inline__ __host__ cudaError_t cudaInlineHelper(void) { return cudaSuccess; }

/** @} */ /* END CUDART_DEVICE */

/** \defgroup CUDART_OPENGL OpenGL Interoperability */

/**
 * \defgroup CUDART_MEMORY_DEPRECATED Memory Management [DEPRECATED]
 * @{
 */
extern __host__ cudaError_t CUDARTAPI cudaMemcpyToArray(cudaArray_t dst);
/** @} */

/**
 * \addtogroup CUDART_DEVICE
 * @{
 */
#if defined(__cplusplus)
extern __CUDA_DEPRECATED __host__ cudaError_t CUDARTAPI cudaEntry(const char *symbol = NULL);
#else
extern __CUDA_DEPRECATED __host__ cudaError_t CUDARTAPI cudaEntry(const char *symbol);
#endif
extern __host__ cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void *dst);
/** @} */

}

#if defined(__CUDA_API_VERSION_INTERNAL)
    extern __host__ cudaError_t CUDARTAPI cudaGetDeviceCount(int *count);
    extern __host__ cudaError_t CUDARTAPI cudaMemcpyToArray(cudaArray_t dst);
#endif
)";

class CudaApiHeaderTest : public ::testing::Test {
 protected:
  const CudaFunction* Find(const std::string& name) const {
    for (const CudaFunction& function : api_.functions) {
      if (function.name == name) return &function;
    }
    return nullptr;
  }

  const CudaRuntimeApi api_ = ParseCudaRuntimeHeader(kSampleHeader);
};

TEST_F(CudaApiHeaderTest, ReadsTheRuntimeVersion) { EXPECT_EQ(api_.version, 13000); }

TEST_F(CudaApiHeaderTest, ListsEachHostFunctionOnceInDeclarationOrder) {
  std::vector<std::string> names;
  for (const CudaFunction& function : api_.functions) names.push_back(function.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "cudaPrivateBeforeModules", "cudaGetDeviceCount", "cudaCreateChannelDesc",
                "cudaThreadExit", "cudaStreamGetCaptureInfo", "cudaMemcpyToArray", "cudaEntry"}));
}

TEST_F(CudaApiHeaderTest, NamesModulesWithTheirTitles) {
  ASSERT_EQ(api_.modules.size(), 3u);
  EXPECT_EQ(api_.modules[0].id, "CUDART_DEVICE");
  EXPECT_EQ(api_.modules[0].title, "Device Management");
  EXPECT_EQ(api_.modules[1].title, "OpenGL Interoperability");  // defined, never opened
  EXPECT_EQ(api_.modules[2].title, "Memory Management [DEPRECATED]");
  ASSERT_NE(api_.FindModule("CUDART_MEMORY_DEPRECATED"), nullptr);
  EXPECT_EQ(api_.FindModule("CUDART_NONE"), nullptr);
}

TEST_F(CudaApiHeaderTest, PlacesFunctionsInTheModuleOpenAtTheirDeclaration) {
  EXPECT_EQ(Find("cudaPrivateBeforeModules")->module_id, "");
  EXPECT_EQ(Find("cudaGetDeviceCount")->module_id, "CUDART_DEVICE");  // __cudart_builtin__
  EXPECT_EQ(Find("cudaThreadExit")->module_id, "CUDART_DEVICE");
  EXPECT_EQ(Find("cudaMemcpyToArray")->module_id, "CUDART_MEMORY_DEPRECATED");
  EXPECT_EQ(Find("cudaEntry")->module_id, "CUDART_DEVICE");  // reopened by \addtogroup
}

TEST_F(CudaApiHeaderTest, ReadsPrototypesOverSeveralLinesAndStructReturns) {
  ASSERT_NE(Find("cudaCreateChannelDesc"), nullptr);
  ASSERT_NE(Find("cudaStreamGetCaptureInfo"), nullptr);
  EXPECT_EQ(Find("cudaStreamGetCaptureInfo")->module_id, "CUDART_DEVICE");
}

TEST_F(CudaApiHeaderTest, MarksDeprecatedFunctions) {
  EXPECT_TRUE(Find("cudaThreadExit")->deprecated);     // __CUDA_DEPRECATED
  EXPECT_TRUE(Find("cudaEntry")->deprecated);          // both declarations marked
  EXPECT_TRUE(Find("cudaMemcpyToArray")->deprecated);  // in a [DEPRECATED] module
  EXPECT_FALSE(Find("cudaGetDeviceCount")->deprecated);
  EXPECT_FALSE(Find("cudaStreamGetCaptureInfo")->deprecated);
}

TEST_F(CudaApiHeaderTest, SkipsMacrosCommentsDeviceFunctionsInlinesAndPerThreadVariants) {
  EXPECT_EQ(Find("cudaSetDevice"), nullptr);     // in a comment
  EXPECT_EQ(Find("cudaDeviceOnly"), nullptr);    // __device__ only
  EXPECT_EQ(Find("cudaInlineHelper"), nullptr);  // static inline, not extern
  EXPECT_EQ(Find("cudaMemcpyAsync"), nullptr);   // a #define only
  EXPECT_EQ(Find("cudaStreamQuery_ptsz"), nullptr);
  EXPECT_EQ(Find("cudaMemcpyAsync_ptsz"), nullptr);
}

TEST(CudaApiHeader, GroupCommandsAndIngroup) {
  const CudaRuntimeApi api = ParseCudaRuntimeHeader(R"(
/** \defgroup CUDART_A First @{ */
/** @{ */  /* a member group: CUDART_A stays open */
/** @} */
extern __host__ cudaError_t cudaInA(void);
/** \ingroup CUDART_B */
extern __host__ cudaError_t cudaPlacedInB(void);
extern __host__ cudaError_t cudaBackInA(void);
/** @} */
extern __host__ cudaError_t cudaOutside(void);
/** @} */  /* unbalanced: ignored */
/** \addtogroup CUDART_B Second
 * @{ */
extern __host__ cudaError_t cudaInB(void);
)");
  ASSERT_EQ(api.functions.size(), 5u);
  EXPECT_EQ(api.functions[0].module_id, "CUDART_A");
  EXPECT_EQ(api.functions[1].module_id, "CUDART_B");
  EXPECT_EQ(api.functions[2].module_id, "CUDART_A");
  EXPECT_EQ(api.functions[3].module_id, "");
  EXPECT_EQ(api.functions[4].module_id, "CUDART_B");
  ASSERT_EQ(api.modules.size(), 2u);
  EXPECT_EQ(api.modules[1].title, "Second");
  EXPECT_EQ(api.version, 0);
}

}  // namespace
}  // namespace porting
