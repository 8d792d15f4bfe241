// Contract checks that need no CUDA Toolkit: libinfinirt.so exports exactly the functions of
// infinirt.h's lists, error names and strings follow INFINIRT_ERROR_LIST, and the header is C99.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "header_c99.h"
#include "infinirt.h"
#include "infinirt_vendor_table.h"

namespace {

// "infinirt<Name>" for every entry of both function lists, in list order.
std::vector<std::string> ListedFunctions() {
#define INFINIRT_CONTRACT_NAME(ret, name, params) "infinirt" #name,
  return {INFINIRT_CUDA_FUNCTIONS(INFINIRT_CONTRACT_NAME)
              INFINIRT_EXTENSION_FUNCTIONS(INFINIRT_CONTRACT_NAME)};
#undef INFINIRT_CONTRACT_NAME
}

// The listed functions and their per-thread variants ("infinirt<Name>_ptsz", ...): what the
// library exports.
std::vector<std::string> ExportedFunctions() {
  std::vector<std::string> names = ListedFunctions();
#define INFINIRT_CONTRACT_VARIANT(name, variant) "infinirt" #name "_" #variant,
  for (const char* variant : {INFINIRT_PER_THREAD_STREAM_FUNCTIONS(INFINIRT_CONTRACT_VARIANT)}) {
    names.push_back(variant);
  }
#undef INFINIRT_CONTRACT_VARIANT
  return names;
}

// The file of the libinfinirt this test is linked with; "" if it cannot be found.
std::string LinkedLibraryPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&infinirtGetDeviceCount), &info) == 0) return "";
  return info.dli_fname != nullptr ? info.dli_fname : "";
}

// A valid path must name the shared library, not this executable (which it would in a non-PIE
// build, where &function is the executable's PLT stub).
void ExpectIsTheLibrary(const std::string& path) {
  ASSERT_FALSE(path.empty()) << "dladdr cannot place infinirtGetDeviceCount";
  const std::string file = path.substr(path.rfind('/') + 1);
  ASSERT_EQ(file.rfind("libinfinirt.so", 0), 0u)
      << "infinirtGetDeviceCount resolves into " << path << ", not libinfinirt.so";
}

TEST(ContractApiList, EveryListedFunctionIsExported) {
  const std::string path = LinkedLibraryPath();
  ASSERT_NO_FATAL_FAILURE(ExpectIsTheLibrary(path));
  // Already loaded: RTLD_NOLOAD returns the same library instead of loading a second copy.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(library, nullptr) << dlerror();
  std::vector<std::string> missing;
  for (const std::string& name : ExportedFunctions()) {
    void* symbol = dlsym(library, name.c_str());
    Dl_info info{};
    // Found in libinfinirt.so itself, not in one of its dependencies.
    const bool exported = symbol != nullptr && dladdr(symbol, &info) != 0 &&
                          info.dli_fname != nullptr && path == info.dli_fname;
    if (!exported) missing.push_back(name);
  }
  dlclose(library);
  if (!missing.empty()) {
    ADD_FAILURE() << missing.front() << " is in infinirt.h's lists but " << path
                  << " does not export it (all missing: " << testing::PrintToString(missing) << ")";
  }
}

// Defined dynamic symbols of `path` starting with "infinirt", read with nm; false if nm fails.
bool ExportedInfinirtSymbols(const std::string& path, std::set<std::string>* names,
                             std::string* error) {
  const std::string command =
      std::string("'") + INFINIRT_CONTRACT_NM + "' -D --defined-only '" + path + "' 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) {
    *error = "cannot run " + command;
    return false;
  }
  std::string output;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe.get()) != nullptr) output += buffer;
  if (pclose(pipe.release()) != 0) {
    *error = command + " failed:\n" + output;
    return false;
  }
  // Lines read "<address> <type letter> <name>[@version]".
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::string name = line.substr(line.find_last_of(' ') + 1);
    name = name.substr(0, name.find('@'));
    if (name.rfind("infinirt", 0) == 0) names->insert(name);
  }
  return true;
}

TEST(ContractApiList, LibraryExportsNoOtherInfinirtSymbol) {
  if (std::strlen(INFINIRT_CONTRACT_NM) == 0) GTEST_SKIP() << "nm was not found at configure time";
  const std::string path = LinkedLibraryPath();
  ASSERT_NO_FATAL_FAILURE(ExpectIsTheLibrary(path));
  std::set<std::string> exported;
  std::string error;
  ASSERT_TRUE(ExportedInfinirtSymbols(path, &exported, &error)) << error;
  // Guards against misreading nm's output (a function the test itself calls must be there);
  // listed functions that are not exported are the other test's business.
  ASSERT_EQ(exported.count("infinirtGetDeviceCount"), 1u)
      << "nm output of " << path << " not understood";
  const std::vector<std::string> listed = ExportedFunctions();
  // Any other infinirt* symbol (function or data) is a public entry point outside the lists.
  for (const std::string& name : listed) exported.erase(name);
  if (!exported.empty()) {
    ADD_FAILURE() << path << " exports " << *exported.begin()
                  << ", which is in none of INFINIRT_CUDA_FUNCTIONS, INFINIRT_EXTENSION_FUNCTIONS "
                     "and INFINIRT_PER_THREAD_STREAM_FUNCTIONS (all extra: "
                  << testing::PrintToString(exported) << ")";
  }
}

