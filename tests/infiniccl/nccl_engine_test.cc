// The NCCL engine (libinfiniccl_nccl.so) over host-emulated vendor libraries
// (tests/emulated_runtimes): every vendor of the engine in config/vendors.json over its emulated
// runtime, with the stand-in of its NCCL-shaped library where there is one (the emulated CUDA
// runtime's 4 NVIDIA devices with the emulated NCCL, which most tests use; 2 devices of each other
// vendor with its library), or with its library absent (1 device; CMakeLists.txt says which).
// Each translation is checked in the emulated library's record: the function called, its
// arguments (devlist, count, dtype, op, root, peer), the native stream passed (the InfiniRT
// stream's infinirtStreamGetNativeHandle), injected NCCL results mapped to infiniStatus_t with the
// library's words; and the data the emulation computed.
//
// NCCL_TEST_MODE selects the run (CMakeLists.txt): unset, the above; "absent", NVIDIA's devices
// alone and their NCCL missing (the engine's listing says what was looked for); "old", the NCCL
// says it is 2.8.4 (before bf16 and ncclAvg).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "emulated_runtime.h"
#include "engine_test_support.h"
#include "infiniccl.h"
#include "infiniccl_backend.h"
#include "infinirt.h"
#include "infinirt_vendor_table.h"
#include "test_support.h"

namespace {

using infinirt::testing::EmulatedRuntime;
using namespace infiniccl_engine_test;  // NOLINT: the shared test helpers

std::string Mode() {
  const char* mode = std::getenv("NCCL_TEST_MODE");
  return mode != nullptr ? mode : "";
}

// A device type of the NCCL engine (config/vendors.json) and the variable naming its library.
struct NcclType {
  infiniDevice_t type;
  const char* library_variable;  // INFINICCL_<VENDOR>_LIBRARY
};

std::vector<NcclType> NcclTypes() {
  std::vector<NcclType> types;
#define NCCL_TEST_TYPE_(name, enumerator, family, engine, dlpack, operator_backend)     \
  if (std::strcmp(#engine, "nccl") == 0) {                                              \
    types.push_back({INFINI_DEVICE_##enumerator, "INFINICCL_" #enumerator "_LIBRARY"}); \
  }
  INFINIRT_VENDOR_TABLE(NCCL_TEST_TYPE_)
#undef NCCL_TEST_TYPE_
  return types;
}

// Whether this run gives the type's library as absent (CMakeLists.txt: a path under /nonexistent).
bool LibraryAbsent(const NcclType& type) {
  const char* path = std::getenv(type.library_variable);
  return path != nullptr && std::string(path).rfind("/nonexistent/", 0) == 0;
}

// NCCL's numbers, as the emulation records them.
constexpr int kNcclUint8 = 1;
constexpr int kUnhandledCudaError = 1, kSystemError = 2, kInvalidArgument = 4, kInvalidUsage = 5;

class NcclEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Mode() != "") GTEST_SKIP() << "NCCL_TEST_MODE=" << Mode() << " runs other tests";
    ASSERT_TRUE(nccl_.loaded()) << "the emulated NCCL is not loaded";
    nccl_.Reset();
    nccl_.ClearFailures();
  }
  void TearDown() override {
    if (nccl_.loaded()) nccl_.ClearFailures();
  }

  // The record lines of one function of the emulated NCCL.
  std::vector<std::string> Calls(const std::string& function) const {
    return nccl_.LogOf(function);
  }

  // The emulated library the engine opened (INFINICCL_<VENDOR>_LIBRARY), once the engine is
  // loaded (which opens it): reached by its path, it is the same instance.
  static std::string OpenedLibrary(const char* variable) {
    infinirtBackendProp prop;
    infinicclGetEngineInfo(INFINI_DEVICE_NVIDIA, &prop);
    const char* path = std::getenv(variable);
    return path != nullptr ? path : "";
  }

  EmulatedRuntime nccl_{OpenedLibrary("INFINICCL_NVIDIA_LIBRARY")};
};

// --- The engine and its listing ---------------------------------------------------------------

TEST_F(NcclEngineTest, ListingSaysLoadedForEveryFamilyType) {
  for (const NcclType& nccl_type : NcclTypes()) {
    SCOPED_TRACE(nccl_type.library_variable);
    infinirtBackendProp prop;
    ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGetEngineInfo(nccl_type.type, &prop));
    EXPECT_EQ(prop.status, infinirtBackendLoaded) << prop.reason;
    EXPECT_STREQ(prop.name, "nccl");
    EXPECT_NE(std::string(prop.path).find("libinfiniccl_nccl.so"), std::string::npos) << prop.path;
  }
}

