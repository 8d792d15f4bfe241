// The HCCL engine (libinfiniccl_hccl.so, Ascend) and the CNCL engine (libinfiniccl_cncl.so,
// Cambricon) over host-emulated vendor libraries (tests/emulated_runtimes: the emulated AscendCL
// with the emulated HCCL, the emulated CNRT with the emulated CNCL), 4 devices each. Each
// translation is checked in the emulated library's record: the function called, its arguments
// (devices, count, dtype, op, root, peer), the native stream passed (the InfiniRT stream's
// infinirtStreamGetNativeHandle), injected vendor results mapped to infiniStatus_t with the
// library's words; and the data the emulation computed.
//
// ENGINE_TEST selects the engine ("hccl", "cncl"); ENGINE_TEST_MODE the run (CMakeLists.txt):
// unset, the above; "absent", the library is missing (the listing says what was looked for);
// "no_groups", an HCCL without HcclGroupStart/End (groups issued call by call, rings refused).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "emulated_runtime.h"
#include "engine_test_support.h"

namespace {

using infinirt::testing::EmulatedRuntime;
using namespace infiniccl_engine_test;  // NOLINT: the shared test helpers

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string Mode() { return Env("ENGINE_TEST_MODE"); }

// What differs between the engines: names and numbers (hccl_types.h, cncl.h).
struct Vendor {
  const char* engine;
  infiniDevice_t type;
  const char* library_variable;
  const char* library;
  const char* prefix;     // of the function names: "Hccl", "cncl"
  const char* init_all;   // the function CommInitAll calls
  const char* destroy;    // the function CommDestroy calls
  const char* devices;    // the record's field of the device list
  const char* init_rank;  // the function CommInitRank calls
  std::vector<std::pair<infiniDtype_t, int>> dtypes;
  int byte_type;  // what data of a type the vendor lacks moves as
  int sum, prod, max, min;
  // Injected results and what they must become.
  struct Result {
    int result;
    infiniStatus_t status;
    const char* words;
  };
  std::vector<Result> results;
  bool broadcast_in_place;
};

const Vendor& TheVendor() {
  static const Vendor hccl{"hccl",
                           INFINI_DEVICE_ASCEND,
                           "INFINICCL_ASCEND_LIBRARY",
                           "HCCL",
                           "Hccl",
                           "HcclCommInitAll",
                           "HcclCommDestroy",
                           "devices",
                           "HcclCommInitRootInfo",
                           {{INFINI_DTYPE_I8, 0},
                            {INFINI_DTYPE_I16, 1},
                            {INFINI_DTYPE_I32, 2},
                            {INFINI_DTYPE_F16, 3},
                            {INFINI_DTYPE_F32, 4},
                            {INFINI_DTYPE_I64, 5},
                            {INFINI_DTYPE_U64, 6},
                            {INFINI_DTYPE_U8, 7},
                            {INFINI_DTYPE_U16, 8},
                            {INFINI_DTYPE_U32, 9},
                            {INFINI_DTYPE_F64, 10},
                            {INFINI_DTYPE_BF16, 11}},
                           7,
                           0,
                           1,
                           2,
                           3,
                           {{1, INFINI_STATUS_BAD_PARAM, "parameter error"},
                            {5, INFINI_STATUS_NOT_IMPLEMENTED, "not support feature"},
                            {4, INFINI_STATUS_INTERNAL_ERROR, "internal error"},
                            {15, INFINI_STATUS_INTERNAL_ERROR, "call runtime api fail"}},
                           true};
  static const Vendor cncl{"cncl",
                           INFINI_DEVICE_CAMBRICON,
                           "INFINICCL_CAMBRICON_LIBRARY",
                           "CNCL",
                           "cncl",
                           "cnclInitComms",
                           "cnclFreeComm",
                           "devs",
                           "cnclInitComms",
                           {{INFINI_DTYPE_F16, 0x10},
                            {INFINI_DTYPE_BF16, 0x11},
                            {INFINI_DTYPE_F32, 0x12},
                            {INFINI_DTYPE_I8, 0x20},
                            {INFINI_DTYPE_I16, 0x21},
                            {INFINI_DTYPE_I32, 0x22},
                            {INFINI_DTYPE_I64, 0x23},
                            {INFINI_DTYPE_U8, 0x30},
                            {INFINI_DTYPE_U16, 0x31},
                            {INFINI_DTYPE_U32, 0x32},
                            {INFINI_DTYPE_U64, 0x33}},
                           0x30,
                           0,
                           1,
                           2,
                           3,
                           {{0x07, INFINI_STATUS_BAD_PARAM, "CNCL_RET_ERR_ARGUMENTS"},
                            {0x11, INFINI_STATUS_NOT_IMPLEMENTED, "CNCL_RET_ERR_UNSUPPORTED"},
                            {0x01, INFINI_STATUS_INTERNAL_ERROR, "CNCL_RET_ERR_INTERNAL"},
                            {0x03, INFINI_STATUS_INTERNAL_ERROR, "CNCL_RET_ERR_MLU_RUNTIME"}},
                           false};
  return Env("ENGINE_TEST") == "cncl" ? cncl : hccl;
}

std::string Fn(const char* call) { return std::string(TheVendor().prefix) + call; }

int VendorType(infiniDtype_t dtype) {
  for (const auto& [infini, vendor] : TheVendor().dtypes) {
    if (infini == dtype) return vendor;
  }
  return -1;
}

class VendorEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Mode() != "") GTEST_SKIP() << "ENGINE_TEST_MODE=" << Mode() << " runs other tests";
    ASSERT_TRUE(library_.loaded()) << "the emulated " << TheVendor().library << " is not loaded";
    library_.Reset();
    library_.ClearFailures();
  }
  void TearDown() override {
    if (library_.loaded()) library_.ClearFailures();
  }

  std::vector<std::string> Calls(const std::string& function) const {
    return library_.LogOf(function);
  }

  // The emulated library the engine opened: loading the engine opens it.
  static std::string OpenedLibrary() {
    infinirtBackendProp prop;
    infinicclGetEngineInfo(TheVendor().type, &prop);
    return Env(TheVendor().library_variable);
  }

  EmulatedRuntime library_{OpenedLibrary()};
};

