// The plugin ABI's version follows its entry list: every minor version of the current major has
// its entry count recorded (INFINIRT_PLUGIN_ABI_ENTRY_COUNTS), the current minor's count is the
// list's length, and the counts only grow. An entry appended without raising the minor fails here.
#include <gtest/gtest.h>

#include <cstddef>
#include <iterator>

#include "infinirt_plugin.h"

namespace {

constexpr size_t kEntryCounts[] = {INFINIRT_PLUGIN_ABI_ENTRY_COUNTS};

TEST(PluginAbi, EveryMinorVersionHasItsEntryCount) {
  EXPECT_EQ(std::size(kEntryCounts), size_t{INFINIRT_PLUGIN_ABI_MINOR} + 1)
      << "INFINIRT_PLUGIN_ABI_ENTRY_COUNTS needs one count per minor version, 0 to "
      << INFINIRT_PLUGIN_ABI_MINOR;
}

TEST(PluginAbi, TheCurrentMinorHasEveryListedEntry) {
  EXPECT_EQ(kEntryCounts[std::size(kEntryCounts) - 1], size_t{INFINIRT_PLUGIN_ENTRY_COUNT})
      << "INFINIRT_PLUGIN_ENTRIES has " << INFINIRT_PLUGIN_ENTRY_COUNT
      << " entries: an entry added or removed without raising INFINIRT_PLUGIN_ABI_MINOR (and "
         "appending the new count) or the major version";
}

TEST(PluginAbi, EachMinorAddsEntries) {
  for (size_t minor = 1; minor < std::size(kEntryCounts); ++minor) {
    EXPECT_GT(kEntryCounts[minor], kEntryCounts[minor - 1]) << "minor " << minor;
  }
}

// The table's size grows with the entries: the core reads only what struct_size covers, so a
// plugin of an older minor leaves the newer entries NotSupported.
TEST(PluginAbi, TheTableHasAFieldPerEntry) {
  EXPECT_EQ(sizeof(infinirtPluginTable) - offsetof(infinirtPluginTable, Initialize),
            size_t{INFINIRT_PLUGIN_ENTRY_COUNT} * sizeof(void (*)()));
}

}  // namespace