TEST_F(NcclEngineTest, CommInitAllPassesTheVendorDevicesAndNamesTheEngine) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 4);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  const auto made = Calls("ncclCommInitAll");
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(Field(made[0], "ndev"), "4");
  EXPECT_EQ(Field(made[0], "devlist"), "0,1,2,3");
  const char* engine = nullptr;
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclCommGetEngine(ranks.comm(0), &engine));
  EXPECT_STREQ(engine, "nccl");
  int count = 0;
  EXPECT_STATUS(INFINI_STATUS_SUCCESS, infinicclCommCount(ranks.comm(3), &count));
  EXPECT_EQ(count, 4);
  EXPECT_EQ(nccl_.LiveAllocations(), 4);
}

TEST_F(NcclEngineTest, CommInitAllInTheOrderOfDeviceIds) {
  infinicclComm_t comms[2] = {};
  const int ids[2] = {3, 1};
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclCommInitAll(INFINI_DEVICE_NVIDIA, comms, 2, ids));
  const auto made = Calls("ncclCommInitAll");
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(Field(made[0], "devlist"), "3,1");
  for (infinicclComm_t comm : comms)
    EXPECT_STATUS(INFINI_STATUS_SUCCESS, infinicclCommDestroy(comm));
  EXPECT_EQ(Calls("ncclCommDestroy").size(), 2u);
  EXPECT_EQ(nccl_.LiveAllocations(), 0);
}

// --- Each collective: the call, the native stream, the data ----------------------------------

TEST_F(NcclEngineTest, AllReduceSumsOnTheNativeStreams) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 4);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  std::vector<void*> send(4), recv(4);
  for (int r = 0; r < 4; ++r) {
    send[r] = ranks.Buffer(r, INFINI_DTYPE_F32, {1.0 + r, 10.0 * r, -r * 1.0});
    recv[r] = ranks.Buffer(r, INFINI_DTYPE_F32, {}, 3);
  }
  Grouped(4, [&](int r) {
    return infinicclAllReduce(send[r], recv[r], 3, INFINI_DTYPE_F32, INFINICCL_SUM, ranks.comm(r),
                              ranks.stream(r));
  });
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(ranks.Read(r, INFINI_DTYPE_F32, recv[r], 3), (std::vector<double>{10, 60, -6}));
  }
  const auto calls = Calls("ncclAllReduce");
  ASSERT_EQ(calls.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(Field(calls[r], "comm"), std::to_string(r) + "/4");
    EXPECT_EQ(Field(calls[r], "stream"), ranks.NativeStream(r)) << calls[r];
    EXPECT_EQ(Field(calls[r], "send"), Pointer(send[r]));
    EXPECT_EQ(Field(calls[r], "recv"), Pointer(recv[r]));
    EXPECT_EQ(Field(calls[r], "count"), "3");
    EXPECT_EQ(Field(calls[r], "dtype"), "7");  // ncclFloat32
    EXPECT_EQ(Field(calls[r], "op"), "0");     // ncclSum
    EXPECT_EQ(Field(calls[r], "group"), "1");
  }
}

TEST_F(NcclEngineTest, AGroupIsOneNcclGroup) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 2);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  void* buffer[2] = {ranks.Buffer(0, INFINI_DTYPE_I32, {1}),
                     ranks.Buffer(1, INFINI_DTYPE_I32, {2})};
  nccl_.Reset();
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupStart());
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupStart());  // nested: one NCCL group
  for (int r = 0; r < 2; ++r) {
    EXPECT_STATUS(INFINI_STATUS_SUCCESS,
                  infinicclAllReduce(buffer[r], buffer[r], 1, INFINI_DTYPE_I32, INFINICCL_MAX,
                                     ranks.comm(r), ranks.stream(r)));
  }
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupEnd());
  EXPECT_TRUE(Calls("ncclGroupEnd").empty()) << "an inner end ended NCCL's group";
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupEnd());
  const auto log = nccl_.Log();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0], "ncclGroupStart depth=0");
  EXPECT_EQ(log[1].rfind("ncclAllReduce ", 0), 0u);
  EXPECT_EQ(log[2].rfind("ncclAllReduce ", 0), 0u);
  EXPECT_EQ(log[3], "ncclGroupEnd depth=1");
  for (int r = 0; r < 2; ++r) EXPECT_EQ(ranks.Read(r, INFINI_DTYPE_I32, buffer[r], 1)[0], 2);
}