// --- The engine and its communicators ------------------------------------------------------------

TEST_F(VendorEngineTest, ListingSaysLoaded) {
  infinirtBackendProp prop;
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGetEngineInfo(TheVendor().type, &prop));
  EXPECT_EQ(prop.status, infinirtBackendLoaded) << prop.reason;
  EXPECT_STREQ(prop.name, TheVendor().engine);
  const std::string file = std::string("libinfiniccl_") + TheVendor().engine + ".so";
  EXPECT_NE(std::string(prop.path).find(file), std::string::npos) << prop.path;
}

TEST_F(VendorEngineTest, CommInitAllPassesTheVendorDevicesAndNamesTheEngine) {
  Ranks ranks(TheVendor().type, 4);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  const auto made = Calls(TheVendor().init_all);
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(Field(made[0], TheVendor().devices), "0,1,2,3") << made[0];
  if (TheVendor().type == INFINI_DEVICE_CAMBRICON) {  // one process: ranks 0..n-1, no clique id
    EXPECT_EQ(Field(made[0], "ranks"), "0,1,2,3") << made[0];
    EXPECT_EQ(Field(made[0], "clique"), "null") << made[0];
  }
  const char* engine = nullptr;
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclCommGetEngine(ranks.comm(0), &engine));
  EXPECT_STREQ(engine, TheVendor().engine);
  EXPECT_EQ(library_.LiveAllocations(), 4);
}

TEST_F(VendorEngineTest, CommInitAllInTheOrderOfDeviceIds) {
  infinicclComm_t comms[2] = {};
  const int ids[2] = {3, 1};
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclCommInitAll(TheVendor().type, comms, 2, ids));
  const auto made = Calls(TheVendor().init_all);
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(Field(made[0], TheVendor().devices), "3,1");
  for (infinicclComm_t comm : comms)
    EXPECT_STATUS(INFINI_STATUS_SUCCESS, infinicclCommDestroy(comm));
  EXPECT_EQ(Calls(TheVendor().destroy).size(), 2u);
  EXPECT_EQ(library_.LiveAllocations(), 0);
}

