// Records the tests a run skipped, with their messages, in the file named by
// INFINIRT_CONFORMANCE_SKIPS (one "Suite.Test<TAB>message" line each), for the support matrix
// (docs/support-matrix.md lists which conformance tests each vendor backend skips, and why).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace infinirt::conformance {
namespace {

class SkipRecorder : public ::testing::EmptyTestEventListener {
 public:
  explicit SkipRecorder(std::string path) : path_(std::move(path)) {}

  // The name is noted here: inside OnTestPartResult gtest holds the lock that
  // current_test_info() takes.
  void OnTestStart(const ::testing::TestInfo& test) override {
    current_ = std::string(test.test_suite_name()) + "." + test.name();
  }

  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.skipped()) return;
    std::string message = result.message() ? result.message() : "";
    // The skip's own words only: a SCOPED_TRACE appends the source file's path, which is this
    // machine's and not the matrix's business.
    const size_t trace = message.find("\nGoogle Test trace:");
    if (trace != std::string::npos) message.erase(trace);
    for (char& c : message) {
      if (c == '\n' || c == '\t') c = ' ';
    }
    lines_.push_back(current_ + "\t" + message);
  }

  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    std::ofstream out(path_);
    for (const std::string& line : lines_) out << line << "\n";
  }

 private:
  std::string path_;
  std::string current_;
  std::vector<std::string> lines_;
};

struct Install {
  Install() {
    if (const char* path = std::getenv("INFINIRT_CONFORMANCE_SKIPS")) {
      ::testing::UnitTest::GetInstance()->listeners().Append(new SkipRecorder(path));
    }
  }
} install;

}  // namespace
}  // namespace infinirt::conformance
