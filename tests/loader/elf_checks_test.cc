// Plugin files whose ELF headers do not fit this process, and truncated ones, are rejected before
// dlopen with a reason that says why (status infinirtBackendDlopenFailed), in the same process
// as the CPU plugin, which still loads. The broken files are copies of the fake_nvidia plugin,
// made once for the suite, each under its own backend name.
#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

#include "file_support.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

// The machine a plugin is patched to: AArch64, or x86-64 where this process is AArch64.
#if defined(__aarch64__)
constexpr uint16_t kForeignMachine = EM_X86_64;
constexpr char kForeignMachineText[] = "built for x86-64 (e_machine 62); this process is ";
#else
constexpr uint16_t kForeignMachine = EM_AARCH64;
constexpr char kForeignMachineText[] = "built for AArch64 (e_machine 183); this process is ";
#endif

off_t SizeOf(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 ? info.st_size : -1;
}

// A copy of the fake_nvidia plugin named libinfinirt_<name>.so in directory, cut to `size`
// bytes (-1: whole), with `patch` bytes written at `offset`.
void BrokenCopy(const std::string& directory, const std::string& name, off_t size, off_t offset = 0,
                const std::string& patch = "") {
  const std::string path = directory + "/libinfinirt_" + name + ".so";
  ASSERT_TRUE(CopyFile(PluginFile("accel", "fake_nvidia"), path, 0755));
  if (size >= 0) {
    ASSERT_EQ(truncate(path.c_str(), size), 0) << ErrnoText();
  }
  if (!patch.empty()) {
    std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
    file.seekp(offset);
    file.write(patch.data(), static_cast<std::streamsize>(patch.size()));
    ASSERT_TRUE(file.good());
  }
}

class ElfChecks : public RuntimeTest {
 public:
  static void SetUpTestSuite() {
    scratch_ = new TempDir(FAKE_PLUGIN_ROOT, "elf-checks");
    const std::string& directory = scratch_->path();
    half_size_ = SizeOf(PluginFile("accel", "fake_nvidia")) / 2;
    BrokenCopy(directory, "empty", 0);
    BrokenCopy(directory, "cut_16", 16);
    BrokenCopy(directory, "cut_64", 64);
    BrokenCopy(directory, "cut_1024", 1024);  // past the program headers, inside a segment
    BrokenCopy(directory, "cut_half", half_size_);
    const char machine[2] = {static_cast<char>(kForeignMachine & 0xff),
                             static_cast<char>(kForeignMachine >> 8)};
    BrokenCopy(directory, "other_machine", -1, offsetof(Elf64_Ehdr, e_machine),
               std::string(machine, 2));
    BrokenCopy(directory, "elf32", -1, EI_CLASS, std::string(1, ELFCLASS32));
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }

 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    search_ =
        std::make_unique<ScopedEnv>("INFINIRT_PLUGIN_PATH", scratch_->path() + ":" + CpuPlugin());
  }
  void TearDown() override {
    RuntimeTest::TearDown();
    search_.reset();
  }

  // The entry of one broken copy: rejected before dlopen, with nothing loaded from it.
  static std::string ReasonFor(const std::string& name) {
    const auto entry = OnlyEntryNamed(name);
    if (!entry) return "(no entry)";
    EXPECT_EQ(entry->status, infinirtBackendDlopenFailed) << name;
    EXPECT_EQ(entry->path, RealPath(scratch_->path() + "/libinfinirt_" + name + ".so"));
    EXPECT_EQ(entry->abiMajor, -1) << name;
    EXPECT_EQ(entry->deviceCount, 0) << name;
    return entry->reason;
  }

  static TempDir* scratch_;
  static off_t half_size_;
  std::unique_ptr<ScopedEnv> search_;
};

TempDir* ElfChecks::scratch_ = nullptr;
off_t ElfChecks::half_size_ = 0;

TEST_F(ElfChecks, EmptyFileIsNotAnElfFile) {
  EXPECT_EQ(ReasonFor("empty"), "not an ELF file: the file is empty (0 bytes)");
}

TEST_F(ElfChecks, FileCutTo16BytesIsTruncated) {
  EXPECT_EQ(ReasonFor("cut_16"),
            "truncated: the ELF header ends at byte 64, past the end of the file (16 bytes)");
}

TEST_F(ElfChecks, FileCutTo64BytesIsTruncated) {
  const std::string reason = ReasonFor("cut_64");
  EXPECT_TRUE(Contains(reason, "truncated: the program header table ends at byte ")) << reason;
  EXPECT_TRUE(Contains(reason, "past the end of the file (64 bytes)")) << reason;
}

TEST_F(ElfChecks, FileCutInsideALoadableSegmentIsTruncated) {
  const std::string reason = ReasonFor("cut_1024");
  EXPECT_TRUE(Contains(reason, "truncated: a loadable segment ends at byte ")) << reason;
  EXPECT_TRUE(Contains(reason, "past the end of the file (1024 bytes)")) << reason;
}

TEST_F(ElfChecks, FileCutToHalfItsSizeIsTruncated) {
  const std::string reason = ReasonFor("cut_half");
  EXPECT_TRUE(Contains(reason, "truncated: ")) << reason;
  EXPECT_TRUE(
      Contains(reason, "past the end of the file (" + std::to_string(half_size_) + " bytes)"))
      << reason;
}

TEST_F(ElfChecks, PluginForAnotherMachineNamesBoth) {
  const std::string reason = ReasonFor("other_machine");
  EXPECT_EQ(reason.rfind(kForeignMachineText, 0), 0u) << reason;
#if defined(__x86_64__)
  EXPECT_EQ(reason, "built for AArch64 (e_machine 183); this process is x86-64 (e_machine 62)");
#endif
}

TEST_F(ElfChecks, ThirtyTwoBitPluginNamesBothClasses) {
  EXPECT_EQ(ReasonFor("elf32"),
            "built for 32-bit (ELFCLASS32); this process is 64-bit (ELFCLASS64)");
}

TEST_F(ElfChecks, CpuPluginStillLoadsBesideThem) { ExpectCpuStillWorks(); }

}  // namespace
}  // namespace infinirt::loader_test