// --- Each collective: the call, the native stream, the data --------------------------------------

TEST_F(VendorEngineTest, AllReduceSumsOnTheNativeStreams) {
  Ranks ranks(TheVendor().type, 4);
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
  const auto calls = Calls(Fn("AllReduce"));
  ASSERT_EQ(calls.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(Field(calls[r], "comm"), std::to_string(r) + "/4");
    EXPECT_EQ(Field(calls[r], "stream"), ranks.NativeStream(r)) << calls[r];
    EXPECT_EQ(Field(calls[r], "send"), Pointer(send[r]));
    EXPECT_EQ(Field(calls[r], "recv"), Pointer(recv[r]));
    EXPECT_EQ(Field(calls[r], "count"), "3");
    EXPECT_EQ(Field(calls[r], "dtype"), std::to_string(VendorType(INFINI_DTYPE_F32)));
    EXPECT_EQ(Field(calls[r], "op"), std::to_string(TheVendor().sum));
    EXPECT_EQ(Field(calls[r], "group"), "1") << "not inside the library's group";
  }
  EXPECT_EQ(Calls(Fn("GroupStart")).size(), 1u);
  EXPECT_EQ(Calls(Fn("GroupEnd")).size(), 1u);
}

// HCCL broadcasts in place: the root's data is copied to its recvbuf first, and every rank
// broadcasts its recvbuf. CNCL takes both buffers.
TEST_F(VendorEngineTest, BroadcastFromTheRoot) {
  Ranks ranks(TheVendor().type, 3);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  std::vector<void*> send(3), recv(3);
  for (int r = 0; r < 3; ++r) {
    send[r] = ranks.Buffer(r, INFINI_DTYPE_I32, {100.0 + r, 200.0 + r});
    recv[r] = ranks.Buffer(r, INFINI_DTYPE_I32, {}, 2);
  }
  Grouped(3, [&](int r) {
    return infinicclBroadcast(send[r], recv[r], 2, INFINI_DTYPE_I32, 2, ranks.comm(r),
                              ranks.stream(r));
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(ranks.Read(r, INFINI_DTYPE_I32, recv[r], 2), (std::vector<double>{102, 202}));
    EXPECT_EQ(ranks.Read(r, INFINI_DTYPE_I32, send[r], 2),
              (std::vector<double>{100.0 + r, 200.0 + r}))
        << "sendbuf changed";
  }
  const auto calls = Calls(Fn("Broadcast"));
  ASSERT_EQ(calls.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(Field(calls[r], "root"), "2");
    EXPECT_EQ(Field(calls[r], "stream"), ranks.NativeStream(r));
    EXPECT_EQ(Field(calls[r], "recv"), Pointer(recv[r]));
    EXPECT_EQ(Field(calls[r], "send"), Pointer(TheVendor().broadcast_in_place ? recv[r] : send[r]));
  }
}

TEST_F(VendorEngineTest, ReduceToTheRootOnly) {
  Ranks ranks(TheVendor().type, 4);
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
  const auto calls = Calls(Fn("Reduce"));
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(Field(calls[0], "op"), std::to_string(TheVendor().min));
  EXPECT_EQ(Field(calls[0], "root"), "1");
  for (int r = 0; r < 4; ++r) EXPECT_EQ(Field(calls[r], "stream"), ranks.NativeStream(r));
}

TEST_F(VendorEngineTest, AllGatherInRankOrder) {
  Ranks ranks(TheVendor().type, 3);
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
  const auto calls = Calls(Fn("AllGather"));
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(Field(calls[0], "count"), "2");  // the sendcount
  EXPECT_EQ(Field(calls[0], "dtype"), std::to_string(VendorType(INFINI_DTYPE_U64)));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(Field(calls[r], "stream"), ranks.NativeStream(r));
}

TEST_F(VendorEngineTest, ReduceScatterGivesEachRankItsShare) {
  Ranks ranks(TheVendor().type, 2);
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
  const auto calls = Calls(Fn("ReduceScatter"));
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(Field(calls[0], "count"), "2");  // the recvcount
  EXPECT_EQ(Field(calls[0], "dtype"), std::to_string(VendorType(INFINI_DTYPE_F16)));
  EXPECT_EQ(Field(calls[0], "op"), std::to_string(TheVendor().prod));
}

TEST_F(VendorEngineTest, SendMatchesThePeersRecv) {
  Ranks ranks(TheVendor().type, 4);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  std::vector<void*> send(4), recv(4);
  for (int r = 0; r < 4; ++r) {
    send[r] = ranks.Buffer(r, INFINI_DTYPE_I64, {1000.0 + r});
    recv[r] = ranks.Buffer(r, INFINI_DTYPE_I64, {-1});
  }
  // A ring: r sends to r + 1 and receives from r - 1 (one library group: no deadlock).
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
  const auto sends = Calls(Fn("Send"));
  const auto recvs = Calls(Fn("Recv"));
  ASSERT_EQ(sends.size(), 4u);
  ASSERT_EQ(recvs.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(Field(sends[r], "peer"), std::to_string((r + 1) % 4));
    EXPECT_EQ(Field(recvs[r], "peer"), std::to_string((r + 3) % 4));
    EXPECT_EQ(Field(sends[r], "stream"), ranks.NativeStream(r));
    EXPECT_EQ(Field(recvs[r], "stream"), ranks.NativeStream(r));
  }
}

// The legacy stream is the vendor's default stream (ACL's NULL stream, CNRT's NULL queue).
TEST_F(VendorEngineTest, TheLegacyStreamIsTheVendorsDefaultStream) {
  Ranks ranks(TheVendor().type, 1);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  void* buffer = ranks.Buffer(0, INFINI_DTYPE_F32, {5});
  ASSERT_EQ(infinirtSetDevice(ranks.ordinal(0)), infinirtSuccess);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclAllReduce(buffer, buffer, 1, INFINI_DTYPE_F32,
                                                          INFINICCL_SUM, ranks.comm(0), nullptr));
  void* legacy = nullptr;
  ASSERT_EQ(infinirtStreamGetNativeHandle(&legacy, nullptr), infinirtSuccess);
  const auto calls = Calls(Fn("AllReduce"));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(Field(calls[0], "stream"), Pointer(legacy));
  EXPECT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  EXPECT_EQ(ranks.Read(0, INFINI_DTYPE_F32, buffer, 1)[0], 5);
}

