// The API contract (docs/porting.md), checked against the CUDA Toolkit's own headers: every
// InfiniRT function has the renamed CUDA prototype, every enum value and flag has CUDA's number,
// and the structs keep CUDA's field types. Compiled against the CUDA headers only; libcudart is
// not linked.
//
// Where possible the checks are driven by infinirt.h's own X-macro lists and by the text of the
// headers, so that an entry added to infinirt.h (or to CUDA) is checked without editing this file.
// Type mismatches are recorded in tables and reported by the tests (no static_assert), so one
// mismatch names itself instead of stopping the whole file from compiling.

// Removes InfiniRT's C++ overloads so that &infinirtMalloc names the one C function.
#define INFINIRT_NO_CXX_OVERLOADS
#include "infinirt.h"

// The C declarations only, as CUDA's cuda_runtime.h would add C++ overloads.
#include <cuda_runtime_api.h>
// make_cudaPitchedPtr and the other makers, without cuda_runtime.h's C++ overloads (which would
// make &cudaMalloc ambiguous). cuda_runtime.h includes driver_functions.h the same way.
#define __CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__
#include <driver_functions.h>
#undef __CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "contract_support.h"
#include "cuda_rename.h"

#ifndef INFINIRT_CONTRACT_DRIVER_TYPES_H
#error "INFINIRT_CONTRACT_DRIVER_TYPES_H (path of CUDA's driver_types.h) must be defined"
#endif
#ifndef INFINIRT_CONTRACT_INFINIRT_H
#error "INFINIRT_CONTRACT_INFINIRT_H (path of include/infinirt.h) must be defined"
#endif
#ifndef INFINIRT_CONTRACT_CUDA_INCLUDE_DIR
#error "INFINIRT_CONTRACT_CUDA_INCLUDE_DIR (the CUDA headers' directory) must be defined"
#endif