TEST_F(NcclEngineTest, BroadcastFromTheRoot) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 3);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  std::vector<void*> send(3), recv(3);
  for (int r = 0; r < 3; ++r) {
    send[r] = ranks.Buffer(r, INFINI_DTYPE_F64, {100.0 + r, 200.0 + r});
    recv[r] = ranks.Buffer(r, INFINI_DTYPE_F64, {}, 2);
  }
  Grouped(3, [&](int r) {
    return infinicclBroadcast(send[r], recv[r], 2, INFINI_DTYPE_F64, 2, ranks.comm(r),
                              ranks.stream(r));
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(ranks.Read(r, INFINI_DTYPE_F64, recv[r], 2), (std::vector<double>{102, 202}));
  }
  const auto calls = Calls("ncclBroadcast");
  ASSERT_EQ(calls.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(Field(calls[r], "root"), "2");
    EXPECT_EQ(Field(calls[r], "dtype"), "8");  // ncclFloat64
    EXPECT_EQ(Field(calls[r], "stream"), ranks.NativeStream(r));
  }
}

TEST_F(NcclEngineTest, ReduceToTheRootOnly) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 4);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  std::vector<void*> send(4), recv(4);
  for (int r = 0; r < 4; ++r) {
    send[r] = ranks.Buffer(r, INFINI_DTYPE_I32, {r * 3.0 - 4, 7.0 - r});
    recv[r] = ranks.Buffer(r, INFINI_DTYPE_I32, {-1, -1});
  }
  Grouped(4, [&](int r) {
    return infinicclReduce(send[r], recv[r], 2, INFINI_DTYPE_I32, INFINICCL_MIN, 1, ranks.comm(r),
                           ranks.stream(r));
  });
  for (int r = 0; r < 4; ++r) {
    const std::vector<double> expected =
        r == 1 ? std::vector<double>{-4, 4} : std::vector<double>{-1, -1};
    EXPECT_EQ(ranks.Read(r, INFINI_DTYPE_I32, recv[r], 2), expected) << "rank " << r;
  }
  const auto calls = Calls("ncclReduce");
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(Field(calls[0], "op"), "3");  // ncclMin
  EXPECT_EQ(Field(calls[0], "root"), "1");
  EXPECT_EQ(Field(calls[0], "dtype"), "2");  // ncclInt32
  for (int r = 0; r < 4; ++r) EXPECT_EQ(Field(calls[r], "stream"), ranks.NativeStream(r));
}

TEST_F(NcclEngineTest, AllGatherInRankOrder) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 3);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  std::vector<void*> send(3), recv(3);
  for (int r = 0; r < 3; ++r) {
    send[r] = ranks.Buffer(r, INFINI_DTYPE_U64, {10.0 * r, 10.0 * r + 1});
    recv[r] = ranks.Buffer(r, INFINI_DTYPE_U64, {}, 6);
  }
  Grouped(3, [&](int r) {
    return infinicclAllGather(send[r], recv[r], 2, INFINI_DTYPE_U64, ranks.comm(r),
                              ranks.stream(r));
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(ranks.Read(r, INFINI_DTYPE_U64, recv[r], 6),
              (std::vector<double>{0, 1, 10, 11, 20, 21}));
  }
  const auto calls = Calls("ncclAllGather");
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(Field(calls[0], "count"), "2");  // the sendcount
  EXPECT_EQ(Field(calls[0], "dtype"), "5");  // ncclUint64
  for (int r = 0; r < 3; ++r) EXPECT_EQ(Field(calls[r], "stream"), ranks.NativeStream(r));
}

TEST_F(NcclEngineTest, ReduceScatterGivesEachRankItsShare) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 2);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  std::vector<void*> send(2), recv(2);
  for (int r = 0; r < 2; ++r) {
    send[r] = ranks.Buffer(r, INFINI_DTYPE_F16, {1.0 + r, 2.0 + r, 3.0 + r, 4.0 + r});
    recv[r] = ranks.Buffer(r, INFINI_DTYPE_F16, {}, 2);
  }
  Grouped(2, [&](int r) {
    return infinicclReduceScatter(send[r], recv[r], 2, INFINI_DTYPE_F16, INFINICCL_PROD,
                                  ranks.comm(r), ranks.stream(r));
  });
  EXPECT_EQ(ranks.Read(0, INFINI_DTYPE_F16, recv[0], 2), (std::vector<double>{2, 6}));
  EXPECT_EQ(ranks.Read(1, INFINI_DTYPE_F16, recv[1], 2), (std::vector<double>{12, 20}));
  const auto calls = Calls("ncclReduceScatter");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(Field(calls[0], "count"), "2");  // the recvcount
  EXPECT_EQ(Field(calls[0], "dtype"), "6");  // ncclFloat16
  EXPECT_EQ(Field(calls[0], "op"), "1");     // ncclProd
}

