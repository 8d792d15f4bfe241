// Every operator of the list, probed with bad input through its public entry points: NULL and
// destroyed handles, descriptors and outputs, a descriptor of another operator, a destroyed
// operator descriptor. Each gets InfiniCore's status, never a crash; the operator still works
// after. Nothing here names an operator: a new entry of INFINIOP_OPERATORS is probed as it is.
#include <string>
#include <vector>

#include "infiniop_test_support.h"
#include "operator_probes.h"

namespace infiniop_test {
namespace {

// The probe's tensor descriptors (F32 data), destroyed with it.
class ProbeDescriptors {
 public:
  explicit ProbeDescriptors(const Probe& probe) {
    for (const ProbeTensor& tensor : probe.tensors) {
      infiniopTensorDescriptor_t desc = nullptr;
      EXPECT_EQ(infiniopCreateTensorDescriptor(&desc, tensor.shape.size(), tensor.shape.data(),
                                               tensor.strides.data(), tensor.dtype),
                INFINI_STATUS_SUCCESS);
      descriptors_.push_back(desc);
    }
  }
  ~ProbeDescriptors() {
    for (infiniopTensorDescriptor_t desc : descriptors_) infiniopDestroyTensorDescriptor(desc);
  }
  const std::vector<infiniopTensorDescriptor_t>& get() const { return descriptors_; }

 private:
  std::vector<infiniopTensorDescriptor_t> descriptors_;
};

std::vector<infiniopOperator_t> ListedOperators() {
  return {
#define LISTED_OPERATOR_(name, ...) INFINIOP_OPERATOR_##name,
      INFINIOP_OPERATORS(LISTED_OPERATOR_)
#undef LISTED_OPERATOR_
  };
}

// A destroyed tensor descriptor (its address may be given to the next one made).
infiniopTensorDescriptor_t DestroyedTensor() {
  const size_t shape[] = {4};
  infiniopTensorDescriptor_t desc = nullptr;
  EXPECT_EQ(infiniopCreateTensorDescriptor(&desc, 1, shape, nullptr, INFINI_DTYPE_F32),
            INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopDestroyTensorDescriptor(desc), INFINI_STATUS_SUCCESS);
  return desc;
}

TEST_F(InfiniopTest, EveryListedOperatorRefusesBadInputWithAStatus) {
  infiniopHandle_t gone = nullptr;
  ASSERT_EQ(infiniopCreateHandle(&gone), INFINI_STATUS_SUCCESS);
  ASSERT_EQ(infiniopDestroyHandle(gone), INFINI_STATUS_SUCCESS);
  for (infiniopOperator_t op : ListedOperators()) {
    SCOPED_TRACE(OperatorName(op));
    const Probe probe = MakeProbe(op, INFINI_DTYPE_F32);
    const ProbeDescriptors tensors(probe);
    const std::vector<infiniopTensorDescriptor_t>& t = tensors.get();
    InfiniopDescriptor* desc = nullptr;
    EXPECT_EQ(CreateDescriptor(op, nullptr, &desc, t), INFINI_STATUS_NULL_POINTER);
    EXPECT_EQ(CreateDescriptor(op, handle, nullptr, t), INFINI_STATUS_NULL_POINTER);
    EXPECT_EQ(CreateDescriptor(op, gone, &desc, t), INFINI_STATUS_BAD_PARAM);
    for (size_t i = 0; i < t.size(); ++i) {
      if (!Described(op, i)) continue;  // Create takes no descriptor for it
      std::vector<infiniopTensorDescriptor_t> bad = t;
      bad[i] = nullptr;
      if (infiniopOperatorTensorOptional(op, i)) {  // absent: accepted
        EXPECT_EQ(CreateDescriptor(op, handle, &desc, bad), INFINI_STATUS_SUCCESS) << i;
        EXPECT_EQ(DestroyDescriptor(op, desc), INFINI_STATUS_SUCCESS) << i;
        desc = nullptr;
      } else {
        EXPECT_EQ(CreateDescriptor(op, handle, &desc, bad), INFINI_STATUS_NULL_POINTER) << i;
      }
      bad[i] = DestroyedTensor();  // made just before: its memory is not yet another's
      EXPECT_EQ(CreateDescriptor(op, handle, &desc, bad), INFINI_STATUS_BAD_PARAM) << i;
    }
    EXPECT_EQ(desc, nullptr) << "a refused Create wrote the descriptor";

    ASSERT_EQ(CreateDescriptor(op, handle, &desc, t), INFINI_STATUS_SUCCESS);
    const std::vector<void*> no_buffers(t.size(), nullptr);
    EXPECT_EQ(CallOperator(op, nullptr, nullptr, 0, no_buffers, stream),
              INFINI_STATUS_NULL_POINTER);
    // The descriptor, given to another operator's call and destroy.
    const infiniopOperator_t other = op == ListedOperators()[0] ? ListedOperators()[1]
                                                                : ListedOperators()[0];
    const std::vector<void*> other_buffers(MakeProbe(other, INFINI_DTYPE_F32).tensors.size());
    EXPECT_EQ(CallOperator(other, desc, nullptr, 0, other_buffers, stream),
              INFINI_STATUS_BAD_PARAM);
    EXPECT_EQ(DestroyDescriptor(other, desc), INFINI_STATUS_BAD_PARAM);
    EXPECT_EQ(DestroyDescriptor(op, desc), INFINI_STATUS_SUCCESS);
    // Used after it was destroyed.
    EXPECT_EQ(CallOperator(op, desc, nullptr, 0, no_buffers, stream), INFINI_STATUS_BAD_PARAM);
    EXPECT_EQ(DestroyDescriptor(op, desc), INFINI_STATUS_BAD_PARAM);
    EXPECT_EQ(DestroyDescriptor(op, nullptr), INFINI_STATUS_NULL_POINTER);
    // And it still works.
    desc = nullptr;
    EXPECT_EQ(CreateDescriptor(op, handle, &desc, t), INFINI_STATUS_SUCCESS);
    EXPECT_EQ(DestroyDescriptor(op, desc), INFINI_STATUS_SUCCESS);
  }
}

}  // namespace
}  // namespace infiniop_test