namespace infinirt::contract {
namespace {

// ---------------------------------------------------------------------------------------------
// Header text, read once.
// ---------------------------------------------------------------------------------------------

// The comment-free text of a header; empty when unreadable (the tests then fail, naming the path).
const std::string& HeaderText(const std::string& path) {
  static std::map<std::string, std::string> cache;
  auto found = cache.find(path);
  if (found == cache.end()) {
    found = cache.emplace(path, StripComments(ReadFile(path).value_or(""))).first;
  }
  return found->second;
}

const std::string& CudaDriverTypesText() { return HeaderText(INFINIRT_CONTRACT_DRIVER_TYPES_H); }
const std::string& InfinirtHeaderText() { return HeaderText(INFINIRT_CONTRACT_INFINIRT_H); }

// ---------------------------------------------------------------------------------------------
// The header reader, on text shaped like CUDA's.
// ---------------------------------------------------------------------------------------------

TEST(ContractSupport, ReadsEnumsStructsAndDefines) {
  const std::string text = StripComments(R"(
    enum __device_builtin__ sample { a = 0x10, /* b = 99, */ b, c = (-2)
      , d = a  // alias
    };
    enum sample s;
    struct __device_builtin__ point { int x, y; char name[N]; long reserved[8]; };
    #define sampleFlag 0x04 /* #define sampleHidden 1 */
    #  define sampleHandle ((void*)0x1)
    #define sampleMacro(x) (x)
    #define SAMPLE_UPPER 1
  )");
  std::string error;
  const auto enumerators = ParseEnum(text, "sample", &error);
  ASSERT_TRUE(enumerators.has_value()) << error;
  ASSERT_EQ(enumerators->size(), 4u);
  EXPECT_EQ((*enumerators)[0].value, 16);
  EXPECT_EQ((*enumerators)[1].name, "b");
  EXPECT_EQ((*enumerators)[1].value, 17);
  EXPECT_EQ((*enumerators)[2].value, -2);
  EXPECT_EQ((*enumerators)[3].value, 16);
  EXPECT_FALSE(ParseEnum(text, "missing", &error).has_value());
  EXPECT_EQ(ParseStructFields(text, "point", &error),
            (std::vector<std::string>{"x", "y", "name", "reserved"}));
  EXPECT_EQ(ObjectMacrosWithPrefix(text, "sample"),
            (std::vector<std::string>{"sampleFlag", "sampleHandle"}));
}

// ---------------------------------------------------------------------------------------------
// Rename itself.
// ---------------------------------------------------------------------------------------------

template <class Cuda, class Expected>
testing::AssertionResult RenamesTo() {
  if (std::is_same_v<RenameT<Cuda>, Expected>) return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << Demangle(typeid(Cuda)) << " renames to " << Demangle(typeid(RenameT<Cuda>))
         << ", expected " << Demangle(typeid(Expected));
}

TEST(ContractRename, RecursesThroughCompoundTypes) {
  EXPECT_TRUE((RenamesTo<int, int>()));
  EXPECT_TRUE((RenamesTo<cudaError_t, infinirtError_t>()));
  EXPECT_TRUE((RenamesTo<const cudaStream_t*, const infinirtStream_t*>()));
  EXPECT_TRUE((RenamesTo<cudaEvent_t* const, infinirtEvent_t* const>()));
  EXPECT_TRUE((RenamesTo<volatile cudaGraph_t&, volatile infinirtGraph_t&>()));
  EXPECT_TRUE((RenamesTo<const cudaUUID_t[2], const infinirtUUID_t[2]>()));
  EXPECT_TRUE((RenamesTo<cudaHostFn_t, infinirtHostFn_t>()));
  EXPECT_TRUE(
      (RenamesTo<cudaError_t(cudaStream_t, ...), infinirtError_t(infinirtStream_t, ...)>()));
  EXPECT_TRUE((RenamesTo<cudaError_t (*)(struct cudaDeviceProp*, int) noexcept,
                         infinirtError_t (*)(struct infinirtDeviceProp*, int) noexcept>()));
  // A type it does not know stays as it is, so a mismatch shows the CUDA name.
  EXPECT_FALSE((std::is_same_v<RenameT<cudaArray_t>, infinirtStream_t>));
}

// ---------------------------------------------------------------------------------------------
// 1. Function prototypes: &infinirt<Name> has the type of &cuda<Name>, renamed.
// ---------------------------------------------------------------------------------------------

struct FunctionRow {
  const char* name;  // without prefix
  bool same;
  const std::type_info* ours;
  const std::type_info* renamed_cuda;
};

template <class Ours, class Cuda>
constexpr FunctionRow MakeFunctionRow(const char* name) {
  return {name, std::is_same_v<Ours, RenameT<Cuda>>, &typeid(Ours), &typeid(RenameT<Cuda>)};
}

// One row per INFINIRT_CUDA_FUNCTIONS entry, computed at compile time. cuda##name may be a CUDA
// macro (cudaMemcpy is one in per-thread-stream builds); the pasted token is expanded as usual.
#define INFINIRT_CONTRACT_FUNCTION_ROW(ret, name, params) \
  MakeFunctionRow<decltype(&infinirt##name), decltype(&cuda##name)>(#name),
constexpr FunctionRow kFunctionRows[] = {INFINIRT_CUDA_FUNCTIONS(INFINIRT_CONTRACT_FUNCTION_ROW)};
#undef INFINIRT_CONTRACT_FUNCTION_ROW

TEST(CudaContract, EveryFunctionHasTheRenamedCudaPrototype) {
  const FunctionRow* first = nullptr;
  std::vector<std::string> others;
  for (const FunctionRow& row : kFunctionRows) {
    if (row.same) continue;
    if (first == nullptr) {
      first = &row;
    } else {
      others.push_back(std::string("infinirt") + row.name);
    }
  }
  if (first == nullptr) return;
  FAIL() << "infinirt" << first->name << " does not have the prototype of cuda" << first->name
         << " renamed:\n  infinirt" << first->name << ": " << Demangle(*first->ours) << "\n  cuda"
         << first->name << " renamed: " << Demangle(*first->renamed_cuda)
         << "\n  other mismatches: " << (others.empty() ? "none" : testing::PrintToString(others));
}

// ---------------------------------------------------------------------------------------------
// 2 and 3. Values: enumerators and flags equal CUDA's, with the renamed type.
// ---------------------------------------------------------------------------------------------

struct ValueRow {
  std::string name;  // without prefix
  long long ours;
  long long cuda;
  bool same_type;
  std::string our_type;
  std::string renamed_cuda_type;
};

// Special handles such as infinirtStreamLegacy are pointers; compare their addresses.
template <class T>
long long AsInteger(T value) {
  if constexpr (std::is_pointer_v<T>) {
    return static_cast<long long>(reinterpret_cast<std::uintptr_t>(value));
  } else {
    return static_cast<long long>(value);
  }
}

template <class Ours, class Cuda>
ValueRow MakeValueRow(const char* name, Ours ours, Cuda cuda) {
  return {name,
          AsInteger(ours),
          AsInteger(cuda),
          std::is_same_v<Ours, RenameT<Cuda>>,
          Demangle(typeid(Ours)),
          Demangle(typeid(RenameT<Cuda>))};
}

#define INFINIRT_CONTRACT_VALUE_ROW(suffix) MakeValueRow(#suffix, infinirt##suffix, cuda##suffix)

// Names the first row whose value or type differs from CUDA's.
testing::AssertionResult AllValuesMatch(const std::vector<ValueRow>& rows) {
  for (const ValueRow& row : rows) {
    if (row.ours != row.cuda) {
      return testing::AssertionFailure() << "infinirt" << row.name << " = " << row.ours
                                         << " but cuda" << row.name << " = " << row.cuda;
    }
    if (!row.same_type) {
      return testing::AssertionFailure()
             << "infinirt" << row.name << " has type " << row.our_type << " but cuda" << row.name
             << " renamed has type " << row.renamed_cuda_type;
    }
  }
  return testing::AssertionSuccess();
}

std::vector<ValueRow> ErrorRows() {
#define INFINIRT_CONTRACT_ERROR_ROW(suffix, ...) INFINIRT_CONTRACT_VALUE_ROW(suffix),
  return {INFINIRT_ERROR_LIST(INFINIRT_CONTRACT_ERROR_ROW)};
#undef INFINIRT_CONTRACT_ERROR_ROW
}

std::vector<ValueRow> DeviceAttrRows() {
#define INFINIRT_CONTRACT_ATTR_ROW(suffix, value) INFINIRT_CONTRACT_VALUE_ROW(suffix),
  return {INFINIRT_DEVICE_ATTR_LIST(INFINIRT_CONTRACT_ATTR_ROW)};
#undef INFINIRT_CONTRACT_ATTR_ROW
}

TEST(CudaContract, ErrorValuesEqualCuda) { EXPECT_TRUE(AllValuesMatch(ErrorRows())); }

TEST(CudaContract, DeviceAttrValuesEqualCuda) { EXPECT_TRUE(AllValuesMatch(DeviceAttrRows())); }

// Suffix -> value, e.g. "ErrorNotReady" -> 600, from the rows of an X-macro list.
std::map<std::string, long long> ValuesBySuffix(const std::vector<ValueRow>& rows) {
  std::map<std::string, long long> values;
  for (const ValueRow& row : rows) values[row.name] = row.ours;
  return values;
}

// Completeness: every enumerator of CUDA's `enum <cuda_enum>` (as written in driver_types.h),
// except those `skip` accepts, has an InfiniRT entry of the same name and value in `list`.
testing::AssertionResult EveryCudaEnumeratorIsListed(const std::string& cuda_enum,
                                                     const std::map<std::string, long long>& ours,
                                                     const std::string& list,
                                                     bool (*skip)(const std::string&)) {
  std::string error;
  const auto cuda = ParseEnum(CudaDriverTypesText(), cuda_enum, &error);
  if (!cuda) {
    return testing::AssertionFailure() << INFINIRT_CONTRACT_DRIVER_TYPES_H << ": " << error;
  }
  std::vector<std::string> problems;
  for (const Enumerator& enumerator : *cuda) {
    if (skip(enumerator.name)) continue;
    const std::string suffix = enumerator.name.substr(4);  // after "cuda"
    const auto found = ours.find(suffix);
    if (found == ours.end()) {
      problems.push_back(enumerator.name + " = " + std::to_string(enumerator.value) +
                         " has no entry infinirt" + suffix + " in " + list);
    } else if (found->second != enumerator.value) {
      problems.push_back(enumerator.name + " = " + std::to_string(enumerator.value) +
                         " but infinirt" + suffix + " = " + std::to_string(found->second));
    }
  }
  if (problems.empty()) return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << problems.front() << " (" << problems.size()
         << " problem(s) in all: " << testing::PrintToString(problems) << ")";
}

bool SkipNothing(const std::string&) { return false; }

// Reserved attribute numbers (cudaDevAttrReserved92) have no meaning, and cudaDevAttrMax is the
// count sentinel. cudaDevAttrReservedSharedMemoryPerBlock is a real attribute.
bool SkipReservedOrSentinelAttr(const std::string& name) {
  const std::string prefix = "cudaDevAttrReserved";
  const bool reserved_number = name.size() > prefix.size() && name.rfind(prefix, 0) == 0 &&
                               std::isdigit(static_cast<unsigned char>(name[prefix.size()]));
  return reserved_number || name == "cudaDevAttrMax";
}

TEST(CudaContract, EveryCudaErrorIsInTheErrorList) {
  EXPECT_TRUE(EveryCudaEnumeratorIsListed("cudaError", ValuesBySuffix(ErrorRows()),
                                          "INFINIRT_ERROR_LIST", &SkipNothing));
}

TEST(CudaContract, EveryCudaDeviceAttrIsInTheAttrList) {
  EXPECT_TRUE(EveryCudaEnumeratorIsListed("cudaDeviceAttr", ValuesBySuffix(DeviceAttrRows()),
                                          "INFINIRT_DEVICE_ATTR_LIST",
                                          &SkipReservedOrSentinelAttr));
}

// The smaller enums: a table here, checked both ways (values against CUDA's enumerators, and
// CUDA's enumerators, read from driver_types.h, against the table).
std::vector<ValueRow> SmallEnumRows() {
  return {
      INFINIRT_CONTRACT_VALUE_ROW(MemcpyHostToHost),
      INFINIRT_CONTRACT_VALUE_ROW(MemcpyHostToDevice),
      INFINIRT_CONTRACT_VALUE_ROW(MemcpyDeviceToHost),
      INFINIRT_CONTRACT_VALUE_ROW(MemcpyDeviceToDevice),
      INFINIRT_CONTRACT_VALUE_ROW(MemcpyDefault),
      INFINIRT_CONTRACT_VALUE_ROW(MemoryTypeUnregistered),
      INFINIRT_CONTRACT_VALUE_ROW(MemoryTypeHost),
      INFINIRT_CONTRACT_VALUE_ROW(MemoryTypeDevice),
      INFINIRT_CONTRACT_VALUE_ROW(MemoryTypeManaged),
      INFINIRT_CONTRACT_VALUE_ROW(StreamCaptureStatusNone),
      INFINIRT_CONTRACT_VALUE_ROW(StreamCaptureStatusActive),
      INFINIRT_CONTRACT_VALUE_ROW(StreamCaptureStatusInvalidated),
      INFINIRT_CONTRACT_VALUE_ROW(StreamCaptureModeGlobal),
      INFINIRT_CONTRACT_VALUE_ROW(StreamCaptureModeThreadLocal),
      INFINIRT_CONTRACT_VALUE_ROW(StreamCaptureModeRelaxed),
      INFINIRT_CONTRACT_VALUE_ROW(GraphInstantiateFlagAutoFreeOnLaunch),
      INFINIRT_CONTRACT_VALUE_ROW(GraphInstantiateFlagUpload),
      INFINIRT_CONTRACT_VALUE_ROW(GraphInstantiateFlagDeviceLaunch),
      INFINIRT_CONTRACT_VALUE_ROW(GraphInstantiateFlagUseNodePriority),
      INFINIRT_CONTRACT_VALUE_ROW(MemPoolReuseFollowEventDependencies),
      INFINIRT_CONTRACT_VALUE_ROW(MemPoolReuseAllowOpportunistic),
      INFINIRT_CONTRACT_VALUE_ROW(MemPoolReuseAllowInternalDependencies),
      INFINIRT_CONTRACT_VALUE_ROW(MemPoolAttrReleaseThreshold),
      INFINIRT_CONTRACT_VALUE_ROW(MemPoolAttrReservedMemCurrent),
      INFINIRT_CONTRACT_VALUE_ROW(MemPoolAttrReservedMemHigh),
      INFINIRT_CONTRACT_VALUE_ROW(MemPoolAttrUsedMemCurrent),
      INFINIRT_CONTRACT_VALUE_ROW(MemPoolAttrUsedMemHigh),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDependencyTypeDefault),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDependencyTypeProgrammatic),
      INFINIRT_CONTRACT_VALUE_ROW(LimitStackSize),
      INFINIRT_CONTRACT_VALUE_ROW(LimitPrintfFifoSize),
      INFINIRT_CONTRACT_VALUE_ROW(LimitMallocHeapSize),
      INFINIRT_CONTRACT_VALUE_ROW(LimitDevRuntimeSyncDepth),
      INFINIRT_CONTRACT_VALUE_ROW(LimitDevRuntimePendingLaunchCount),
      INFINIRT_CONTRACT_VALUE_ROW(LimitMaxL2FetchGranularity),
      INFINIRT_CONTRACT_VALUE_ROW(LimitPersistingL2CacheSize),
      INFINIRT_CONTRACT_VALUE_ROW(FuncCachePreferNone),
      INFINIRT_CONTRACT_VALUE_ROW(FuncCachePreferShared),
      INFINIRT_CONTRACT_VALUE_ROW(FuncCachePreferL1),
      INFINIRT_CONTRACT_VALUE_ROW(FuncCachePreferEqual),
      INFINIRT_CONTRACT_VALUE_ROW(MemLocationTypeInvalid),
      INFINIRT_CONTRACT_VALUE_ROW(MemLocationTypeNone),
      INFINIRT_CONTRACT_VALUE_ROW(MemLocationTypeDevice),
      INFINIRT_CONTRACT_VALUE_ROW(MemLocationTypeHost),
      INFINIRT_CONTRACT_VALUE_ROW(MemLocationTypeHostNuma),
      INFINIRT_CONTRACT_VALUE_ROW(MemLocationTypeHostNumaCurrent),
      INFINIRT_CONTRACT_VALUE_ROW(MemAdviseSetReadMostly),
      INFINIRT_CONTRACT_VALUE_ROW(MemAdviseUnsetReadMostly),
      INFINIRT_CONTRACT_VALUE_ROW(MemAdviseSetPreferredLocation),
      INFINIRT_CONTRACT_VALUE_ROW(MemAdviseUnsetPreferredLocation),
      INFINIRT_CONTRACT_VALUE_ROW(MemAdviseSetAccessedBy),
      INFINIRT_CONTRACT_VALUE_ROW(MemAdviseUnsetAccessedBy),
      INFINIRT_CONTRACT_VALUE_ROW(MemRangeAttributeReadMostly),
      INFINIRT_CONTRACT_VALUE_ROW(MemRangeAttributePreferredLocation),
      INFINIRT_CONTRACT_VALUE_ROW(MemRangeAttributeAccessedBy),
      INFINIRT_CONTRACT_VALUE_ROW(MemRangeAttributeLastPrefetchLocation),
      INFINIRT_CONTRACT_VALUE_ROW(MemRangeAttributePreferredLocationType),
      INFINIRT_CONTRACT_VALUE_ROW(MemRangeAttributePreferredLocationId),
      INFINIRT_CONTRACT_VALUE_ROW(MemRangeAttributeLastPrefetchLocationType),
      INFINIRT_CONTRACT_VALUE_ROW(MemRangeAttributeLastPrefetchLocationId),
      INFINIRT_CONTRACT_VALUE_ROW(DevP2PAttrPerformanceRank),
      INFINIRT_CONTRACT_VALUE_ROW(DevP2PAttrAccessSupported),
      INFINIRT_CONTRACT_VALUE_ROW(DevP2PAttrNativeAtomicSupported),
      INFINIRT_CONTRACT_VALUE_ROW(DevP2PAttrCudaArrayAccessSupported),
      INFINIRT_CONTRACT_VALUE_ROW(DevP2PAttrOnlyPartialNativeAtomicSupported),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeKernel),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeMemcpy),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeMemset),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeHost),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeGraph),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeEmpty),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeWaitEvent),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeEventRecord),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeExtSemaphoreSignal),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeExtSemaphoreWait),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeMemAlloc),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeMemFree),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeConditional),
      INFINIRT_CONTRACT_VALUE_ROW(GraphNodeTypeCount),
      INFINIRT_CONTRACT_VALUE_ROW(MemAccessFlagsProtNone),
      INFINIRT_CONTRACT_VALUE_ROW(MemAccessFlagsProtRead),
      INFINIRT_CONTRACT_VALUE_ROW(MemAccessFlagsProtReadWrite),
      INFINIRT_CONTRACT_VALUE_ROW(MemAllocationTypeInvalid),
      INFINIRT_CONTRACT_VALUE_ROW(MemAllocationTypePinned),
      INFINIRT_CONTRACT_VALUE_ROW(MemAllocationTypeManaged),
      INFINIRT_CONTRACT_VALUE_ROW(MemAllocationTypeMax),
      INFINIRT_CONTRACT_VALUE_ROW(MemHandleTypeNone),
      INFINIRT_CONTRACT_VALUE_ROW(MemHandleTypePosixFileDescriptor),
      INFINIRT_CONTRACT_VALUE_ROW(MemHandleTypeWin32),
      INFINIRT_CONTRACT_VALUE_ROW(MemHandleTypeWin32Kmt),
      INFINIRT_CONTRACT_VALUE_ROW(MemHandleTypeFabric),
      INFINIRT_CONTRACT_VALUE_ROW(GraphExecUpdateSuccess),
      INFINIRT_CONTRACT_VALUE_ROW(GraphExecUpdateError),
      INFINIRT_CONTRACT_VALUE_ROW(GraphExecUpdateErrorTopologyChanged),
      INFINIRT_CONTRACT_VALUE_ROW(GraphExecUpdateErrorNodeTypeChanged),
      INFINIRT_CONTRACT_VALUE_ROW(GraphExecUpdateErrorFunctionChanged),
      INFINIRT_CONTRACT_VALUE_ROW(GraphExecUpdateErrorParametersChanged),
      INFINIRT_CONTRACT_VALUE_ROW(GraphExecUpdateErrorNotSupported),
      INFINIRT_CONTRACT_VALUE_ROW(GraphExecUpdateErrorUnsupportedFunctionChange),
      INFINIRT_CONTRACT_VALUE_ROW(GraphExecUpdateErrorAttributesChanged),
      INFINIRT_CONTRACT_VALUE_ROW(GraphInstantiateSuccess),
      INFINIRT_CONTRACT_VALUE_ROW(GraphInstantiateError),
      INFINIRT_CONTRACT_VALUE_ROW(GraphInstantiateInvalidStructure),
      INFINIRT_CONTRACT_VALUE_ROW(GraphInstantiateNodeOperationNotSupported),
      INFINIRT_CONTRACT_VALUE_ROW(GraphInstantiateMultipleDevicesNotSupported),
      INFINIRT_CONTRACT_VALUE_ROW(GraphInstantiateConditionalHandleUnused),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeIgnore),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeAccessPolicyWindow),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeCooperative),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeSynchronizationPolicy),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeClusterDimension),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeClusterSchedulingPolicyPreference),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeProgrammaticStreamSerialization),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeProgrammaticEvent),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributePriority),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeMemSyncDomainMap),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeMemSyncDomain),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributePreferredClusterDimension),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeLaunchCompletionEvent),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeDeviceUpdatableKernelNode),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributePreferredSharedMemoryCarveout),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchAttributeNvlinkUtilCentricScheduling),
      INFINIRT_CONTRACT_VALUE_ROW(AccessPropertyNormal),
      INFINIRT_CONTRACT_VALUE_ROW(AccessPropertyStreaming),
      INFINIRT_CONTRACT_VALUE_ROW(AccessPropertyPersisting),
      INFINIRT_CONTRACT_VALUE_ROW(SyncPolicyAuto),
      INFINIRT_CONTRACT_VALUE_ROW(SyncPolicySpin),
      INFINIRT_CONTRACT_VALUE_ROW(SyncPolicyYield),
      INFINIRT_CONTRACT_VALUE_ROW(SyncPolicyBlockingSync),
      INFINIRT_CONTRACT_VALUE_ROW(ClusterSchedulingPolicyDefault),
      INFINIRT_CONTRACT_VALUE_ROW(ClusterSchedulingPolicySpread),
      INFINIRT_CONTRACT_VALUE_ROW(ClusterSchedulingPolicyLoadBalancing),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchMemSyncDomainDefault),
      INFINIRT_CONTRACT_VALUE_ROW(LaunchMemSyncDomainRemote),
  };
}