TEST_F(NcclEngineTest, SendMatchesThePeersRecv) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 4);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  std::vector<void*> send(4), recv(4);
  for (int r = 0; r < 4; ++r) {
    send[r] = ranks.Buffer(r, INFINI_DTYPE_I64, {1000.0 + r});
    recv[r] = ranks.Buffer(r, INFINI_DTYPE_I64, {-1});
  }
  // A ring: r sends to r + 1 and receives from r - 1.
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupStart());
  for (int r = 0; r < 4; ++r) {
    EXPECT_STATUS(INFINI_STATUS_SUCCESS, infinicclSend(send[r], 1, INFINI_DTYPE_I64, (r + 1) % 4,
                                                       ranks.comm(r), ranks.stream(r)));
    EXPECT_STATUS(INFINI_STATUS_SUCCESS, infinicclRecv(recv[r], 1, INFINI_DTYPE_I64, (r + 3) % 4,
                                                       ranks.comm(r), ranks.stream(r)));
  }
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupEnd());
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(ranks.Read(r, INFINI_DTYPE_I64, recv[r], 1)[0], 1000 + (r + 3) % 4) << "rank " << r;
  }
  const auto sends = Calls("ncclSend");
  const auto recvs = Calls("ncclRecv");
  ASSERT_EQ(sends.size(), 4u);
  ASSERT_EQ(recvs.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(Field(sends[r], "peer"), std::to_string((r + 1) % 4));
    EXPECT_EQ(Field(recvs[r], "peer"), std::to_string((r + 3) % 4));
    EXPECT_EQ(Field(sends[r], "send"), Pointer(send[r]));
    EXPECT_EQ(Field(recvs[r], "recv"), Pointer(recv[r]));
    EXPECT_EQ(Field(sends[r], "stream"), ranks.NativeStream(r));
    EXPECT_EQ(Field(recvs[r], "stream"), ranks.NativeStream(r));
  }
}

// The legacy stream (NULL) is the vendor's legacy stream of the rank's device.
TEST_F(NcclEngineTest, TheLegacyStreamIsTheVendorsLegacyStream) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 1);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  void* buffer = ranks.Buffer(0, INFINI_DTYPE_F32, {5});
  ASSERT_EQ(infinirtSetDevice(ranks.ordinal(0)), infinirtSuccess);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclAllReduce(buffer, buffer, 1, INFINI_DTYPE_F32,
                                                          INFINICCL_SUM, ranks.comm(0), nullptr));
  void* legacy = nullptr;
  ASSERT_EQ(infinirtStreamGetNativeHandle(&legacy, nullptr), infinirtSuccess);
  const auto calls = Calls("ncclAllReduce");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(Field(calls[0], "stream"), Pointer(legacy));
  EXPECT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
}

// --- Dtypes and operators ---------------------------------------------------------------------

struct DtypeCase {
  infiniDtype_t dtype;
  int nccl;
};

TEST_F(NcclEngineTest, EveryReducibleDtypeAndOpMapsToNcclsNumbers) {
  const DtypeCase dtypes[] = {{INFINI_DTYPE_I8, 0},  {INFINI_DTYPE_U8, 1},  {INFINI_DTYPE_I32, 2},
                              {INFINI_DTYPE_U32, 3}, {INFINI_DTYPE_I64, 4}, {INFINI_DTYPE_U64, 5},
                              {INFINI_DTYPE_F16, 6}, {INFINI_DTYPE_F32, 7}, {INFINI_DTYPE_F64, 8},
                              {INFINI_DTYPE_BF16, 9}};
  // Ranks hold 3 and 5: sum 8, prod 15, max 5, min 3, avg 4, exact in every dtype.
  const struct {
    infinicclReduceOp_t op;
    int nccl;
    double result;
  } ops[] = {{INFINICCL_SUM, 0, 8},
             {INFINICCL_PROD, 1, 15},
             {INFINICCL_MAX, 2, 5},
             {INFINICCL_MIN, 3, 3},
             {INFINICCL_AVG, 4, 4}};
  Ranks ranks(INFINI_DEVICE_NVIDIA, 2);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  for (const DtypeCase& dtype : dtypes) {
    for (const auto& op : ops) {
      SCOPED_TRACE("dtype " + std::to_string(dtype.dtype) + ", op " + std::to_string(op.op));
      void* buffer[2] = {ranks.Buffer(0, dtype.dtype, {3, 5}),
                         ranks.Buffer(1, dtype.dtype, {5, 3})};
      nccl_.Reset();
      Grouped(2, [&](int r) {
        return infinicclAllReduce(buffer[r], buffer[r], 2, dtype.dtype, op.op, ranks.comm(r),
                                  ranks.stream(r));
      });
      for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(ranks.Read(r, dtype.dtype, buffer[r], 2),
                  (std::vector<double>{op.result, op.result}));
      }
      const auto calls = Calls("ncclAllReduce");
      ASSERT_EQ(calls.size(), 2u);
      EXPECT_EQ(Field(calls[0], "dtype"), std::to_string(dtype.nccl));
      EXPECT_EQ(Field(calls[0], "op"), std::to_string(op.nccl));
    }
  }
}