// --- Dtypes and operators ------------------------------------------------------------------------

TEST_F(VendorEngineTest, EveryReducibleDtypeAndOpMapsToTheVendorsNumbers) {
  // Ranks hold 3 and 5: sum 8, prod 15, max 5, min 3, exact in every dtype.
  const struct {
    infinicclReduceOp_t op;
    int vendor;
    double result;
  } ops[] = {{INFINICCL_SUM, TheVendor().sum, 8},
             {INFINICCL_PROD, TheVendor().prod, 15},
             {INFINICCL_MAX, TheVendor().max, 5},
             {INFINICCL_MIN, TheVendor().min, 3}};
  Ranks ranks(TheVendor().type, 2);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  for (const auto& [dtype, vendor] : TheVendor().dtypes) {
    for (const auto& op : ops) {
      SCOPED_TRACE("dtype " + std::to_string(dtype) + ", op " + std::to_string(op.op));
      void* buffer[2] = {ranks.Buffer(0, dtype, {3, 5}), ranks.Buffer(1, dtype, {5, 3})};
      library_.Reset();
      Grouped(2, [&](int r) {
        return infinicclAllReduce(buffer[r], buffer[r], 2, dtype, op.op, ranks.comm(r),
                                  ranks.stream(r));
      });
      for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(ranks.Read(r, dtype, buffer[r], 2), (std::vector<double>{op.result, op.result}));
      }
      const auto calls = Calls(Fn("AllReduce"));
      ASSERT_EQ(calls.size(), 2u);
      EXPECT_EQ(Field(calls[0], "dtype"), std::to_string(vendor));
      EXPECT_EQ(Field(calls[0], "op"), std::to_string(op.vendor));
    }
  }
}