struct ErrorEntry {
  infinirtError_t value;
  const char* name;  // "infinirt" + suffix
  const char* description;
};

TEST(ContractErrorText, NamesAndStringsFollowTheErrorList) {
#define INFINIRT_CONTRACT_ERROR_ENTRY(suffix, value, description) \
  {infinirt##suffix, "infinirt" #suffix, description},
  const ErrorEntry entries[] = {INFINIRT_ERROR_LIST(INFINIRT_CONTRACT_ERROR_ENTRY)};
#undef INFINIRT_CONTRACT_ERROR_ENTRY
  for (const ErrorEntry& entry : entries) {
    const char* name = infinirtGetErrorName(entry.value);
    const char* text = infinirtGetErrorString(entry.value);
    ASSERT_STREQ(name, entry.name) << "infinirtGetErrorName(" << entry.value << ")";
    ASSERT_STREQ(text, entry.description) << "infinirtGetErrorString(" << entry.name << ")";
  }
}

TEST(ContractErrorText, UnknownCodeIsUnrecognized) {
  const auto unknown = static_cast<infinirtError_t>(12345);
  EXPECT_STREQ(infinirtGetErrorName(unknown), "unrecognized error code");
  EXPECT_STREQ(infinirtGetErrorString(unknown), "unrecognized error code");
}

TEST(ContractHeader, C99SeesWhatCxxSees) {
  InfinirtC99Facts facts{};
  InfinirtC99GetFacts(&facts);
  EXPECT_EQ(facts.function_count, static_cast<int>(ListedFunctions().size()));
  EXPECT_EQ(facts.device_prop_size, sizeof(infinirtDeviceProp));
  EXPECT_EQ(facts.pointer_attributes_size, sizeof(infinirtPointerAttributes));
  EXPECT_EQ(facts.backend_prop_size, sizeof(infinirtBackendProp));
  EXPECT_EQ(facts.stream_legacy, reinterpret_cast<std::uintptr_t>(infinirtStreamLegacy));
  EXPECT_EQ(facts.not_ready, static_cast<int>(infinirtErrorNotReady));
  EXPECT_STREQ(facts.invalid_value_name, "infinirtErrorInvalidValue");
  EXPECT_EQ(facts.version_macro, INFINIRT_CUDA_API_VERSION);
  ASSERT_EQ(facts.device_type_count, static_cast<int>(INFINI_DEVICE_TYPE_COUNT));
#define INFINIRT_CONTRACT_DEVICE_TYPE(name, value, display, plugin)       \
  EXPECT_STREQ(facts.device_plugin_names[INFINI_DEVICE_##name], #plugin); \
  EXPECT_STREQ(facts.device_display_names[value], display);
  INFINIRT_DEVICE_TYPES(INFINIRT_CONTRACT_DEVICE_TYPE)
#undef INFINIRT_CONTRACT_DEVICE_TYPE
}

// The device types are InfiniCore's infiniDevice_t, number for number (a program may pass one
// from the other), as the vendor table (config/vendors.json) records them: the header's list has
// exactly the table's rows, each with its enumerator and number. The list's values count up from
// 0, so that INFINI_DEVICE_TYPE_COUNT sizes an array indexed by type.
TEST(ContractHeader, DeviceTypesKeepInfiniCoresNumbering) {
  std::map<std::string, int> listed;  // plugin name to value, from infinicore.h
#define INFINIRT_CONTRACT_LISTED_TYPE(name, value, display, plugin) \
  listed[#plugin] = value;                                          \
  EXPECT_EQ(INFINI_DEVICE_##name, value) << #name;
  INFINIRT_DEVICE_TYPES(INFINIRT_CONTRACT_LISTED_TYPE)
#undef INFINIRT_CONTRACT_LISTED_TYPE
  size_t rows = 0;
#define INFINIRT_CONTRACT_TABLE_ROW(name, enumerator, family, engine, dlpack, operator_backend) \
  ++rows;                                                                                       \
  ASSERT_EQ(listed.count(#name), 1u) << #name << " is not in INFINIRT_DEVICE_TYPES";            \
  EXPECT_EQ(listed.at(#name), static_cast<int>(INFINI_DEVICE_##enumerator)) << #name;
  INFINIRT_VENDOR_TABLE(INFINIRT_CONTRACT_TABLE_ROW)
#undef INFINIRT_CONTRACT_TABLE_ROW
  EXPECT_EQ(rows, listed.size());
  std::vector<int> values;
#define INFINIRT_CONTRACT_DEVICE_VALUE(name, value, display, plugin) values.push_back(value);
  INFINIRT_DEVICE_TYPES(INFINIRT_CONTRACT_DEVICE_VALUE)
#undef INFINIRT_CONTRACT_DEVICE_VALUE
  ASSERT_EQ(values.size(), static_cast<size_t>(INFINI_DEVICE_TYPE_COUNT));
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(values[i], static_cast<int>(i));
}

}  // namespace