TEST_F(NcclEngineTest, ReductionsNcclCannotDoAreNotImplemented) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 1);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  for (infiniDtype_t dtype : {INFINI_DTYPE_I16, INFINI_DTYPE_U16}) {
    void* buffer = ranks.Buffer(0, INFINI_DTYPE_I16, {1});
    EXPECT_STATUS(INFINI_STATUS_NOT_IMPLEMENTED,
                  infinicclAllReduce(buffer, buffer, 1, dtype, INFINICCL_SUM, ranks.comm(0),
                                     ranks.stream(0)));
    EXPECT_NE(std::string(infinicclGetLastError(nullptr)).find("cannot reduce"), std::string::npos)
        << infinicclGetLastError(nullptr);
  }
  EXPECT_TRUE(Calls("ncclAllReduce").empty());
}

// Data that only moves goes as bytes where NCCL has no type for it.
TEST_F(NcclEngineTest, MovingDataNcclHasNoTypeForMovesItsBytes) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 2);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  void* send[2] = {ranks.Buffer(0, INFINI_DTYPE_I16, {-7, 300, 9}),
                   ranks.Buffer(1, INFINI_DTYPE_I16, {}, 3)};
  void* recv[2] = {ranks.Buffer(0, INFINI_DTYPE_I16, {}, 3),
                   ranks.Buffer(1, INFINI_DTYPE_I16, {}, 3)};
  Grouped(2, [&](int r) {
    return infinicclBroadcast(send[r], recv[r], 3, INFINI_DTYPE_I16, 0, ranks.comm(r),
                              ranks.stream(r));
  });
  EXPECT_EQ(ranks.Read(1, INFINI_DTYPE_I16, recv[1], 3), (std::vector<double>{-7, 300, 9}));
  const auto calls = Calls("ncclBroadcast");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(Field(calls[0], "dtype"), std::to_string(kNcclUint8));
  EXPECT_EQ(Field(calls[0], "count"), "6");
}

// --- Errors ------------------------------------------------------------------------------------

TEST_F(NcclEngineTest, NcclResultsAreMappedWithTheLibrarysWords) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 1);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  void* buffer = ranks.Buffer(0, INFINI_DTYPE_F32, {1});
  const struct {
    int result;
    infiniStatus_t status;
    const char* words;
  } cases[] = {{kUnhandledCudaError, INFINI_STATUS_INTERNAL_ERROR, "unhandled cuda error"},
               {kSystemError, INFINI_STATUS_INTERNAL_ERROR, "unhandled system error"},
               {kInvalidArgument, INFINI_STATUS_BAD_PARAM, "invalid argument"},
               {kInvalidUsage, INFINI_STATUS_BAD_PARAM, "invalid usage"}};
  for (const auto& c : cases) {
    nccl_.Fail("ncclAllReduce", 0, c.result);
    EXPECT_STATUS(c.status, infinicclAllReduce(buffer, buffer, 1, INFINI_DTYPE_F32, INFINICCL_SUM,
                                               ranks.comm(0), ranks.stream(0)));
    const std::string why = infinicclGetLastError(nullptr);
    EXPECT_NE(why.find("ncclAllReduce failed"), std::string::npos) << why;
    EXPECT_NE(why.find(c.words), std::string::npos) << why;
    EXPECT_NE(why.find("injected failure of ncclAllReduce"), std::string::npos)
        << "ncclGetLastError's text: " << why;
  }
  nccl_.ClearFailures();
  EXPECT_STATUS(INFINI_STATUS_SUCCESS,
                infinicclAllReduce(buffer, buffer, 1, INFINI_DTYPE_F32, INFINICCL_SUM,
                                   ranks.comm(0), ranks.stream(0)));
}

