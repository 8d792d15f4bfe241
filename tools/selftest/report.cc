// What the driver found: the matrix of areas and backends, the tests that did not pass, and
// the JSON report to attach to a bug.
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "driver.h"

namespace infinirt::selftest {
namespace {

struct Counts {
  int total = 0;
  std::map<Outcome, int> by_outcome;
  int of(Outcome outcome) const {
    const auto found = by_outcome.find(outcome);
    return found == by_outcome.end() ? 0 : found->second;
  }
};

Counts CountArea(const Backend& backend, Area area) {
  Counts counts;
  for (const TestResult& result : backend.results) {
    if (result.area != area) continue;
    ++counts.total;
    ++counts.by_outcome[result.outcome];
  }
  return counts;
}

// The outcomes a cell names besides the passes, in this order.
constexpr Outcome kNamedOutcomes[] = {Outcome::kFailed, Outcome::kTimeout,      Outcome::kCrashed,
                                      Outcome::kNotRun, Outcome::kNotSupported, Outcome::kSkipped};

const char* OutcomeText(Outcome outcome) {
  switch (outcome) {
    case Outcome::kNotSupported:
      return "not supported";
    case Outcome::kNotRun:
      return "not run";
    default:
      return OutcomeKey(outcome);
  }
}

// "25/28 (1 failed, 2 not supported)"; "-" where the area was not run.
std::string Cell(const Counts& counts) {
  if (counts.total == 0) return "-";
  std::string cell =
      std::to_string(counts.of(Outcome::kPassed)) + "/" + std::to_string(counts.total);
  std::string details;
  for (Outcome outcome : kNamedOutcomes) {
    if (counts.of(outcome) == 0) continue;
    details += (details.empty() ? "" : ", ") + std::to_string(counts.of(outcome)) + " " +
               OutcomeText(outcome);
  }
  return details.empty() ? cell : cell + " (" + details + ")";
}

std::string ColumnTitle(const Backend& backend) {
  return backend.emulated ? backend.name + " (emulated)" : backend.name;
}

void PrintRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths) {
  std::string line = " ";
  for (size_t i = 0; i < cells.size(); ++i) {
    line += " " + cells[i] + std::string(widths[i] - cells[i].size(), ' ') + " ";
    if (i + 1 < cells.size()) line += "|";
  }
  line.erase(line.find_last_not_of(' ') + 1);
  std::printf("%s\n", line.c_str());
}

// The first line of a message, for the text summary (the JSON report has them whole).
std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

void PrintProblems(const Run& run) {
  bool heading = false;
  for (const Backend& backend : run.backends) {
    for (const TestResult& result : backend.results) {
      if (!IsProblem(result.outcome)) continue;
      if (!heading) std::printf("\nNot passing:\n");
      heading = true;
      std::printf("  %s  %-8s %s (%s)\n", backend.name.c_str(), OutcomeKey(result.outcome),
                  result.name.c_str(), NameOf(result.area).title);
      std::string message = result.message;
      size_t start = 0;
      for (int lines = 0; start < message.size() && lines < 6; ++lines) {
        const size_t end = std::min(message.find('\n', start), message.size());
        std::printf("      %s\n", message.substr(start, end - start).c_str());
        start = end + 1;
      }
    }
  }
}

// The skipped tests with their reasons (--verbose).
void PrintSkips(const Run& run) {
  std::printf("\nSkipped, with their reasons:\n");
  for (const Backend& backend : run.backends) {
    for (const TestResult& result : backend.results) {
      if (result.outcome != Outcome::kNotSupported && result.outcome != Outcome::kSkipped) {
        continue;
      }
      std::printf("  %s  %-13s %s: %s\n", backend.name.c_str(), OutcomeText(result.outcome),
                  result.name.c_str(), FirstLine(result.message).c_str());
    }
  }
}

std::string FirstMatch(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, key.size(), key) != 0) continue;
    std::string value = line.substr(line.find_first_of(":=", key.size()) + 1);
    value.erase(0, value.find_first_not_of(" \t\""));
    value.erase(value.find_last_not_of(" \t\"") + 1);
    return value;
  }
  return "";
}

nlohmann::json HostJson() {
  utsname name{};
  uname(&name);
  return {
      {"kernel", std::string(name.sysname) + " " + name.release + " " + name.version},
      {"machine", name.machine},
      {"os", FirstMatch("/etc/os-release", "PRETTY_NAME")},
      {"cpu", FirstMatch("/proc/cpuinfo", "model name")},
      {"cpu_count", std::thread::hardware_concurrency()},
  };
}

