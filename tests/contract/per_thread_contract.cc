// Compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM and INFINIRT_API_PER_THREAD_DEFAULT_STREAM
// both defined: every CUDA function of infinirt.h is called as the same variant (_ptsz, _ptds or
// none) as CUDA's header calls its namesake.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

#include "infinirt.h"

#if !defined(CUDA_API_PER_THREAD_DEFAULT_STREAM) || !defined(INFINIRT_API_PER_THREAD_DEFAULT_STREAM)
#error "compile with both per-thread default stream macros"
#endif

namespace {

#define INFINIRT_CONTRACT_TEXT_(x) #x
#define INFINIRT_CONTRACT_TEXT(x) INFINIRT_CONTRACT_TEXT_(x)

struct CalledName {
  const char* name;
  std::string ours;    // what infinirt<Name> expands to
  std::string theirs;  // what cuda<Name> expands to
};

// What follows the function's own name: "", "_ptsz" or "_ptds".
std::string Variant(const std::string& called, const std::string& prefix, const char* name) {
  const std::string plain = prefix + name;
  return called.compare(0, plain.size(), plain) == 0 ? called.substr(plain.size()) : called;
}

TEST(CudaContract, PerThreadBuildsCallTheVariantsCudasDo) {
#define INFINIRT_CONTRACT_CALLED(ret, name, params) \
  CalledName{#name, INFINIRT_CONTRACT_TEXT(infinirt##name), INFINIRT_CONTRACT_TEXT(cuda##name)},
  const CalledName names[] = {INFINIRT_CUDA_FUNCTIONS(INFINIRT_CONTRACT_CALLED)};
#undef INFINIRT_CONTRACT_CALLED
  int variants = 0;
  for (const CalledName& called : names) {
    const std::string ours = Variant(called.ours, "infinirt", called.name);
    EXPECT_EQ(ours, Variant(called.theirs, "cuda", called.name))
        << "infinirt" << called.name << " becomes " << called.ours << ", cuda" << called.name << " "
        << called.theirs;
    variants += !ours.empty();
  }
  EXPECT_GT(variants, 30) << "the per-thread macros are not in effect";
}

}  // namespace