TEST_F(NcclEngineTest, FailuresOfCommInitAllAndGroupEndAreMapped) {
  nccl_.Fail("ncclCommInitAll", 0, kInvalidUsage);
  infinicclComm_t comm = nullptr;
  const int id = 0;
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM, infinicclCommInitAll(INFINI_DEVICE_NVIDIA, &comm, 1, &id));
  EXPECT_NE(std::string(infinicclGetLastError(nullptr)).find("ncclCommInitAll failed"),
            std::string::npos);
  nccl_.ClearFailures();

  Ranks ranks(INFINI_DEVICE_NVIDIA, 1);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  void* buffer = ranks.Buffer(0, INFINI_DTYPE_F32, {1});
  nccl_.Fail("ncclGroupEnd", 0, kUnhandledCudaError);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupStart());
  EXPECT_STATUS(INFINI_STATUS_SUCCESS,
                infinicclAllReduce(buffer, buffer, 1, INFINI_DTYPE_F32, INFINICCL_SUM,
                                   ranks.comm(0), ranks.stream(0)));
  EXPECT_STATUS(INFINI_STATUS_INTERNAL_ERROR, infinicclGroupEnd());
  EXPECT_NE(std::string(infinicclGetLastError(nullptr)).find("ncclGroupEnd failed"),
            std::string::npos)
      << infinicclGetLastError(nullptr);
}

// --- Other vendors
// --------------------------------------------------------------------------------

// Each vendor's devices go to its own NCCL-shaped library, under that library's names (the
// symbol prefix of its row of config/vendors.json). The vendor's device indices are passed, not
// InfiniRT's ordinals.
void ExpectTheVendorsOwnLibrary(infiniDevice_t type, const char* library_variable,
                                const std::string& prefix, const EmulatedRuntime& nccl) {
  SCOPED_TRACE(library_variable);
  EmulatedRuntime library(std::getenv(library_variable));
  ASSERT_TRUE(library.loaded()) << "the emulated library is not loaded";
  library.Reset();
  nccl.Reset();
  Ranks ranks(type, 2);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  const auto made = library.LogOf(prefix + "CommInitAll");
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(Field(made[0], "devlist"), "0,1");
  void* buffer[2] = {ranks.Buffer(0, INFINI_DTYPE_BF16, {1.5}),
                     ranks.Buffer(1, INFINI_DTYPE_BF16, {2})};
  Grouped(2, [&](int r) {
    return infinicclAllReduce(buffer[r], buffer[r], 1, INFINI_DTYPE_BF16, INFINICCL_SUM,
                              ranks.comm(r), ranks.stream(r));
  });
  for (int r = 0; r < 2; ++r) EXPECT_EQ(ranks.Read(r, INFINI_DTYPE_BF16, buffer[r], 1)[0], 3.5);
  const auto calls = library.LogOf(prefix + "AllReduce");
  ASSERT_EQ(calls.size(), 2u);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(Field(calls[r], "stream"), ranks.NativeStream(r));
  EXPECT_EQ(library.LogOf(prefix + "GroupStart").size(), 1u);
  if (&nccl != &library) {
    EXPECT_TRUE(nccl.Log().empty()) << "NVIDIA's NCCL was called for another vendor's devices";
  }
}

TEST_F(NcclEngineTest, MetaxGoesToItsOwnMccl) {
  ExpectTheVendorsOwnLibrary(INFINI_DEVICE_METAX, "INFINICCL_METAX_LIBRARY", "mccl", nccl_);
}

TEST_F(NcclEngineTest, HygonGoesToItsRccl) {
  ExpectTheVendorsOwnLibrary(INFINI_DEVICE_HYGON, "INFINICCL_HYGON_LIBRARY", "nccl", nccl_);
}

TEST_F(NcclEngineTest, MooreGoesToItsOwnMccl) {
  ExpectTheVendorsOwnLibrary(INFINI_DEVICE_MOORE, "INFINICCL_MOORE_LIBRARY", "mccl", nccl_);
}

// A type whose library is absent while the engine serves others: its communicators run through
// the CPU engine, which says why in the debug log; the engine's own refusal names the library.
TEST_F(NcclEngineTest, ATypeWhoseLibraryIsAbsentRunsThroughTheCpuEngine) {
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  ASSERT_EQ(infinirtGetAllDeviceCount(counts), infinirtSuccess);
  int absent = 0;
  for (const NcclType& nccl_type : NcclTypes()) {
    if (!LibraryAbsent(nccl_type)) continue;
    SCOPED_TRACE(nccl_type.library_variable);
    ASSERT_GT(counts[nccl_type.type], 0) << "run with the vendor's emulated runtime";
    ExpectStagedAllReduce(nccl_type.type, 1);
    ++absent;
  }
  if (absent == 0) GTEST_SKIP() << "every vendor of the engine has its emulated library here";
}

