// Every kernel the CUDA family's plans launch is in the fatbin nvcc built (its path in
// INFINIOP_NVIDIA_FATBIN): each operator but Gemm planned on every dtype, on the operator list's
// probe shapes and on the variants that pick other kernels (RMSNorm's and AddRMSNorm's weights of
// another dtype, GPT-NeoX's RoPE, a vocabulary too large for shared memory, TopK's lines too long
// for shared memory with k small and with k large, I32 indices, routers with many experts), and
// each kernel's name
// looked up among the fatbin's symbol names. A row of kernels/elementwise_operators.h, or a plan,
// naming a kernel that was not built fails here rather than at Create on a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "family_plans.h"
#include "operator_probes.h"

namespace infiniop_test {
namespace {

using infinirt::infiniop_cuda_family::DeviceLimits;
using infinirt::infiniop_cuda_family::KernelPlan;
using infinirt::infiniop_cuda_family::MakeKernelPlan;

std::string FatbinPath() {
  const char* path = std::getenv("INFINIOP_NVIDIA_FATBIN");
  return path != nullptr ? path : "";
}

std::string ReadFatbin() {
  std::ifstream in(FatbinPath(), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The probes of every operator with kernels, on every dtype, and the variants.
std::vector<Probe> Probes() {
  std::vector<Probe> probes;
  for (int op = 0; op < INFINIOP_OPERATOR_COUNT; ++op) {
    if (op == INFINIOP_OPERATOR_Gemm) continue;  // cuBLAS's
    for (infiniDtype_t dtype : ProbedDtypes()) {
      probes.push_back(MakeProbe(static_cast<infiniopOperator_t>(op), dtype));
      if (op == INFINIOP_OPERATOR_RMSNorm || op == INFINIOP_OPERATOR_AddRMSNorm) {
        // Weights of another dtype: RMSNorm's w, AddRMSNorm's weight.
        const size_t weight = op == INFINIOP_OPERATOR_RMSNorm ? 2 : 4;
        const Probe same = probes.back();
        for (infiniDtype_t w : ProbedDtypes()) {
          probes.push_back(same);
          probes.back().tensors[weight].dtype = w;
        }
      }
      if (op == INFINIOP_OPERATOR_RoPE) {
        probes.push_back(probes.back());
        probes.back().params.algo = INFINIOP_ROPE_ALGO_GPT_NEOX;
      }
      if (op == INFINIOP_OPERATOR_RandomSample) {
        probes.push_back(probes.back());
        probes.back().tensors[1] = Contiguous(dtype, {size_t{1} << 22});
      }
      if (op == INFINIOP_OPERATOR_TopK) {
        // I32 indices; a long line with k selected into shared memory, then into the workspace.
        const Probe same = probes.back();
        probes.push_back(same);
        probes.back().tensors[1].dtype = INFINI_DTYPE_I32;
        for (size_t k : {size_t{16}, size_t{3000}}) {
          probes.push_back(same);
          probes.back().params.k = k;
          probes.back().params.dim = 1;
          probes.back().tensors = {Contiguous(dtype, {3, k}), Contiguous(INFINI_DTYPE_I64, {3, k}),
                                   Contiguous(dtype, {3, 100000})};
        }
      }
      if (op == INFINIOP_OPERATOR_Topksoftmax || op == INFINIOP_OPERATOR_Topkrouter) {
        probes.push_back(probes.back());  // more experts than the shared sort holds
        probes.back().tensors[2] = Contiguous(dtype, {2, 4096});
        if (op == INFINIOP_OPERATOR_Topkrouter) {
          probes.back().tensors[3] = Contiguous(INFINI_DTYPE_F32, {4096});
        }
      }
    }
  }
  return probes;
}

// The kernel names of the probe's plan; none where the plans refuse the probe.
std::vector<std::string> PlannedKernels(const Probe& probe) {
  std::vector<infiniopBackendTensor> tensors;
  for (const ProbeTensor& t : probe.tensors) {
    tensors.push_back({t.dtype, t.shape.size(), t.shape.data(), t.strides.data()});
  }
  KernelPlan plan;
  std::vector<std::string> names;
  if (MakeKernelPlan(probe.op, tensors.data(), tensors.size(), probe.params, DeviceLimits{},
                     &plan) != INFINI_STATUS_SUCCESS) {
    return names;
  }
  for (const auto& launch : plan.launches) names.emplace_back(launch.kernel);
  return names;
}

TEST(FamilyPlansKernels, EveryPlannedKernelIsInTheFatbin) {
  const std::string fatbin = ReadFatbin();
  ASSERT_FALSE(fatbin.empty()) << "cannot read the fatbin '" << FatbinPath() << "'";
  std::set<std::string> planned;
  for (const Probe& probe : Probes()) {
    for (const std::string& name : PlannedKernels(probe)) planned.insert(name);
  }
  // Each kernel of each operator with kernels: a plan for no operator would prove nothing.
  for (const char* some : {"infiniop_add_f32",
                           "infiniop_swiglu_bf16",
                           "infiniop_rearrange_2",
                           "infiniop_rms_norm_f16_w_f32",
                           "infiniop_rope_gpt_neox_f64",
                           "infiniop_random_sample_large_f32",
                           "infiniop_causal_softmax_f16",
                           "infiniop_layer_norm_f64",
                           "infiniop_add_rms_norm_bf16_w_f32",
                           "infiniop_softmax_f16",
                           "infiniop_log_softmax_bf16",
                           "infiniop_silu_and_mul_f32",
                           "infiniop_embedding_bf16",
                           "infiniop_kv_caching_2",
                           "infiniop_kv_caching_4",
                           "infiniop_paged_caching_2",
                           "infiniop_paged_caching_4",
                           "infiniop_paged_attention_bf16",
                           "infiniop_dense_attention_f16",
                           "infiniop_dequantize_awq_f32",
                           "infiniop_i8_gemm_bf16",
                           "infiniop_topk_f16",
                           "infiniop_topk_workspace_f64",
                           "infiniop_topksoftmax_bf16",
                           "infiniop_topkrouter_f32",
                           "infiniop_mul_scalar_f16"}) {
    EXPECT_EQ(planned.count(some), 1u) << some << " is planned for no probe";
  }
  for (const std::string& name : planned) {
    // A symbol name in the cubins' string tables, whole.
    EXPECT_NE(fatbin.find(std::string(1, '\0') + name + '\0'), std::string::npos)
        << name << " is launched by a plan but the fatbin has no such kernel";
  }
}

}  // namespace
}  // namespace infiniop_test
