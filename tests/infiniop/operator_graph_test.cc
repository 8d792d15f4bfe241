// Every operator of the list, on its probe tensors (F32 data, random; index tensors small valid
// positions), run three ways that must agree bit for bit: directly; queued behind a closed gate
// between async copies (the operator sees the copies' data, the copy out its result, with no
// synchronisation in between); and captured into a graph replayed a hundred times, the outputs
// given their first contents again before each replay (so that a replay that computes nothing
// shows, and an operator that updates its outputs in part starts alike). Nothing here names an
// operator.
#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "infiniop_test_support.h"
#include "operator_probes.h"
#include "test_support.h"

namespace infiniop_test {
namespace {

// The probe's tensors, made and filled.
class ProbeTensors {
 public:
  explicit ProbeTensors(const Probe& probe) {
    std::mt19937 random(41);
    for (const ProbeTensor& t : probe.tensors) {
      tensors_.push_back(std::make_unique<Tensor>(Layout{t.shape, t.strides}, t.dtype));
      Tensor& tensor = *tensors_.back();
      if (IsInteger(t.dtype)) {
        for (size_t i = 0; i < tensor.layout().Elements(); ++i) tensor.Set(i, i % 4);
      } else {
        tensor.FillRandom(&random, false);
      }
      initial_.emplace_back();
      for (size_t i = 0; i < tensor.layout().Elements(); ++i)
        initial_.back().push_back(tensor.At(i));
    }
  }
  // Queues the outputs' first contents again: an operator that updates its outputs in part
  // (PagedCaching's caches) starts from them each time, and one that computes nothing leaves
  // them, unlike its result.
  void ResetOutputs(const std::vector<bool>& outputs, infinirtStream_t stream) {
    for (size_t t = 0; t < outputs.size(); ++t) {
      if (!outputs[t]) continue;
      for (size_t i = 0; i < initial_[t].size(); ++i) tensors_[t]->Set(i, initial_[t][i]);
      tensors_[t]->Upload(stream);
    }
  }
  std::vector<InfiniopTensorDescriptor*> descriptors() const {
    std::vector<InfiniopTensorDescriptor*> descriptors;
    for (const auto& t : tensors_) descriptors.push_back(t->desc());
    return descriptors;
  }
  std::vector<void*> buffers() const {
    std::vector<void*> buffers;
    for (const auto& t : tensors_) buffers.push_back(t->data());
    return buffers;
  }
  Tensor& operator[](size_t i) { return *tensors_[i]; }
  size_t size() const { return tensors_.size(); }