// --- Graphs
// ---------------------------------------------------------------------------------------

// A captured call is issued into the vendor's own capture when the graph is instantiated, and
// runs at every launch.
TEST_F(NcclEngineTest, ACapturedCallRunsAtEveryLaunch) {
  Ranks ranks(INFINI_DEVICE_NVIDIA, 1);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  void* send = ranks.Buffer(0, INFINI_DTYPE_F32, {1, 2});
  void* recv = ranks.Buffer(0, INFINI_DTYPE_F32, {}, 2);
  ASSERT_EQ(infinirtSetDevice(ranks.ordinal(0)), infinirtSuccess);
  infinirtStream_t stream = ranks.stream(0);
  ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal), infinirtSuccess);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS,
                infinicclBroadcast(send, recv, 2, INFINI_DTYPE_F32, 0, ranks.comm(0), stream));
  infinirtGraph_t graph = nullptr;
  ASSERT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtSuccess);
  EXPECT_TRUE(Calls("ncclBroadcast").empty()) << "issued while capturing";
  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
  EXPECT_EQ(Calls("ncclBroadcast").size(), 1u);
  ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
  EXPECT_EQ(ranks.Read(0, INFINI_DTYPE_F32, recv, 2), (std::vector<double>{1, 2}));
  const float changed[2] = {7, 8};
  ASSERT_EQ(infinirtMemcpy(send, changed, sizeof changed, infinirtMemcpyHostToDevice),
            infinirtSuccess);
  ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
  EXPECT_EQ(ranks.Read(0, INFINI_DTYPE_F32, recv, 2), (std::vector<double>{7, 8}));
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
}

// --- Through the engine's table: CommInitRank and CommGetAsyncError (ABI 1.1) -------------------

TEST_F(NcclEngineTest, CommInitRankSharesTheIdThroughTheStoreOnTheRanksDevice) {
  const infinicclBackendTable* table = EngineTable("libinfiniccl_nccl.so");
  ASSERT_NE(table, nullptr);
  ASSERT_GE(table->struct_size, sizeof(infinicclBackendTable));
  ASSERT_NE(table->CommInitRank, nullptr);
  EmulatedRuntime mccl(std::getenv("INFINICCL_METAX_LIBRARY"));
  ASSERT_TRUE(mccl.loaded());
  mccl.Reset();
  // MetaX devices: their ordinals are not their vendor indices (NVIDIA's four come first or last).
  int ordinals[2];
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(infinirtDeviceGetOrdinal(&ordinals[i], INFINI_DEVICE_METAX, i), infinirtSuccess);
  MemoryStore store;
  const infinicclBackendStore lent = store.Lend();
  infinicclBackendComm_t comms[2] = {};
  infiniStatus_t statuses[2] = {INFINI_STATUS_INTERNAL_ERROR, INFINI_STATUS_INTERNAL_ERROR};
  std::string whys[2];
  std::vector<std::thread> threads;
  for (int rank = 1; rank >= 0; --rank) {  // rank 1 first: it waits for the id
    threads.emplace_back([&, rank] {
      char why[INFINICCL_BACKEND_WHY_BYTES] = "";
      statuses[rank] =
          table->CommInitRank(2, rank, ordinals[rank], 10000, &lent, &comms[rank], why, sizeof why);
      whys[rank] = why;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_STATUS(INFINI_STATUS_SUCCESS, statuses[rank]) << whys[rank];
  }
  EXPECT_EQ(store.sets, 1);
  EXPECT_EQ(mccl.LogOf("mcclGetUniqueId").size(), 1u);
  const auto joined = mccl.LogOf("mcclCommInitRank");
  ASSERT_EQ(joined.size(), 2u);
  for (const std::string& line : joined) {
    const std::string rank = Field(line, "rank");
    EXPECT_EQ(Field(line, "dev"), rank) << "ncclCommInitRank ran with another device current";
    EXPECT_EQ(Field(line, "nranks"), "2");
  }

  // A call through the table, then an asynchronous failure: rank 0 alone waits for rank 1,
  // which never calls (the emulation gives up after EMU_NCCL_TIMEOUT_MS).
  infinirtStream_t streams[2] = {};
  void* buffers[2] = {};
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(infinirtSetDevice(ordinals[r]), infinirtSuccess);
    ASSERT_EQ(infinirtStreamCreate(&streams[r]), infinirtSuccess);
    ASSERT_EQ(infinirtMalloc(&buffers[r], sizeof(float)), infinirtSuccess);
  }
  infinicclBackendCall call{};
  call.kind = INFINICCL_CALL_AllReduce;
  call.count = 1;
  call.dtype = INFINI_DTYPE_F32;
  call.op = INFINICCL_SUM;
  char why[INFINICCL_BACKEND_WHY_BYTES] = "";
  call.sendbuf = call.recvbuf = buffers[0];
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, table->Call(comms[0], &call, streams[0], why, sizeof why))
      << why;
  EXPECT_EQ(infinirtStreamSynchronize(streams[0]), infinirtSuccess);
  infiniStatus_t async = INFINI_STATUS_SUCCESS;
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, table->CommGetAsyncError(comms[0], &async, why, sizeof why));
  EXPECT_STATUS(INFINI_STATUS_INTERNAL_ERROR, async);
  EXPECT_NE(std::string(why).find("unhandled system error"), std::string::npos) << why;
  // Every later call of the rank answers the failure.
  EXPECT_STATUS(INFINI_STATUS_INTERNAL_ERROR,
                table->Call(comms[0], &call, streams[0], why, sizeof why));
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, table->CommGetAsyncError(comms[1], &async, why, sizeof why));
  EXPECT_STATUS(INFINI_STATUS_SUCCESS, async);
  EXPECT_STATUS(INFINI_STATUS_SUCCESS, table->CommAbort(comms[0]));
  EXPECT_STATUS(INFINI_STATUS_SUCCESS, table->CommAbort(comms[1]));
  EXPECT_EQ(mccl.LogOf("mcclCommAbort").size(), 2u);
  for (int r = 0; r < 2; ++r) {
    infinirtFree(buffers[r]);
    infinirtStreamDestroy(streams[r]);
  }
}

