// INFINIRT_ALLOC_CONF: the parser on its own (runtime/alloc_config.cc compiled into this test),
// then the variable as the allocator of a run reads it. ALLOC_CONF_EXPECT says which run this
// is: "valid" (INFINIRT_ALLOC_CONF=max_split_size_mb:24,garbage_collection_threshold:0.5),
// "malformed" (max_split_size_mb:lots), or unset (the variable is unset too).
#include "alloc_config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "error_of.h"
#include "infinirt/runtime.hpp"

namespace infinirt {
namespace {

using detail::AllocConfig;
using testing::ErrorOf;

std::string WhatOf(const std::string& text) {
  try {
    AllocConfig::Parse(text);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(AllocConfigTest, AnEmptySettingKeepsTheDefaults) {
  for (const char* text : {"", " ", ",", " , "}) {
    const AllocConfig config = AllocConfig::Parse(text);
    EXPECT_EQ(config.max_split_size, SIZE_MAX) << text;
    EXPECT_EQ(config.garbage_collection_threshold, 0) << text;
    EXPECT_FALSE(config.expandable) << text;
  }
}

TEST(AllocConfigTest, ReadsEveryKeyWithEitherSeparator) {
  const AllocConfig config =
      AllocConfig::Parse("max_split_size_mb:64, garbage_collection_threshold=0.75,expandable:off");
  EXPECT_EQ(config.max_split_size, size_t{64} << 20);
  EXPECT_DOUBLE_EQ(config.garbage_collection_threshold, 0.75);
  EXPECT_FALSE(config.expandable);
}

TEST(AllocConfigTest, RefusesBadValuesNamingTheKey) {
  const struct {
    const char* text;
    const char* named;
  } cases[] = {
      {"max_split_size_mb:lots", "max_split_size_mb"},
      {"max_split_size_mb:0", "max_split_size_mb"},
      {"max_split_size_mb:-5", "max_split_size_mb"},
      {"max_split_size_mb:99999999999999999999", "max_split_size_mb"},
      {"garbage_collection_threshold:1", "garbage_collection_threshold"},
      {"garbage_collection_threshold:0", "garbage_collection_threshold"},
      {"garbage_collection_threshold:half", "garbage_collection_threshold"},
      {"expandable:maybe", "expandable"},
      {"max_split_mb:64", "unknown key 'max_split_mb'"},
      {"max_split_size_mb", "'max_split_size_mb' is not key:value"},
  };
  for (const auto& bad : cases) {
    const std::string what = WhatOf(bad.text);
    EXPECT_NE(what.find("INFINIRT_ALLOC_CONF"), std::string::npos) << bad.text << ": " << what;
    EXPECT_NE(what.find(bad.named), std::string::npos) << bad.text << ": " << what;
    EXPECT_EQ(ErrorOf([&] { AllocConfig::Parse(bad.text); }), infinirtErrorInvalidValue)
        << bad.text;
  }
}

TEST(AllocConfigTest, ExpandableSegmentsAreNotSupported) {
  EXPECT_EQ(ErrorOf([] { AllocConfig::Parse("expandable:on"); }), infinirtErrorNotSupported);
  EXPECT_NE(WhatOf("expandable:true").find("not supported"), std::string::npos);
}

// The variable as this run's allocator reads it.
TEST(AllocConfigTest, TheAllocatorFollowsTheVariable) {
  const char* expect = std::getenv("ALLOC_CONF_EXPECT");
  const std::string run = expect != nullptr ? expect : "";
  Runtime* runtime = context::getRuntime();
  if (run == "malformed") {
    try {
      runtime->allocateMemory(64);
      FAIL() << "allocated despite a malformed INFINIRT_ALLOC_CONF";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), infinirtErrorInvalidValue);
      EXPECT_NE(std::string(error.what()).find("max_split_size_mb"), std::string::npos)
          << error.what();
    }
    return;
  }
  // Valid or unset: blocks of 30 MiB are split for a 4 MiB request only without a limit.
  allocator::emptyCache(runtime->device());
  std::byte* big = nullptr;
  {
    auto block = runtime->allocateMemory(30 << 20);
    big = block->data();
  }
  auto small = runtime->allocateMemory(4 << 20);
  if (run == "valid") {
    EXPECT_NE(small->data(), big) << "a block above max_split_size_mb served a smaller request";
    small.reset();
    auto large = runtime->allocateMemory(26 << 20);  // above the limit, and close enough in size
    EXPECT_EQ(large->data(), big);
  } else {
    EXPECT_EQ(small->data(), big) << "without a limit the cached block is split";
  }
}

}  // namespace
}  // namespace infinirt