 private:
  std::vector<std::unique_ptr<Tensor>> tensors_;
  std::vector<std::vector<double>> initial_;
};

// The outputs' host bytes, after a download.
std::vector<std::vector<double>> Outputs(ProbeTensors& tensors, const std::vector<bool>& outputs) {
  std::vector<std::vector<double>> values(outputs.size());
  for (size_t t = 0; t < outputs.size(); ++t) {
    if (!outputs[t]) continue;
    for (size_t i = 0; i < tensors[t].layout().Elements(); ++i)
      values[t].push_back(tensors[t].At(i));
  }
  return values;
}

void Download(ProbeTensors& tensors, const std::vector<bool>& outputs, infinirtStream_t stream) {
  for (size_t t = 0; t < outputs.size(); ++t) {
    if (outputs[t]) tensors[t].Download(stream);
  }
}

void UploadInputs(ProbeTensors& tensors, const std::vector<bool>& outputs,
                  infinirtStream_t stream) {
  for (size_t t = 0; t < outputs.size(); ++t) {
    if (!outputs[t]) tensors[t].Upload(stream);
  }
}

// Equal, NaN included (an operator that writes NaN, Embedding for an index out of range, does so
// every time).
bool Same(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  for (size_t t = 0; t < a.size(); ++t) {
    if (a[t].size() != b[t].size()) return false;
    if (!a[t].empty() && std::memcmp(a[t].data(), b[t].data(), a[t].size() * sizeof(double)) != 0) {
      return false;
    }
  }
  return true;
}

std::vector<infiniopOperator_t> AllOperators() {
  return {
#define ALL_OPERATORS_(name, ...) INFINIOP_OPERATOR_##name,
      INFINIOP_OPERATORS(ALL_OPERATORS_)
#undef ALL_OPERATORS_
  };
}

TEST_F(InfiniopTest, EveryOperatorRunsInStreamOrderAndReplaysInAGraphAsItRuns) {
  for (infiniopOperator_t op : AllOperators()) {
    SCOPED_TRACE(OperatorName(op));
    if (VendorLacksOperator(handle, device_type, op)) continue;
    const Probe probe = MakeProbe(op, INFINI_DTYPE_F32);
    ProbeTensors tensors(probe);
    const std::vector<bool> outputs = OutputFlags(op);
    InfiniopDescriptor* desc = nullptr;
    ASSERT_EQ(CreateDescriptor(op, handle, &desc, tensors.descriptors()), INFINI_STATUS_SUCCESS);
    size_t workspace_size = 0;
    ASSERT_EQ(WorkspaceSize(op, desc, &workspace_size), INFINI_STATUS_SUCCESS);
    DeviceBuffer workspace(workspace_size);
    auto call = [&] {
      return CallOperator(op, desc, workspace.data(), workspace_size, tensors.buffers(), stream);
    };

    // Directly.
    tensors.ResetOutputs(outputs, stream);
    UploadInputs(tensors, outputs, stream);
    ASSERT_EQ(call(), INFINI_STATUS_SUCCESS);
    Download(tensors, outputs, stream);
    ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    const std::vector<std::vector<double>> expected = Outputs(tensors, outputs);

    // Behind a gate, between copies.
    infinirt::testing::Gate gate;
    ASSERT_EQ(gate.Block(stream), infinirtSuccess);
    tensors.ResetOutputs(outputs, stream);
    UploadInputs(tensors, outputs, stream);
    ASSERT_EQ(call(), INFINI_STATUS_SUCCESS);
    Download(tensors, outputs, stream);
    EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
    infinirtGetLastError();
    gate.Open();
    ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    EXPECT_FALSE(gate.timed_out());
    EXPECT_TRUE(Same(Outputs(tensors, outputs), expected)) << "in stream order";

    // Captured, replayed.
    ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeThreadLocal),
              infinirtSuccess);
    ASSERT_EQ(call(), INFINI_STATUS_SUCCESS);
    infinirtGraph_t graph = nullptr;
    ASSERT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtSuccess);
    infinirtGraphExec_t exec = nullptr;
    ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
    for (int replay = 0; replay < 100; ++replay) {
      tensors.ResetOutputs(outputs, stream);
      ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
      Download(tensors, outputs, stream);
      ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
      ASSERT_TRUE(Same(Outputs(tensors, outputs), expected)) << "replay " << replay;
    }
    EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
    EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
    EXPECT_EQ(DestroyDescriptor(op, desc), INFINI_STATUS_SUCCESS);
  }
}

// On the CPU backend a small call on an idle stream runs in the caller (infinirtLaunchHostWork):
// its output is written when the call returns. Behind pending work it waits its turn.
TEST_F(InfiniopTest, ASmallCpuCallOnAnIdleStreamIsDoneWhenItReturns) {
  if (device_type != INFINI_DEVICE_CPU) GTEST_SKIP() << "the CPU backend's behaviour";
  constexpr size_t kCount = 1024;  // 12 KiB in all: under the 64 MiB threshold of host work
  std::vector<float> a(kCount, 1.5f), b(kCount, 2.0f), c(kCount, 0.0f);
  const size_t shape[] = {kCount};
  infiniopTensorDescriptor_t desc_t = nullptr;
  ASSERT_EQ(infiniopCreateTensorDescriptor(&desc_t, 1, shape, nullptr, INFINI_DTYPE_F32),
            INFINI_STATUS_SUCCESS);
  infiniopAddDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateAddDescriptor(handle, &desc, desc_t, desc_t, desc_t),
            INFINI_STATUS_SUCCESS);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  ASSERT_EQ(infiniopAdd(desc, nullptr, 0, c.data(), a.data(), b.data(), stream),
            INFINI_STATUS_SUCCESS);
  EXPECT_EQ(c[0], 3.5f) << "not done when the call returned";
  EXPECT_EQ(c[kCount - 1], 3.5f);

  infinirt::testing::Gate gate;
  ASSERT_EQ(gate.Block(stream), infinirtSuccess);
  std::fill(b.begin(), b.end(), 4.0f);
  ASSERT_EQ(infiniopAdd(desc, nullptr, 0, c.data(), a.data(), b.data(), stream),
            INFINI_STATUS_SUCCESS);
  EXPECT_EQ(c[0], 3.5f) << "ran ahead of the pending work";
  gate.Open();
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(c[0], 5.5f);
  EXPECT_EQ(infiniopDestroyAddDescriptor(desc), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopDestroyTensorDescriptor(desc_t), INFINI_STATUS_SUCCESS);
}

}  // namespace
}  // namespace infiniop_test