TEST(CudaContract, SmallEnumValuesEqualCuda) { EXPECT_TRUE(AllValuesMatch(SmallEnumRows())); }

TEST(CudaContract, SmallEnumTableCoversEveryCudaEnumerator) {
  const auto ours = ValuesBySuffix(SmallEnumRows());
  for (const char* cuda_enum :
       {"cudaMemcpyKind", "cudaMemoryType", "cudaStreamCaptureStatus", "cudaStreamCaptureMode",
        "cudaGraphInstantiateFlags", "cudaMemPoolAttr", "cudaGraphDependencyType_enum", "cudaLimit",
        "cudaFuncCache", "cudaDeviceP2PAttr", "cudaMemLocationType", "cudaMemoryAdvise",
        "cudaMemRangeAttribute", "cudaLaunchAttributeID", "cudaAccessProperty",
        "cudaSynchronizationPolicy", "cudaClusterSchedulingPolicy", "cudaLaunchMemSyncDomain"}) {
    EXPECT_TRUE(EveryCudaEnumeratorIsListed(cuda_enum, ours, "infinirt.h", &SkipNothing));
  }
}

// Every #define flag and special handle of infinirt.h.
std::vector<ValueRow> FlagRows() {
  return {
      INFINIRT_CONTRACT_VALUE_ROW(HostAllocDefault),
      INFINIRT_CONTRACT_VALUE_ROW(UserObjectNoDestructorSync),
      INFINIRT_CONTRACT_VALUE_ROW(GraphUserObjectMove),
      INFINIRT_CONTRACT_VALUE_ROW(StreamAddCaptureDependencies),
      INFINIRT_CONTRACT_VALUE_ROW(StreamSetCaptureDependencies),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDebugDotFlagsVerbose),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDebugDotFlagsKernelNodeParams),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDebugDotFlagsMemcpyNodeParams),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDebugDotFlagsMemsetNodeParams),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDebugDotFlagsHostNodeParams),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDebugDotFlagsEventNodeParams),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDebugDotFlagsExtSemasSignalNodeParams),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDebugDotFlagsExtSemasWaitNodeParams),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDebugDotFlagsKernelNodeAttributes),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDebugDotFlagsHandles),
      INFINIRT_CONTRACT_VALUE_ROW(GraphDebugDotFlagsConditionalNodeParams),
      INFINIRT_CONTRACT_VALUE_ROW(HostAllocPortable),
      INFINIRT_CONTRACT_VALUE_ROW(HostAllocMapped),
      INFINIRT_CONTRACT_VALUE_ROW(HostAllocWriteCombined),
      INFINIRT_CONTRACT_VALUE_ROW(InitDeviceFlagsAreValid),
      INFINIRT_CONTRACT_VALUE_ROW(MemAttachGlobal),
      INFINIRT_CONTRACT_VALUE_ROW(MemAttachHost),
      INFINIRT_CONTRACT_VALUE_ROW(MemAttachSingle),
      INFINIRT_CONTRACT_VALUE_ROW(HostRegisterDefault),
      INFINIRT_CONTRACT_VALUE_ROW(HostRegisterPortable),
      INFINIRT_CONTRACT_VALUE_ROW(HostRegisterMapped),
      INFINIRT_CONTRACT_VALUE_ROW(HostRegisterIoMemory),
      INFINIRT_CONTRACT_VALUE_ROW(HostRegisterReadOnly),
      INFINIRT_CONTRACT_VALUE_ROW(StreamDefault),
      INFINIRT_CONTRACT_VALUE_ROW(StreamNonBlocking),
      INFINIRT_CONTRACT_VALUE_ROW(StreamLegacy),
      INFINIRT_CONTRACT_VALUE_ROW(StreamPerThread),
      INFINIRT_CONTRACT_VALUE_ROW(EventDefault),
      INFINIRT_CONTRACT_VALUE_ROW(EventBlockingSync),
      INFINIRT_CONTRACT_VALUE_ROW(EventDisableTiming),
      INFINIRT_CONTRACT_VALUE_ROW(EventInterprocess),
      INFINIRT_CONTRACT_VALUE_ROW(IpcMemLazyEnablePeerAccess),
      INFINIRT_CONTRACT_VALUE_ROW(EventRecordDefault),
      INFINIRT_CONTRACT_VALUE_ROW(EventRecordExternal),
      INFINIRT_CONTRACT_VALUE_ROW(EventWaitDefault),
      INFINIRT_CONTRACT_VALUE_ROW(EventWaitExternal),
      INFINIRT_CONTRACT_VALUE_ROW(DeviceScheduleAuto),
      INFINIRT_CONTRACT_VALUE_ROW(DeviceScheduleSpin),
      INFINIRT_CONTRACT_VALUE_ROW(DeviceScheduleYield),
      INFINIRT_CONTRACT_VALUE_ROW(DeviceScheduleBlockingSync),
      INFINIRT_CONTRACT_VALUE_ROW(DeviceBlockingSync),
      INFINIRT_CONTRACT_VALUE_ROW(DeviceScheduleMask),
      INFINIRT_CONTRACT_VALUE_ROW(DeviceMapHost),
      INFINIRT_CONTRACT_VALUE_ROW(DeviceLmemResizeToMax),
      INFINIRT_CONTRACT_VALUE_ROW(DeviceSyncMemops),
      INFINIRT_CONTRACT_VALUE_ROW(DeviceMask),
      INFINIRT_CONTRACT_VALUE_ROW(StreamAttributeAccessPolicyWindow),
      INFINIRT_CONTRACT_VALUE_ROW(StreamAttributeSynchronizationPolicy),
      INFINIRT_CONTRACT_VALUE_ROW(StreamAttributeMemSyncDomainMap),
      INFINIRT_CONTRACT_VALUE_ROW(StreamAttributeMemSyncDomain),
      INFINIRT_CONTRACT_VALUE_ROW(StreamAttributePriority),
      INFINIRT_CONTRACT_VALUE_ROW(CpuDeviceId),
      INFINIRT_CONTRACT_VALUE_ROW(InvalidDeviceId),
  };
}