TEST_F(VendorEngineTest, AverageAndTypesTheVendorLacksAreRefusedHonestly) {
  Ranks ranks(TheVendor().type, 1);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  void* floats = ranks.Buffer(0, INFINI_DTYPE_F32, {1});
  EXPECT_STATUS(INFINI_STATUS_NOT_IMPLEMENTED,
                infinicclAllReduce(floats, floats, 1, INFINI_DTYPE_F32, INFINICCL_AVG,
                                   ranks.comm(0), ranks.stream(0)));
  EXPECT_NE(std::string(infinicclGetLastError(nullptr)).find("no average"), std::string::npos)
      << infinicclGetLastError(nullptr);
  // A reducible dtype the vendor has no type for (CNCL's f64; HCCL has them all).
  if (VendorType(INFINI_DTYPE_F64) < 0) {
    void* doubles = ranks.Buffer(0, INFINI_DTYPE_F64, {1});
    EXPECT_STATUS(INFINI_STATUS_NOT_IMPLEMENTED,
                  infinicclAllReduce(doubles, doubles, 1, INFINI_DTYPE_F64, INFINICCL_SUM,
                                     ranks.comm(0), ranks.stream(0)));
    EXPECT_NE(std::string(infinicclGetLastError(nullptr)).find("cannot reduce dtype"),
              std::string::npos);
  }
  EXPECT_TRUE(Calls(Fn("AllReduce")).empty()) << "a refused call reached the library";
  // Data of a type the vendor lacks still moves, as bytes.
  void* flags = ranks.Buffer(0, INFINI_DTYPE_BOOL, {1, 0, 1});
  EXPECT_STATUS(INFINI_STATUS_SUCCESS, infinicclBroadcast(flags, flags, 3, INFINI_DTYPE_BOOL, 0,
                                                          ranks.comm(0), ranks.stream(0)));
  const auto calls = Calls(Fn("Broadcast"));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(Field(calls[0], "dtype"), std::to_string(TheVendor().byte_type));
  EXPECT_EQ(Field(calls[0], "count"), "3");
  ranks.Synchronize();
}

// --- Errors --------------------------------------------------------------------------------------

TEST_F(VendorEngineTest, VendorResultsAreMappedWithTheLibrarysWords) {
  Ranks ranks(TheVendor().type, 1);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  void* buffer = ranks.Buffer(0, INFINI_DTYPE_F32, {1});
  for (const Vendor::Result& c : TheVendor().results) {
    library_.Fail(Fn("AllReduce").c_str(), 0, c.result);
    EXPECT_STATUS(c.status, infinicclAllReduce(buffer, buffer, 1, INFINI_DTYPE_F32, INFINICCL_SUM,
                                               ranks.comm(0), ranks.stream(0)));
    const std::string why = infinicclGetLastError(nullptr);
    EXPECT_NE(why.find(Fn("AllReduce") + " failed"), std::string::npos) << why;
    EXPECT_NE(why.find(c.words), std::string::npos) << why;
  }
  library_.ClearFailures();
  EXPECT_STATUS(INFINI_STATUS_SUCCESS,
                infinicclAllReduce(buffer, buffer, 1, INFINI_DTYPE_F32, INFINICCL_SUM,
                                   ranks.comm(0), ranks.stream(0)));
  ranks.Synchronize();
}

TEST_F(VendorEngineTest, FailuresOfCommInitAllAndGroupEndAreMapped) {
  library_.Fail(TheVendor().init_all, 0, TheVendor().results[0].result);
  infinicclComm_t comm = nullptr;
  const int id = 0;
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM, infinicclCommInitAll(TheVendor().type, &comm, 1, &id));
  EXPECT_NE(std::string(infinicclGetLastError(nullptr))
                .find(std::string(TheVendor().init_all) + " failed"),
            std::string::npos);
  library_.ClearFailures();

  Ranks ranks(TheVendor().type, 1);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  void* buffer = ranks.Buffer(0, INFINI_DTYPE_F32, {1});
  library_.Fail(Fn("GroupEnd").c_str(), 0, TheVendor().results[2].result);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupStart());
  EXPECT_STATUS(INFINI_STATUS_SUCCESS,
                infinicclAllReduce(buffer, buffer, 1, INFINI_DTYPE_F32, INFINICCL_SUM,
                                   ranks.comm(0), ranks.stream(0)));
  EXPECT_STATUS(INFINI_STATUS_INTERNAL_ERROR, infinicclGroupEnd());
  EXPECT_NE(std::string(infinicclGetLastError(nullptr)).find(Fn("GroupEnd") + " failed"),
            std::string::npos)
      << infinicclGetLastError(nullptr);
}

