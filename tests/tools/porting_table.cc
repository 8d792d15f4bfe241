// Generates the table of docs/porting.md (every function of CUDA's Runtime API with its state in
// InfiniRT), or checks that it is current:
//   porting_table --cuda-header cuda_runtime_api.h --write docs/porting.md
//   porting_table --cuda-header cuda_runtime_api.h --check docs/porting.md
// CUDA's functions and modules come from the header (cuda_api_header.h); InfiniRT's from the
// X-lists of infinirt.h, compiled in; why a function is absent from porting_table_reasons.h.
// Only the text between the two marker lines is generated; the prose around it is left alone.
// A function that every vendor backend answers NotSupported (a row of support-matrix.md, beside
// the document, that is NotSupported in every column) is marked CPU backend only.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cuda_api_header.h"
#include "infinirt.h"
#include "porting_table_reasons.h"

namespace porting {
namespace {

const char kBeginMarker[] = "<!-- porting-table:begin -->";
const char kEndMarker[] = "<!-- porting-table:end -->";
const char kCpuOnlyNote[] =
    " (CPU backend only: every vendor backend answers NotSupported, see "
    "[support-matrix.md](support-matrix.md))";

// "cudaMalloc" for every function of INFINIRT_CUDA_FUNCTIONS.
std::set<std::string> InfinirtCudaFunctions() {
  return {
#define PORTING_TABLE_CUDA_NAME_(ret, name, params) "cuda" #name,
      INFINIRT_CUDA_FUNCTIONS(PORTING_TABLE_CUDA_NAME_)
#undef PORTING_TABLE_CUDA_NAME_
  };
}

// "infinirtInit" for every function of INFINIRT_EXTENSION_FUNCTIONS, in the header's order.
std::vector<std::string> InfinirtExtensionFunctions() {
  return {
#define PORTING_TABLE_EXTENSION_NAME_(ret, name, params) "infinirt" #name,
      INFINIRT_EXTENSION_FUNCTIONS(PORTING_TABLE_EXTENSION_NAME_)
#undef PORTING_TABLE_EXTENSION_NAME_
  };
}

std::string InfinirtName(const std::string& cuda_name) { return "infinirt" + cuda_name.substr(4); }

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

std::string ReadFile(const std::string& path, bool& found) {
  std::ifstream in(path);
  found = static_cast<bool>(in);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The reason of kAbsenceReasons for an absent function: the longest function-name key it starts
// with, else its module's; "" when none.
std::string AbsenceReason(const CudaFunction& function) {
  const porting::AbsenceReason* best = nullptr;
  for (const porting::AbsenceReason& entry : kAbsenceReasons) {
    const std::string key = entry.key;
    if (!StartsWith(key, "cuda") || !StartsWith(function.name, key)) continue;
    if (best == nullptr || key.size() > std::string(best->key).size()) best = &entry;
  }
  if (best == nullptr) {
    for (const porting::AbsenceReason& entry : kAbsenceReasons) {
      if (function.module_id == entry.key) best = &entry;
    }
  }
  return best != nullptr ? best->reason : "";
}

// The functions of the support matrix's rows that are NotSupported in every vendor column
// ("MallocHost, HostAlloc" rows name several), as "cudaName".
std::set<std::string> NotSupportedByAnyVendor(const std::string& support_matrix) {
  std::set<std::string> functions;
  for (const std::string& line : Lines(support_matrix)) {
    if (!StartsWith(line, "| ") || StartsWith(line, "| `")) continue;  // rows, not the header
    std::vector<std::string> cells;
    std::istringstream row(line.substr(2));
    for (std::string cell; std::getline(row, cell, '|');) cells.push_back(cell);
    bool every_vendor_refuses = cells.size() > 1;
    for (size_t i = 1; i < cells.size(); ++i) {
      if (cells[i].find("**NotSupported**") == std::string::npos) every_vendor_refuses = false;
    }
    if (!every_vendor_refuses) continue;
    std::istringstream names(cells[0]);
    for (std::string name; std::getline(names, name, ',');) {
      std::istringstream word(name);
      word >> name;
      functions.insert("cuda" + name);
    }
  }
  return functions;
}

std::string VersionText(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

struct Row {
  std::string cuda_name;
  bool deprecated;
  std::string state;  // the InfiniRT column
};

struct Module {
  std::string id;  // "" for the functions outside every module of the header
  std::string title;
  std::vector<Row> rows;
  size_t available = 0;
};

class TableBuilder {
 public:
  TableBuilder(const CudaRuntimeApi& api, std::set<std::string> cpu_only)
      : api_(api), declared_(InfinirtCudaFunctions()), cpu_only_(std::move(cpu_only)) {}

  // The generated text, markers included; problems (a name of InfiniRT's list CUDA does not
  // declare, a reason key that matches nothing) are added to `errors`.
  std::string Generate(std::vector<std::string>& errors) {
    const std::vector<Module> modules = Modules();
    ReportUnmatched(errors);
    std::ostringstream out;
    out << kBeginMarker << "\n"
        << "<!-- Generated by tests/tools/porting_table.cc: edit porting_table_reasons.h or the"
           " prose outside these markers, not the table. -->\n\n";
    WriteSummary(modules, out);
    for (const Module& module : modules) WriteModule(module, out);
    WriteAdditions(out);
    out << "\n" << kEndMarker << "\n";
    return out.str();
  }

 private:
  // The overall count, then one line per module linking to its table.
  void WriteSummary(const std::vector<Module>& modules, std::ostream& out) const {
    size_t available = 0, total = 0;
    for (const Module& module : modules) {
      available += module.available;
      total += module.rows.size();
    }
    out << "From `cuda_runtime_api.h` of CUDA " << VersionText(api_.version)
        << " (`CUDART_VERSION` " << api_.version << "), in its modules. **" << available << " of "
        << total << " CUDA Runtime functions are available** in InfiniRT.\n\n"
        << "| module | available |\n|---|---|\n";
    for (const Module& module : modules) {
      out << "| [" << module.title << "](#" << Anchor(module.title) << ") | " << module.available
          << " of " << module.rows.size() << " |\n";
    }
    out << "| **all** | **" << available << " of " << total << "** |\n";
  }

  static void WriteModule(const Module& module, std::ostream& out) {
    out << "\n### " << module.title << "\n\n"
        << module.available << " of " << module.rows.size() << " available.\n\n"
        << "| CUDA | InfiniRT |\n|---|---|\n";
    for (const Row& row : module.rows) {
      out << "| `" << row.cuda_name << "`" << (row.deprecated ? " (deprecated)" : "") << " | "
          << row.state << " |\n";
    }
  }

  void WriteAdditions(std::ostream& out) const {
    const std::vector<std::string> extensions = InfinirtExtensionFunctions();
    out << "\n### InfiniRT's own additions\n\n"
        << "Not in CUDA; described in [InfiniRT's extensions](#infinirts-extensions). With the "
        << declared_.size() << " CUDA functions above, they are the "
        << declared_.size() + extensions.size() << " functions of `infinirt.h`.\n\n";
    for (const std::string& name : extensions) out << "- `" << name << "`\n";
  }

  std::vector<Module> Modules() {
    std::vector<Module> modules;
    std::map<std::string, size_t> module_index;  // module id -> place in `modules`
    for (const CudaFunction& function : api_.functions) {
      auto [entry, added] = module_index.emplace(function.module_id, modules.size());
      if (added) modules.push_back({function.module_id, ModuleTitle(function.module_id), {}, 0});
      Module& module = modules[entry->second];
      const bool declared = declared_.count(function.name) > 0;
      module.available += declared ? 1 : 0;
      module.rows.push_back({function.name, function.deprecated, State(function, declared)});
    }
    for (Module& module : modules) {
      std::sort(module.rows.begin(), module.rows.end(),
                [](const Row& a, const Row& b) { return a.cuda_name < b.cuda_name; });
    }
    // The header's modules in its order, then what is outside them.
    std::stable_partition(modules.begin(), modules.end(),
                          [](const Module& module) { return !module.id.empty(); });
    return modules;
  }

  std::string ModuleTitle(const std::string& id) const {
    if (id.empty()) return "Outside CUDA's documented modules";
    const CudaModule* module = api_.FindModule(id);
    return module != nullptr ? module->title : id;
  }

  std::string State(const CudaFunction& function, bool declared) const {
    if (declared) {
      const std::string name = "`" + InfinirtName(function.name) + "`";
      return cpu_only_.count(function.name) ? name + kCpuOnlyNote : name;
    }
    const std::string reason = AbsenceReason(function);
    return "absent — " + (reason.empty() ? std::string("not yet implemented") : reason);
  }

  void ReportUnmatched(std::vector<std::string>& errors) const {
    std::set<std::string> cuda_names;
    for (const CudaFunction& function : api_.functions) cuda_names.insert(function.name);
    for (const std::string& name : declared_) {
      if (!cuda_names.count(name)) {
        errors.push_back(InfinirtName(name) + " is in INFINIRT_CUDA_FUNCTIONS, " + name +
                         " is not in the CUDA header");
      }
    }
    for (const porting::AbsenceReason& entry : kAbsenceReasons) {
      const std::string key = entry.key;
      bool matches = api_.FindModule(key) != nullptr;
      for (const CudaFunction& function : api_.functions) {
        matches = matches || StartsWith(function.name, key);
      }
      if (!matches) {
        errors.push_back("porting_table_reasons.h: " + key +
                         " names no module of the CUDA header and starts no function name");
      }
    }
  }

  // GitHub's heading anchors: lower case, spaces to '-', punctuation dropped.
  static std::string Anchor(const std::string& title) {
    std::string anchor;
    for (char c : title) {
      if (c == ' ') {
        anchor += '-';
      } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') {
        anchor += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
    return anchor;
  }

  const CudaRuntimeApi& api_;
  const std::set<std::string> declared_;
  const std::set<std::string> cpu_only_;
};

// `document` with the region between the markers (markers included) replaced by `region`, or
// with `region` appended when it has no markers.
std::string ReplaceRegion(const std::string& document, const std::string& region) {
  const size_t begin = document.find(kBeginMarker);
  const size_t end = document.find(kEndMarker, begin == std::string::npos ? 0 : begin);
  if (begin == std::string::npos || end == std::string::npos) {
    return document + (document.empty() || document.back() == '\n' ? "\n" : "\n\n") + region;
  }
  size_t after = end + sizeof(kEndMarker) - 1;
  if (after < document.size() && document[after] == '\n') ++after;
  return document.substr(0, begin) + region + document.substr(after);
}

// Empty when `document` holds `region`; else what differs first, with its line number.
std::string FirstDifference(const std::string& document, const std::string& region) {
  const std::string expected = ReplaceRegion(document, region);
  if (expected == document) return "";
  const std::vector<std::string> want = Lines(expected);
  const std::vector<std::string> have = Lines(document);
  size_t line = 0;
  while (line < want.size() && line < have.size() && want[line] == have[line]) ++line;
  std::ostringstream out;
  out << "line " << line + 1
      << ":\n  expected: " << (line < want.size() ? want[line] : "(end of file)")
      << "\n  found:    " << (line < have.size() ? have[line] : "(end of file)");
  if (document.find(kBeginMarker) == std::string::npos) out << "\n  (no " << kBeginMarker << ")";
  return out.str();
}

int Usage() {
  std::cerr << "usage: porting_table --cuda-header cuda_runtime_api.h"
               " (--write docs/porting.md | --check docs/porting.md)\n";
  return 2;
}

}  // namespace
}  // namespace porting

int main(int argc, char** argv) {
  using namespace porting;
  std::map<std::string, std::string> options;
  for (int i = 1; i + 1 < argc; i += 2) options[argv[i]] = argv[i + 1];
  const bool write = options.count("--write") > 0;
  if (!options.count("--cuda-header") || write == (options.count("--check") > 0)) return Usage();
  const std::string document_path = write ? options["--write"] : options["--check"];

  bool found = false;
  const std::string header = ReadFile(options["--cuda-header"], found);
  if (!found) {
    std::cerr << "porting_table: cannot read " << options["--cuda-header"] << "\n";
    return 2;
  }
  // support-matrix.md beside the document, which the table links to.
  const size_t slash = document_path.rfind('/');
  const std::string matrix = ReadFile(
      (slash == std::string::npos ? "" : document_path.substr(0, slash + 1)) + "support-matrix.md",
      found);
  const std::set<std::string> cpu_only = NotSupportedByAnyVendor(matrix);
  const CudaRuntimeApi api = ParseCudaRuntimeHeader(header);
  std::vector<std::string> errors;
  const std::string region = TableBuilder(api, cpu_only).Generate(errors);
  for (const std::string& error : errors) std::cerr << "porting_table: " << error << "\n";
  if (!errors.empty()) return 1;

  const std::string document = ReadFile(document_path, found);
  if (!found && !write) {
    std::cerr << "porting_table: cannot read " << document_path << "\n";
    return 2;
  }
  if (write) {
    std::ofstream(document_path) << ReplaceRegion(document, region);
    return 0;
  }
  const std::string difference = FirstDifference(document, region);
  if (difference.empty()) return 0;
  std::cerr << document_path << ": the porting table is out of date at " << difference
            << "\nRegenerate it with\n  " << argv[0] << " --cuda-header "
            << options["--cuda-header"] << " --write " << document_path << "\n";
  return 1;
}