#undef INFINIRT_CONTRACT_VALUE_ROW

TEST(CudaContract, FlagValuesEqualCuda) { EXPECT_TRUE(AllValuesMatch(FlagRows())); }

// Flags cannot be enumerated by the preprocessor, so the table above is hand-written; this test
// reads every `#define infinirt<Name>` of infinirt.h and fails on one the table lacks.
TEST(CudaContract, FlagTableCoversEveryDefineInTheHeader) {
  const std::vector<std::string> defines = ObjectMacrosWithPrefix(InfinirtHeaderText(), "infinirt");
  ASSERT_FALSE(defines.empty()) << "no #define infinirt* read from " INFINIRT_CONTRACT_INFINIRT_H;
  std::set<std::string> checked;
  for (const ValueRow& row : FlagRows()) checked.insert("infinirt" + row.name);
  // The per-thread builds' function names (PerThreadBuildsCallTheVariantsCudasDo compares them).
#define INFINIRT_CONTRACT_VARIANT(name, variant) checked.insert("infinirt" #name);
  INFINIRT_PER_THREAD_STREAM_FUNCTIONS(INFINIRT_CONTRACT_VARIANT)
#undef INFINIRT_CONTRACT_VARIANT
  for (const std::string& name : defines) {
    EXPECT_TRUE(checked.count(name) != 0)
        << name << " is #defined in infinirt.h but not compared with CUDA: add it to FlagRows()";
  }
}