// --- Through the engine's table: CommInitRank and CommGetAsyncError (ABI 1.1)
// ---------------------

TEST_F(VendorEngineTest, CommInitRankSharesTheRootThroughTheStoreOnTheRanksDevice) {
  const std::string file = std::string("libinfiniccl_") + TheVendor().engine + ".so";
  const infinicclBackendTable* table = EngineTable(file.c_str());
  ASSERT_NE(table, nullptr);
  ASSERT_NE(table->CommInitRank, nullptr);
  int ordinals[2];
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(infinirtDeviceGetOrdinal(&ordinals[i], TheVendor().type, i + 2), infinirtSuccess);
  }
  MemoryStore store;
  const infinicclBackendStore lent = store.Lend();
  infinicclBackendComm_t comms[2] = {};
  infiniStatus_t statuses[2] = {INFINI_STATUS_INTERNAL_ERROR, INFINI_STATUS_INTERNAL_ERROR};
  std::string whys[2];
  std::vector<std::thread> threads;
  for (int rank = 1; rank >= 0; --rank) {  // rank 1 first: it waits for the root's id
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
  const auto joined = Calls(TheVendor().init_rank);
  ASSERT_EQ(joined.size(), 2u);
  for (const std::string& line : joined) {
    const int rank = TheVendor().type == INFINI_DEVICE_ASCEND ? std::stoi(Field(line, "rank"))
                                                              : std::stoi(Field(line, "ranks"));
    // The vendor's device index (2 + rank), current while the communicator is made.
    const std::string device = std::to_string(2 + rank);
    EXPECT_EQ(Field(line, TheVendor().type == INFINI_DEVICE_ASCEND ? "dev" : "current"), device)
        << line;
    EXPECT_EQ(Field(line, TheVendor().type == INFINI_DEVICE_ASCEND ? "nranks" : "nrank"), "2");
  }

  // A call through the table, then an asynchronous failure: rank 0 alone waits for rank 1,
  // which never calls (the emulation gives up after EMU_CCL_TIMEOUT_MS).
  infinirtStream_t stream = nullptr;
  void* buffer = nullptr;
  ASSERT_EQ(infinirtSetDevice(ordinals[0]), infinirtSuccess);
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtMalloc(&buffer, sizeof(float)), infinirtSuccess);
  infinicclBackendCall call{};
  call.kind = INFINICCL_CALL_AllReduce;
  call.count = 1;
  call.dtype = INFINI_DTYPE_F32;
  call.op = INFINICCL_SUM;
  call.sendbuf = call.recvbuf = buffer;
  char why[INFINICCL_BACKEND_WHY_BYTES] = "";
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, table->Call(comms[0], &call, stream, why, sizeof why))
      << why;
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  infiniStatus_t async = INFINI_STATUS_SUCCESS;
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, table->CommGetAsyncError(comms[0], &async, why, sizeof why));
  EXPECT_STATUS(INFINI_STATUS_INTERNAL_ERROR, async);
  EXPECT_NE(std::string(why).find("after a call returned"), std::string::npos) << why;
  EXPECT_STATUS(INFINI_STATUS_INTERNAL_ERROR,
                table->Call(comms[0], &call, stream, why, sizeof why));
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, table->CommGetAsyncError(comms[1], &async, why, sizeof why));
  EXPECT_STATUS(INFINI_STATUS_SUCCESS, async);
  EXPECT_STATUS(INFINI_STATUS_SUCCESS, table->CommAbort(comms[0]));
  EXPECT_STATUS(INFINI_STATUS_SUCCESS, table->CommAbort(comms[1]));
  infinirtFree(buffer);
  infinirtStreamDestroy(stream);
}