// --- The other runs
// ---------------------------------------------------------------------------------

TEST(NcclEngineAbsentTest, TheListingSaysWhatWasLookedFor) {
  if (Mode() != "absent") GTEST_SKIP() << "run with NCCL_TEST_MODE=absent";
  infinirtBackendProp prop;
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGetEngineInfo(INFINI_DEVICE_NVIDIA, &prop));
  EXPECT_NE(prop.status, infinirtBackendLoaded);
  const std::string reason = prop.reason;
  EXPECT_NE(reason.find("NVIDIA"), std::string::npos) << reason;
  EXPECT_NE(reason.find("NCCL not found"), std::string::npos) << reason;
  EXPECT_NE(reason.find(std::getenv("INFINICCL_NVIDIA_LIBRARY")), std::string::npos) << reason;
  ExpectStagedAllReduce(INFINI_DEVICE_NVIDIA, 2);  // through the CPU engine instead
}

TEST(NcclEngineOldTest, Bfloat16AndAvgNeedNccl2103) {
  if (Mode() != "old") GTEST_SKIP() << "run with NCCL_TEST_MODE=old";
  Ranks ranks(INFINI_DEVICE_NVIDIA, 1);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  void* buffer = ranks.Buffer(0, INFINI_DTYPE_BF16, {1});
  EXPECT_STATUS(INFINI_STATUS_NOT_IMPLEMENTED,
                infinicclAllReduce(buffer, buffer, 1, INFINI_DTYPE_BF16, INFINICCL_SUM,
                                   ranks.comm(0), ranks.stream(0)));
  EXPECT_NE(std::string(infinicclGetLastError(nullptr)).find("2.10.3"), std::string::npos);
  void* floats = ranks.Buffer(0, INFINI_DTYPE_F32, {1});
  EXPECT_STATUS(INFINI_STATUS_NOT_IMPLEMENTED,
                infinicclAllReduce(floats, floats, 1, INFINI_DTYPE_F32, INFINICCL_AVG,
                                   ranks.comm(0), ranks.stream(0)));
  EXPECT_NE(std::string(infinicclGetLastError(nullptr)).find("ncclAvg"), std::string::npos);
  // bf16 data still moves, as bytes.
  EXPECT_STATUS(INFINI_STATUS_SUCCESS, infinicclBroadcast(buffer, buffer, 1, INFINI_DTYPE_BF16, 0,
                                                          ranks.comm(0), ranks.stream(0)));
  EXPECT_STATUS(INFINI_STATUS_SUCCESS,
                infinicclAllReduce(floats, floats, 1, INFINI_DTYPE_F32, INFINICCL_MAX,
                                   ranks.comm(0), ranks.stream(0)));
}

}  // namespace