nlohmann::json CountsJson(const Counts& counts) {
  nlohmann::json json = {{"total", counts.total}};
  json[OutcomeKey(Outcome::kPassed)] = counts.of(Outcome::kPassed);
  for (Outcome outcome : kNamedOutcomes) json[OutcomeKey(outcome)] = counts.of(outcome);
  return json;
}

nlohmann::json BackendJson(const Backend& backend) {
  const infinirtBackendProp& prop = backend.prop;
  nlohmann::json json = {
      {"name", backend.name},
      {"plugin", prop.path},
      {"runtime_library", prop.runtimeLibrary},
      {"runtime_version",
       prop.runtimeVersion >= 0 ? nlohmann::json(prop.runtimeVersion) : nlohmann::json(nullptr)},
      {"emulated", backend.emulated},
      {"note", prop.reason},  // what the plugin refuses of this runtime, and why
      {"devices", backend.device_names},
      {"cross_backend_peer", backend.cross_peer},
  };
  nlohmann::json areas = nlohmann::json::object();
  for (const AreaName& area : AllAreas()) {
    areas[area.key] = CountsJson(CountArea(backend, area.area));
  }
  json["areas"] = areas;
  json["not_passed"] = nlohmann::json::array();
  for (const TestResult& result : backend.results) {
    if (result.outcome == Outcome::kPassed) continue;
    json["not_passed"].push_back({{"test", result.name},
                                  {"area", NameOf(result.area).key},
                                  {"result", OutcomeKey(result.outcome)},
                                  {"message", result.message}});
  }
  return json;
}

}  // namespace

bool Passed(const Run& run) {
  for (const Backend& backend : run.backends) {
    for (const TestResult& result : backend.results) {
      if (IsProblem(result.outcome)) return false;
    }
  }
  return true;
}

void PrintMatrix(const Run& run, const Options& options) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"area"};
  for (const Backend& backend : run.backends) header.push_back(ColumnTitle(backend));
  rows.push_back(header);
  for (const AreaName& area : AllAreas()) {
    std::vector<std::string> row = {area.title};
    for (const Backend& backend : run.backends) row.push_back(Cell(CountArea(backend, area.area)));
    rows.push_back(row);
  }
  std::vector<size_t> widths(header.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::printf("\nResults (passed/total):\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    PrintRow(rows[i], widths);
    if (i == 0) {
      std::string rule = " ";
      for (size_t w : widths) rule += "-" + std::string(w, '-') + "-+";
      rule.pop_back();
      std::printf("%s\n", rule.c_str());
    }
  }
  for (const Backend& backend : run.backends) {
    if (backend.emulated) {
      std::printf(
          "\n%s (emulated): its runtime %s is a host-emulated runtime of InfiniRT's "
          "tests, not the vendor's: these results say nothing about hardware.\n",
          backend.name.c_str(), backend.prop.runtimeLibrary);
    }
  }
  PrintProblems(run);
  if (options.verbose) PrintSkips(run);
  int tests = 0, problems = 0, unsupported = 0;
  for (const Backend& backend : run.backends) {
    for (const TestResult& result : backend.results) {
      ++tests;
      problems += IsProblem(result.outcome) ? 1 : 0;
      unsupported += result.outcome == Outcome::kNotSupported ? 1 : 0;
    }
  }
  std::printf("\n%s: %d tests on %zu backend(s) in %.1f s, %d not passing, %d not supported\n",
              problems == 0 ? "PASSED" : "FAILED", tests, run.backends.size(), run.seconds,
              problems, unsupported);
}

bool WriteJsonReport(const Run& run, const Options& options, const std::string& path,
                     std::string* error) {
  nlohmann::json json;
  json["tool"] = "infinirt-selftest";
  json["infinirt_version"] = std::to_string(INFINIRT_VERSION_MAJOR) + "." +
                             std::to_string(INFINIRT_VERSION_MINOR) + "." +
                             std::to_string(INFINIRT_VERSION_PATCH);
  json["cuda_api_version"] = INFINIRT_CUDA_API_VERSION;
  json["host"] = HostJson();
  json["test_timeout_s"] = options.test_timeout_seconds;
  json["vendor_device_found"] = run.vendor_device_found;
  json["passed"] = Passed(run);
  json["duration_s"] = run.seconds;
  json["backends"] = nlohmann::json::array();
  for (const Backend& backend : run.backends) json["backends"].push_back(BackendJson(backend));
  std::ofstream out(path);
  out << json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  out.close();
  if (!out) *error = "cannot write " + path;
  return static_cast<bool>(out);
}

}  // namespace infinirt::selftest