// ---------------------------------------------------------------------------------------------
// 3b. CUDA's CUDART_* macros: INFINIRT_* with the same expansion.
// ---------------------------------------------------------------------------------------------

// The text a macro expands to (empty for INFINIRT_CB on Linux, "13000" for INFINIRT_VERSION).
#define INFINIRT_CONTRACT_TEXT_(...) #__VA_ARGS__
#define INFINIRT_CONTRACT_TEXT(macro) INFINIRT_CONTRACT_TEXT_(macro)

struct MacroRow {
  std::string cuda_name;
  std::string ours;  // expansion of the INFINIRT_ macro
  std::string cuda;  // expansion of the CUDART_ macro
};

#define INFINIRT_CONTRACT_MACRO_ROW(ours, cuda) \
  MacroRow { #cuda, INFINIRT_CONTRACT_TEXT(ours), INFINIRT_CONTRACT_TEXT(cuda) }

std::vector<MacroRow> CudartMacroRows() {
  return {
      INFINIRT_CONTRACT_MACRO_ROW(INFINIRT_VERSION, CUDART_VERSION),
      INFINIRT_CONTRACT_MACRO_ROW(INFINIRT_CB, CUDART_CB),
      INFINIRT_CONTRACT_MACRO_ROW(INFINIRTAPI, CUDARTAPI),
      INFINIRT_CONTRACT_MACRO_ROW(INFINIRTAPI_CDECL, CUDARTAPI_CDECL),
  };
}

#undef INFINIRT_CONTRACT_MACRO_ROW

// CUDART_* macros of the runtime headers that infinirt.h deliberately has no equivalent of, and
// why (infinirt.h's comment on INFINIRT_VERSION says the same).
const std::map<std::string, std::string>& CudartMacrosLeftOut() {
  static const std::map<std::string, std::string> left_out = {
      {"CUDART_DEVICE", "__device__: marks functions callable from device code; InfiniRT has none"},
  };
  return left_out;
}

TEST(CudaContract, CudartMacrosExpandAsCudas) {
  for (const MacroRow& row : CudartMacroRows()) {
    EXPECT_EQ(row.ours, row.cuda) << row.cuda_name << " and its InfiniRT equivalent differ";
  }
  EXPECT_EQ(INFINIRT_VERSION, CUDART_VERSION);
  EXPECT_EQ(INFINIRT_VERSION, INFINIRT_CUDA_API_VERSION);
}

// Every object-like CUDART* macro the runtime headers define has a row above or is left out on
// purpose, so that one CUDA adds is noticed.
TEST(CudaContract, EveryCudartMacroOfTheRuntimeHeadersIsCoveredOrLeftOut) {
  std::set<std::string> covered;
  for (const MacroRow& row : CudartMacroRows()) covered.insert(row.cuda_name);
  const std::string directory = INFINIRT_CONTRACT_CUDA_INCLUDE_DIR;
  size_t seen = 0;
  for (const char* header : {"cuda_runtime_api.h", "driver_types.h", "crt/host_defines.h"}) {
    SCOPED_TRACE(header);
    const std::string& text = HeaderText(directory + "/" + header);
    ASSERT_FALSE(text.empty()) << "cannot read " << directory << "/" << header;
    for (const std::string& name : ObjectMacrosWithPrefix(text, "CUDART")) {
      ++seen;
      EXPECT_TRUE(covered.count(name) != 0 || CudartMacrosLeftOut().count(name) != 0)
          << name << " is defined by CUDA's " << header
          << " but has no INFINIRT_ equivalent in infinirt.h and is not in CudartMacrosLeftOut()";
    }
  }
  EXPECT_GE(seen, CudartMacroRows().size());
}

// ---------------------------------------------------------------------------------------------
// 4. Structs.
// ---------------------------------------------------------------------------------------------

struct FieldRow {
  std::string name;
  bool same_type;
  size_t our_offset;
  size_t cuda_offset;
  std::string our_type;
  std::string renamed_cuda_type;
};

template <class Ours, class Cuda>
FieldRow MakeFieldRow(const char* name, size_t our_offset, size_t cuda_offset) {
  return {name,
          std::is_same_v<Ours, RenameT<Cuda>>,
          our_offset,
          cuda_offset,
          Demangle(typeid(Ours)),
          Demangle(typeid(RenameT<Cuda>))};
}

#define INFINIRT_CONTRACT_FIELD_ROW(ours, cuda, field)                                      \
  MakeFieldRow<decltype(ours::field), decltype(cuda::field)>(#field, offsetof(ours, field), \
                                                             offsetof(cuda, field)),

// Names the first field whose renamed type differs (and, if `same_offsets`, whose offset does).
testing::AssertionResult FieldsMatch(const char* ours, const std::vector<FieldRow>& rows,
                                     bool same_offsets) {
  for (const FieldRow& row : rows) {
    if (!row.same_type) {
      return testing::AssertionFailure() << ours << "::" << row.name << " has type " << row.our_type
                                         << ", CUDA's renamed has type " << row.renamed_cuda_type;
    }
    if (same_offsets && row.our_offset != row.cuda_offset) {
      return testing::AssertionFailure() << ours << "::" << row.name << " is at offset "
                                         << row.our_offset << ", CUDA's at " << row.cuda_offset;
    }
  }
  return testing::AssertionSuccess();
}

std::vector<std::string> NamesOf(const std::vector<FieldRow>& rows) {
  std::vector<std::string> names;
  for (const FieldRow& row : rows) names.push_back(row.name);
  return names;
}

// Names the first position where the field names written in a header differ from `expected`.
testing::AssertionResult SameFieldNames(const std::vector<std::string>& written,
                                        const std::vector<std::string>& expected) {
  for (size_t i = 0; i < std::max(written.size(), expected.size()); ++i) {
    const std::string have = i < written.size() ? written[i] : "(end of struct)";
    const std::string want = i < expected.size() ? expected[i] : "(end of struct)";
    if (have != want) {
      return testing::AssertionFailure()
             << "field " << i << " is " << have << ", expected " << want;
    }
  }
  return testing::AssertionSuccess();
}

// Field names of a struct as written in a header; the test fails if it cannot be read.
std::vector<std::string> WrittenFields(const std::string& text, const std::string& name) {
  std::string error;
  const auto fields = ParseStructFields(text, name, &error);
  EXPECT_TRUE(fields.has_value()) << error;
  return fields.value_or(std::vector<std::string>{});
}

// infinirtPointerAttributes is cudaPointerAttributes renamed, byte for byte.
#define INFINIRT_CONTRACT_POINTER_ATTRIBUTES_FIELDS(X) \
  X(type)                                              \
  X(device)                                            \
  X(devicePointer)                                     \
  X(hostPointer)                                       \
  X(reserved)

std::vector<FieldRow> PointerAttributesRows() {
#define INFINIRT_CONTRACT_ROW(field) \
  INFINIRT_CONTRACT_FIELD_ROW(infinirtPointerAttributes, cudaPointerAttributes, field)
  return {INFINIRT_CONTRACT_POINTER_ATTRIBUTES_FIELDS(INFINIRT_CONTRACT_ROW)};
#undef INFINIRT_CONTRACT_ROW
}

TEST(CudaContract, PointerAttributesHasCudasLayout) {
  EXPECT_EQ(sizeof(infinirtPointerAttributes), sizeof(cudaPointerAttributes));
  EXPECT_EQ(alignof(infinirtPointerAttributes), alignof(cudaPointerAttributes));
  EXPECT_TRUE(FieldsMatch("infinirtPointerAttributes", PointerAttributesRows(), true));
  // The field list above is complete: both headers declare exactly these fields, in order.
  const std::vector<std::string> listed = NamesOf(PointerAttributesRows());
  EXPECT_TRUE(
      SameFieldNames(WrittenFields(InfinirtHeaderText(), "infinirtPointerAttributes"), listed))
      << "in infinirt.h";
  EXPECT_TRUE(SameFieldNames(WrittenFields(CudaDriverTypesText(), "cudaPointerAttributes"), listed))
      << "in driver_types.h";
}

// The structures of pitched memory and 3D copies, field for field.
TEST(CudaContract, PitchedMemoryStructuresHaveCudasLayout) {
  EXPECT_EQ(sizeof(infinirtPitchedPtr), sizeof(cudaPitchedPtr));
  EXPECT_TRUE(FieldsMatch(
      "infinirtPitchedPtr",
      {INFINIRT_CONTRACT_FIELD_ROW(infinirtPitchedPtr, cudaPitchedPtr, ptr)
           INFINIRT_CONTRACT_FIELD_ROW(infinirtPitchedPtr, cudaPitchedPtr, pitch)
               INFINIRT_CONTRACT_FIELD_ROW(infinirtPitchedPtr, cudaPitchedPtr, xsize)
                   INFINIRT_CONTRACT_FIELD_ROW(infinirtPitchedPtr, cudaPitchedPtr, ysize)},
      true));
  EXPECT_EQ(sizeof(infinirtExtent), sizeof(cudaExtent));
  EXPECT_TRUE(FieldsMatch("infinirtExtent",
                          {INFINIRT_CONTRACT_FIELD_ROW(infinirtExtent, cudaExtent, width)
                               INFINIRT_CONTRACT_FIELD_ROW(infinirtExtent, cudaExtent, height)
                                   INFINIRT_CONTRACT_FIELD_ROW(infinirtExtent, cudaExtent, depth)},
                          true));
  EXPECT_EQ(sizeof(infinirtPos), sizeof(cudaPos));
  EXPECT_TRUE(FieldsMatch("infinirtPos",
                          {INFINIRT_CONTRACT_FIELD_ROW(infinirtPos, cudaPos, x)
                               INFINIRT_CONTRACT_FIELD_ROW(infinirtPos, cudaPos, y)
                                   INFINIRT_CONTRACT_FIELD_ROW(infinirtPos, cudaPos, z)},
                          true));
  EXPECT_EQ(sizeof(infinirtMemcpy3DParms), sizeof(cudaMemcpy3DParms));
#define INFINIRT_CONTRACT_ROW(field) \
  INFINIRT_CONTRACT_FIELD_ROW(infinirtMemcpy3DParms, cudaMemcpy3DParms, field)
  EXPECT_TRUE(FieldsMatch("infinirtMemcpy3DParms",
                          {INFINIRT_CONTRACT_ROW(srcArray) INFINIRT_CONTRACT_ROW(srcPos)
                               INFINIRT_CONTRACT_ROW(srcPtr) INFINIRT_CONTRACT_ROW(dstArray)
                                   INFINIRT_CONTRACT_ROW(dstPos) INFINIRT_CONTRACT_ROW(dstPtr)
                                       INFINIRT_CONTRACT_ROW(extent) INFINIRT_CONTRACT_ROW(kind)},
                          true));
#undef INFINIRT_CONTRACT_ROW
  // The makers give what CUDA's give.
  const infinirtPitchedPtr ours = make_infinirtPitchedPtr(nullptr, 512, 100, 7);
  const cudaPitchedPtr theirs = make_cudaPitchedPtr(nullptr, 512, 100, 7);
  EXPECT_EQ(ours.pitch, theirs.pitch);
  EXPECT_EQ(ours.xsize, theirs.xsize);
  EXPECT_EQ(ours.ysize, theirs.ysize);
  EXPECT_EQ(make_infinirtExtent(1, 2, 3).depth, make_cudaExtent(1, 2, 3).depth);
  EXPECT_EQ(make_infinirtPos(4, 5, 6).y, make_cudaPos(4, 5, 6).y);
}

// Stream attributes: the value union and what it holds.
TEST(CudaContract, LaunchAttributeValueHasCudasLayout) {
#define INFINIRT_CONTRACT_ROW(ours, theirs, field) INFINIRT_CONTRACT_FIELD_ROW(ours, theirs, field)
  EXPECT_EQ(sizeof(infinirtAccessPolicyWindow), sizeof(cudaAccessPolicyWindow));
  EXPECT_TRUE(FieldsMatch(
      "infinirtAccessPolicyWindow",
      {INFINIRT_CONTRACT_ROW(infinirtAccessPolicyWindow, cudaAccessPolicyWindow, base_ptr)
           INFINIRT_CONTRACT_ROW(infinirtAccessPolicyWindow, cudaAccessPolicyWindow, num_bytes)
               INFINIRT_CONTRACT_ROW(infinirtAccessPolicyWindow, cudaAccessPolicyWindow, hitRatio)
                   INFINIRT_CONTRACT_ROW(infinirtAccessPolicyWindow, cudaAccessPolicyWindow,
                                         hitProp)
                       INFINIRT_CONTRACT_ROW(infinirtAccessPolicyWindow, cudaAccessPolicyWindow,
                                             missProp)},
      true));
  EXPECT_EQ(sizeof(infinirtLaunchMemSyncDomainMap), sizeof(cudaLaunchMemSyncDomainMap));
  EXPECT_TRUE(FieldsMatch(
      "infinirtLaunchMemSyncDomainMap",
      {INFINIRT_CONTRACT_ROW(infinirtLaunchMemSyncDomainMap, cudaLaunchMemSyncDomainMap, default_)
           INFINIRT_CONTRACT_ROW(infinirtLaunchMemSyncDomainMap, cudaLaunchMemSyncDomainMap,
                                 remote)},
      true));
  EXPECT_EQ(sizeof(infinirtLaunchAttributeValue), sizeof(cudaLaunchAttributeValue));
  EXPECT_EQ(alignof(infinirtLaunchAttributeValue), alignof(cudaLaunchAttributeValue));
  using Ours = infinirtLaunchAttributeValue;
  using Theirs = cudaLaunchAttributeValue;
  // The anonymous structures' types cannot be renamed; their sizes are compared instead.
  EXPECT_EQ(sizeof(Ours::clusterDim), sizeof(Theirs::clusterDim));
  EXPECT_EQ(sizeof(Ours::programmaticEvent), sizeof(Theirs::programmaticEvent));
  EXPECT_EQ(sizeof(Ours::preferredClusterDim), sizeof(Theirs::preferredClusterDim));
  EXPECT_EQ(sizeof(Ours::launchCompletionEvent), sizeof(Theirs::launchCompletionEvent));
  EXPECT_EQ(sizeof(Ours::deviceUpdatableKernelNode), sizeof(Theirs::deviceUpdatableKernelNode));
  EXPECT_TRUE(FieldsMatch(
      "infinirtLaunchAttributeValue",
      {INFINIRT_CONTRACT_ROW(Ours, Theirs, pad) INFINIRT_CONTRACT_ROW(Ours, Theirs,
                                                                      accessPolicyWindow)
           INFINIRT_CONTRACT_ROW(Ours, Theirs, cooperative) INFINIRT_CONTRACT_ROW(
               Ours, Theirs, syncPolicy) INFINIRT_CONTRACT_ROW(Ours, Theirs,
                                                               clusterSchedulingPolicyPreference)
               INFINIRT_CONTRACT_ROW(Ours, Theirs, programmaticStreamSerializationAllowed)
                   INFINIRT_CONTRACT_ROW(Ours, Theirs, priority)
                       INFINIRT_CONTRACT_ROW(Ours, Theirs, memSyncDomainMap)
                           INFINIRT_CONTRACT_ROW(Ours, Theirs, memSyncDomain)
                               INFINIRT_CONTRACT_ROW(Ours, Theirs, sharedMemCarveout)
                                   INFINIRT_CONTRACT_ROW(Ours, Theirs,
                                                         nvlinkUtilCentricScheduling)},
      true));
#undef INFINIRT_CONTRACT_ROW
}

TEST(CudaContract, MemLocationHasCudasLayout) {
  EXPECT_EQ(sizeof(infinirtMemLocation), sizeof(cudaMemLocation));
  EXPECT_TRUE(
      FieldsMatch("infinirtMemLocation",
                  {INFINIRT_CONTRACT_FIELD_ROW(infinirtMemLocation, cudaMemLocation, type)
                       INFINIRT_CONTRACT_FIELD_ROW(infinirtMemLocation, cudaMemLocation, id)},
                  true));
}

// The parameter structures of graph nodes built by hand, and of their memory.
TEST(CudaContract, GraphNodeStructuresHaveCudasLayout) {
#define INFINIRT_CONTRACT_LAYOUT(ours, theirs, ...) \
  EXPECT_EQ(sizeof(ours), sizeof(theirs)) << #ours; \
  EXPECT_TRUE(FieldsMatch(#ours, {__VA_ARGS__}, true));
#define INFINIRT_CONTRACT_ROW(ours, theirs, field) INFINIRT_CONTRACT_FIELD_ROW(ours, theirs, field)
  INFINIRT_CONTRACT_LAYOUT(
      infinirtMemsetParams, cudaMemsetParams,
      INFINIRT_CONTRACT_ROW(infinirtMemsetParams, cudaMemsetParams, dst)
          INFINIRT_CONTRACT_ROW(infinirtMemsetParams, cudaMemsetParams, pitch)
              INFINIRT_CONTRACT_ROW(infinirtMemsetParams, cudaMemsetParams, value)
                  INFINIRT_CONTRACT_ROW(infinirtMemsetParams, cudaMemsetParams, elementSize)
                      INFINIRT_CONTRACT_ROW(infinirtMemsetParams, cudaMemsetParams, width)
                          INFINIRT_CONTRACT_ROW(infinirtMemsetParams, cudaMemsetParams, height))
  INFINIRT_CONTRACT_LAYOUT(
      infinirtHostNodeParams, cudaHostNodeParams,
      INFINIRT_CONTRACT_ROW(infinirtHostNodeParams, cudaHostNodeParams, fn)
          INFINIRT_CONTRACT_ROW(infinirtHostNodeParams, cudaHostNodeParams, userData))
  INFINIRT_CONTRACT_LAYOUT(
      infinirtMemAccessDesc, cudaMemAccessDesc,
      INFINIRT_CONTRACT_ROW(infinirtMemAccessDesc, cudaMemAccessDesc, location)
          INFINIRT_CONTRACT_ROW(infinirtMemAccessDesc, cudaMemAccessDesc, flags))
  INFINIRT_CONTRACT_LAYOUT(
      infinirtMemPoolProps, cudaMemPoolProps,
      INFINIRT_CONTRACT_ROW(infinirtMemPoolProps, cudaMemPoolProps, allocType)
          INFINIRT_CONTRACT_ROW(infinirtMemPoolProps, cudaMemPoolProps,
                                handleTypes) INFINIRT_CONTRACT_ROW(infinirtMemPoolProps,
                                                                   cudaMemPoolProps, location)
              INFINIRT_CONTRACT_ROW(infinirtMemPoolProps, cudaMemPoolProps, win32SecurityAttributes)
                  INFINIRT_CONTRACT_ROW(infinirtMemPoolProps, cudaMemPoolProps, maxSize)
                      INFINIRT_CONTRACT_ROW(infinirtMemPoolProps, cudaMemPoolProps, usage)
                          INFINIRT_CONTRACT_ROW(infinirtMemPoolProps, cudaMemPoolProps, reserved))
  INFINIRT_CONTRACT_LAYOUT(
      infinirtMemPoolPtrExportData, cudaMemPoolPtrExportData,
      INFINIRT_CONTRACT_ROW(infinirtMemPoolPtrExportData, cudaMemPoolPtrExportData, reserved))
  INFINIRT_CONTRACT_LAYOUT(
      infinirtMemAllocNodeParams, cudaMemAllocNodeParams,
      INFINIRT_CONTRACT_ROW(infinirtMemAllocNodeParams, cudaMemAllocNodeParams,
                            poolProps) INFINIRT_CONTRACT_ROW(infinirtMemAllocNodeParams,
                                                             cudaMemAllocNodeParams, accessDescs)
          INFINIRT_CONTRACT_ROW(infinirtMemAllocNodeParams, cudaMemAllocNodeParams, accessDescCount)
              INFINIRT_CONTRACT_ROW(infinirtMemAllocNodeParams, cudaMemAllocNodeParams, bytesize)
                  INFINIRT_CONTRACT_ROW(infinirtMemAllocNodeParams, cudaMemAllocNodeParams, dptr))
  INFINIRT_CONTRACT_LAYOUT(
      infinirtGraphExecUpdateResultInfo, cudaGraphExecUpdateResultInfo,
      INFINIRT_CONTRACT_ROW(infinirtGraphExecUpdateResultInfo, cudaGraphExecUpdateResultInfo,
                            result) INFINIRT_CONTRACT_ROW(infinirtGraphExecUpdateResultInfo,
                                                          cudaGraphExecUpdateResultInfo, errorNode)
          INFINIRT_CONTRACT_ROW(infinirtGraphExecUpdateResultInfo, cudaGraphExecUpdateResultInfo,
                                errorFromNode))
  INFINIRT_CONTRACT_LAYOUT(
      infinirtGraphInstantiateParams, cudaGraphInstantiateParams,
      INFINIRT_CONTRACT_ROW(infinirtGraphInstantiateParams, cudaGraphInstantiateParams, flags)
          INFINIRT_CONTRACT_ROW(infinirtGraphInstantiateParams, cudaGraphInstantiateParams,
                                uploadStream)
              INFINIRT_CONTRACT_ROW(infinirtGraphInstantiateParams, cudaGraphInstantiateParams,
                                    errNode_out)
                  INFINIRT_CONTRACT_ROW(infinirtGraphInstantiateParams, cudaGraphInstantiateParams,
                                        result_out))
#undef INFINIRT_CONTRACT_ROW
#undef INFINIRT_CONTRACT_LAYOUT
}

TEST(CudaContract, IpcHandlesHaveCudasLayout) {
  EXPECT_EQ(INFINIRT_IPC_HANDLE_SIZE, CUDA_IPC_HANDLE_SIZE);
  EXPECT_EQ(sizeof(infinirtIpcMemHandle_t), sizeof(cudaIpcMemHandle_t));
  EXPECT_EQ(alignof(infinirtIpcMemHandle_t), alignof(cudaIpcMemHandle_t));
  EXPECT_TRUE(FieldsMatch(
      "infinirtIpcMemHandle_t",
      {INFINIRT_CONTRACT_FIELD_ROW(infinirtIpcMemHandle_st, cudaIpcMemHandle_st, reserved)}, true));
  EXPECT_TRUE(FieldsMatch(
      "infinirtIpcEventHandle_t",
      {INFINIRT_CONTRACT_FIELD_ROW(infinirtIpcEventHandle_st, cudaIpcEventHandle_st, reserved)},
      true));
}

TEST(CudaContract, UuidHasCudasLayout) {
  EXPECT_EQ(sizeof(infinirtUUID_t), sizeof(cudaUUID_t));
  EXPECT_TRUE(FieldsMatch("infinirtUUID_t",
                          {INFINIRT_CONTRACT_FIELD_ROW(infinirtUUID_st, CUuuid_st, bytes)}, true));
}

// infinirtDeviceProp begins with every field of cudaDeviceProp (same names, renamed types, same
// offsets), then has InfiniRT's own fields.
#define INFINIRT_CONTRACT_CUDA_DEVICE_PROP_FIELDS(X) \
  X(name)                                            \
  X(uuid)                                            \
  X(luid)                                            \
  X(luidDeviceNodeMask)                              \
  X(totalGlobalMem)                                  \
  X(sharedMemPerBlock)                               \
  X(regsPerBlock)                                    \
  X(warpSize)                                        \
  X(memPitch)                                        \
  X(maxThreadsPerBlock)                              \
  X(maxThreadsDim)                                   \
  X(maxGridSize)                                     \
  X(totalConstMem)                                   \
  X(major)                                           \
  X(minor)                                           \
  X(textureAlignment)                                \
  X(texturePitchAlignment)                           \
  X(multiProcessorCount)                             \
  X(integrated)                                      \
  X(canMapHostMemory)                                \
  X(maxTexture1D)                                    \
  X(maxTexture1DMipmap)                              \
  X(maxTexture2D)                                    \
  X(maxTexture2DMipmap)                              \
  X(maxTexture2DLinear)                              \
  X(maxTexture2DGather)                              \
  X(maxTexture3D)                                    \
  X(maxTexture3DAlt)                                 \
  X(maxTextureCubemap)                               \
  X(maxTexture1DLayered)                             \
  X(maxTexture2DLayered)                             \
  X(maxTextureCubemapLayered)                        \
  X(maxSurface1D)                                    \
  X(maxSurface2D)                                    \
  X(maxSurface3D)                                    \
  X(maxSurface1DLayered)                             \
  X(maxSurface2DLayered)                             \
  X(maxSurfaceCubemap)                               \
  X(maxSurfaceCubemapLayered)                        \
  X(surfaceAlignment)                                \
  X(concurrentKernels)                               \
  X(ECCEnabled)                                      \
  X(pciBusID)                                        \
  X(pciDeviceID)                                     \
  X(pciDomainID)                                     \
  X(tccDriver)                                       \
  X(asyncEngineCount)                                \
  X(unifiedAddressing)                               \
  X(memoryBusWidth)                                  \
  X(l2CacheSize)                                     \
  X(persistingL2CacheMaxSize)                        \
  X(maxThreadsPerMultiProcessor)                     \
  X(streamPrioritiesSupported)                       \
  X(globalL1CacheSupported)                          \
  X(localL1CacheSupported)                           \
  X(sharedMemPerMultiprocessor)                      \
  X(regsPerMultiprocessor)                           \
  X(managedMemory)                                   \
  X(isMultiGpuBoard)                                 \
  X(multiGpuBoardGroupID)                            \
  X(hostNativeAtomicSupported)                       \
  X(pageableMemoryAccess)                            \
  X(concurrentManagedAccess)                         \
  X(computePreemptionSupported)                      \
  X(canUseHostPointerForRegisteredMem)               \
  X(cooperativeLaunch)                               \
  X(sharedMemPerBlockOptin)                          \
  X(pageableMemoryAccessUsesHostPageTables)          \
  X(directManagedMemAccessFromHost)                  \
  X(maxBlocksPerMultiProcessor)                      \
  X(accessPolicyMaxWindowSize)                       \
  X(reservedSharedMemPerBlock)                       \
  X(hostRegisterSupported)                           \
  X(sparseCudaArraySupported)                        \
  X(hostRegisterReadOnlySupported)                   \
  X(timelineSemaphoreInteropSupported)               \
  X(memoryPoolsSupported)                            \
  X(gpuDirectRDMASupported)                          \
  X(gpuDirectRDMAFlushWritesOptions)                 \
  X(gpuDirectRDMAWritesOrdering)                     \
  X(memoryPoolSupportedHandleTypes)                  \
  X(deferredMappingCudaArraySupported)               \
  X(ipcEventSupported)                               \
  X(clusterLaunch)                                   \
  X(unifiedFunctionPointers)                         \
  X(deviceNumaConfig)                                \
  X(deviceNumaId)                                    \
  X(mpsEnabled)                                      \
  X(hostNumaId)                                      \
  X(gpuPciDeviceID)                                  \
  X(gpuPciSubsystemID)                               \
  X(hostNumaMultinodeIpcSupported)                   \
  X(reserved)

// InfiniRT's own fields, which must come after CUDA's.
const std::vector<std::string> kOwnDevicePropFields = {"deviceType", "vendorDeviceIndex",
                                                       "backendName", "infinirtReserved"};

std::vector<FieldRow> CudaDevicePropRows() {
#define INFINIRT_CONTRACT_ROW(field) \
  INFINIRT_CONTRACT_FIELD_ROW(infinirtDeviceProp, cudaDeviceProp, field)
  return {INFINIRT_CONTRACT_CUDA_DEVICE_PROP_FIELDS(INFINIRT_CONTRACT_ROW)};
#undef INFINIRT_CONTRACT_ROW
}

#undef INFINIRT_CONTRACT_FIELD_ROW

TEST(CudaContract, DevicePropHasCudasLayout) {
  EXPECT_TRUE(FieldsMatch("infinirtDeviceProp", CudaDevicePropRows(), true));
  EXPECT_EQ(alignof(infinirtDeviceProp), alignof(cudaDeviceProp));
  // CUDA's structure is a prefix of ours: InfiniRT's fields start where it ends.
  EXPECT_EQ(offsetof(infinirtDeviceProp, deviceType), sizeof(cudaDeviceProp));
  // The list above is complete: driver_types.h declares exactly these fields, in order.
  EXPECT_TRUE(SameFieldNames(WrittenFields(CudaDriverTypesText(), "cudaDeviceProp"),
                             NamesOf(CudaDevicePropRows())))
      << "in driver_types.h";
}

TEST(CudaContract, DevicePropIsCudasFieldsThenOwnFields) {
  // Read from infinirt.h, so that a field added there must be compared with CUDA's (the list
  // above) or be one of InfiniRT's own, which come last.
  std::vector<std::string> expected = NamesOf(CudaDevicePropRows());
  expected.insert(expected.end(), kOwnDevicePropFields.begin(), kOwnDevicePropFields.end());
  EXPECT_TRUE(SameFieldNames(WrittenFields(InfinirtHeaderText(), "infinirtDeviceProp"), expected))
      << "in infinirt.h: a field must be one of cudaDeviceProp's (in its place) or one of "
         "InfiniRT's own, which come last";
}

}  // namespace
}  // namespace infinirt::contract