// --- The other runs
// --------------------------------------------------------------------------------

// The listing says what was looked for; communicators run through the CPU engine instead.
TEST(VendorEngineAbsentTest, TheListingSaysWhatWasLookedFor) {
  if (Mode() != "absent") GTEST_SKIP() << "run with ENGINE_TEST_MODE=absent";
  infinirtBackendProp prop;
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGetEngineInfo(TheVendor().type, &prop));
  EXPECT_NE(prop.status, infinirtBackendLoaded);
  const std::string reason = prop.reason;
  EXPECT_NE(reason.find(std::string(TheVendor().library) + " not found"), std::string::npos)
      << reason;
  EXPECT_NE(reason.find(Env(TheVendor().library_variable)), std::string::npos) << reason;
  ExpectStagedAllReduce(TheVendor().type, 2);
}

// An HCCL without group calls: a group's calls run one at a time at its end; a ring of Sends
// and Recvs on one stream per rank would wait forever, and is refused before anything is issued.
TEST(VendorEngineNoGroupsTest, AGroupIsIssuedCallByCallAndARingIsRefused) {
  if (Mode() != "no_groups") GTEST_SKIP() << "run with ENGINE_TEST_MODE=no_groups";
  Ranks ranks(TheVendor().type, 2);  // loads the engine, which opens the library
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status());
  EmulatedRuntime library(Env(TheVendor().library_variable));
  ASSERT_TRUE(library.loaded());
  library.Reset();
  std::vector<void*> send(2), recv(2);
  for (int r = 0; r < 2; ++r) {
    send[r] = ranks.Buffer(r, INFINI_DTYPE_I32, {10.0 + r});
    recv[r] = ranks.Buffer(r, INFINI_DTYPE_I32, {-1});
  }
  // Collectives, and a Send that meets its Recv: issued at the group's end.
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupStart());
  for (int r = 0; r < 2; ++r) {
    EXPECT_STATUS(INFINI_STATUS_SUCCESS,
                  infinicclAllReduce(send[r], recv[r], 1, INFINI_DTYPE_I32, INFINICCL_SUM,
                                     ranks.comm(r), ranks.stream(r)));
  }
  EXPECT_TRUE(library.LogOf("HcclAllReduce").empty()) << "issued before the group's end";
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupEnd());
  EXPECT_EQ(library.LogOf("HcclAllReduce").size(), 2u);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(ranks.Read(r, INFINI_DTYPE_I32, recv[r], 1)[0], 21);
  Grouped(2, [&](int r) {
    return r == 0 ? infinicclSend(send[0], 1, INFINI_DTYPE_I32, 1, ranks.comm(0), ranks.stream(0))
                  : infinicclRecv(recv[1], 1, INFINI_DTYPE_I32, 0, ranks.comm(1), ranks.stream(1));
  });
  EXPECT_EQ(ranks.Read(1, INFINI_DTYPE_I32, recv[1], 1)[0], 10);

  // A ring: each rank sends, then receives, on one stream.
  library.Reset();
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupStart());
  for (int r = 0; r < 2; ++r) {
    EXPECT_STATUS(INFINI_STATUS_SUCCESS, infinicclSend(send[r], 1, INFINI_DTYPE_I32, 1 - r,
                                                       ranks.comm(r), ranks.stream(r)));
    EXPECT_STATUS(INFINI_STATUS_SUCCESS, infinicclRecv(recv[r], 1, INFINI_DTYPE_I32, 1 - r,
                                                       ranks.comm(r), ranks.stream(r)));
  }
  EXPECT_STATUS(INFINI_STATUS_NOT_IMPLEMENTED, infinicclGroupEnd());
  const std::string why = infinicclGetLastError(nullptr);
  EXPECT_NE(why.find("has no group calls"), std::string::npos) << why;
  EXPECT_NE(why.find("would wait forever"), std::string::npos) << why;
  EXPECT_TRUE(library.LogOf("HcclSend").empty()) << "part of a refused group was issued";
  EXPECT_TRUE(library.LogOf("HcclRecv").empty());
}

}  // namespace
