// The benchmark program: Google Benchmark's runner, then a table of every comparison of
// Comparisons() with the ratio of medians measured in this same run and whether its target
// was met. Unless the command line says otherwise, every benchmark runs 5 times and only the
// aggregates (mean, median, stddev, cv) are reported; --benchmark_out=FILE writes them as JSON.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench_support.h"

namespace infinirt::bench {
namespace {

// A benchmark's name without what Google Benchmark appends to it: "/iterations:N" and
// "/real_time" or "/manual_time" (the AddedCost pairs report manual time).
std::string BaseName(std::string name) {
  for (const std::string suffix : {"/real_time", "/manual_time"}) {
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      name.resize(name.size() - suffix.size());
    }
  }
  const size_t iterations = name.find("/iterations:");
  if (iterations != std::string::npos) name.resize(iterations);
  return name;
}

// The console reporter, keeping each benchmark's median (time per iteration, in ns).
class MedianCollector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
        medians_[BaseName(run.run_name.str())] =
            run.GetAdjustedRealTime() * NanosecondsPer(run.time_unit);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  const std::map<std::string, double>& medians() const { return medians_; }

 private:
  static double NanosecondsPer(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kSecond:
        return 1e9;
      case benchmark::kMillisecond:
        return 1e6;
      case benchmark::kMicrosecond:
        return 1e3;
      default:
        return 1;
    }
  }
  std::map<std::string, double> medians_;
};

// Prints one line per comparison; returns how many missed their target.
int PrintComparisons(const std::map<std::string, double>& medians) {
  std::printf("\n%-58s %-40s %12s %12s  %-8s %s\n", "measured", "baseline", "measured ns",
              "baseline ns", "result", "target");
  int missed = 0;
  for (const Comparison& c : Comparisons()) {
    const bool has_baseline = c.kind != Comparison::kAtMostNanoseconds;
    auto measured = medians.find(c.measured), baseline = medians.find(c.baseline);
    if (measured == medians.end()) continue;                  // filtered out
    if (has_baseline && baseline == medians.end()) continue;  // filtered out
    const double m = measured->second, b = has_baseline ? baseline->second : 0;
    char result[32];
    bool met = false;
    switch (c.kind) {
      case Comparison::kAddedNanoseconds:
        std::snprintf(result, sizeof result, "%+.2f ns", m - b);
        met = m - b <= c.limit;
        break;
      case Comparison::kTimeRatio:
        std::snprintf(result, sizeof result, "%.2fx", m / b);
        met = m / b <= c.limit;
        break;
      case Comparison::kThroughputRatio:
        std::snprintf(result, sizeof result, "%.2fx", b / m);
        met = b / m >= c.limit;
        break;
      case Comparison::kAtMostNanoseconds:
        std::snprintf(result, sizeof result, "%.1f ns", m);
        met = m <= c.limit;
        break;
    }
    missed += !met;
    std::printf("%-58s %-40s %12.1f %12.1f  %-8s %s %s\n", c.measured.c_str(),
                has_baseline ? c.baseline.c_str() : "-", m, b, result, c.target.c_str(),
                met ? "(met)" : "(MISSED)");
  }
  return missed;
}

}  // namespace
}  // namespace infinirt::bench

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  auto given = [&](const char* flag) {
    for (char* arg : args) {
      if (std::strncmp(arg, flag, std::strlen(flag)) == 0) return true;
    }
    return false;
  };
  static char repetitions[] = "--benchmark_repetitions=5";
  static char aggregates[] = "--benchmark_report_aggregates_only=true";
  if (!given("--benchmark_repetitions")) args.push_back(repetitions);
  if (!given("--benchmark_report_aggregates_only")) args.push_back(aggregates);
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;
  infinirt::bench::MedianCollector reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const int missed = infinirt::bench::PrintComparisons(reporter.medians());
  std::printf("\n%d comparison(s) missed their target\n", missed);
  benchmark::Shutdown();
  return 0;  // a missed target is a finding to report, not a failed run
}
