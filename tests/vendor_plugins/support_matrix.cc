// Generates docs/support-matrix.md, or checks that it is current:
//   support_matrix --plugins DIR --skips DIR --facts docs/vendor-plugins.md
//                  (--write FILE | --check FILE)
// The table comes from the vendor plugins' own declarations (GetSupport), which
// vendor_support_<variant> checks against what each plugin does over its emulated runtime; the
// skip lists come from the conformance runs over the emulated runtimes (their
// INFINIRT_CONFORMANCE_SKIPS files). So the document says what the code does, and the CTest
// entry support_matrix_check fails when they part.
#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "infinirt_plugin.h"

namespace {

// The vendor plugins, in column order, with the emulated variants whose conformance skips are
// listed for them: the build's vendor list (EMULATED_BACKENDS, "<plugin>:<variant>:<library>"
// items separated by commas, the emulated runtimes of config/vendors.json).
struct Vendor {
  std::string plugin;
  std::vector<std::string> variants;
};

std::vector<Vendor> Vendors() {
  std::vector<Vendor> vendors;
  std::istringstream items(EMULATED_BACKENDS);
  for (std::string item; std::getline(items, item, ',');) {
    const size_t first = item.find(':');
    const size_t second = item.find(':', first + 1);
    const std::string plugin = item.substr(0, first);
    const std::string variant = item.substr(first + 1, second - first - 1);
    if (vendors.empty() || vendors.back().plugin != plugin) vendors.push_back({plugin, {}});
    vendors.back().variants.push_back(variant);
  }
  return vendors;
}
const std::vector<Vendor> kVendors = Vendors();

// The rows: every plugin entry but those only the core calls around the others, in the list's
// order, each with the public functions it serves (its own name unless said here).
std::vector<std::pair<std::string, std::string>> Rows() {
  const std::map<std::string, std::string> served = {
      {"HostAlloc", "MallocHost, HostAlloc"},
      {"StreamCreate", "StreamCreate, StreamCreateWithFlags"},
      {"EventCreate", "EventCreate, EventCreateWithFlags"},
      {"GraphInstantiate", "GraphInstantiate, GraphInstantiateWithFlags"},
  };
  std::vector<std::pair<std::string, std::string>> rows;
  for (const char* entry : {
#define SUPPORT_MATRIX_ENTRY_(name, params) #name,
           INFINIRT_PLUGIN_ENTRIES(SUPPORT_MATRIX_ENTRY_)
#undef SUPPORT_MATRIX_ENTRY_
       }) {
    const std::string name = entry;
    if (name == "Initialize" || name == "Finalize" || name == "GetInfo" || name == "GetSupport") {
      continue;
    }
    const auto found = served.find(name);
    rows.emplace_back(name, found != served.end() ? found->second : name);
  }
  return rows;
}

struct Cell {
  infinirtPluginSupportLevel_t level = INFINIRT_SUPPORT_NONE;
  std::string functions;
  std::string note;
};

// Footnotes, numbered in order of first use.
class Notes {
 public:
  int Number(const std::string& text) {
    for (size_t i = 0; i < notes_.size(); ++i) {
      if (notes_[i] == text) return static_cast<int>(i) + 1;
    }
    notes_.push_back(text);
    return static_cast<int>(notes_.size());
  }
  const std::vector<std::string>& all() const { return notes_; }

 private:
  std::vector<std::string> notes_;
};

// The declarations of one plugin, initialised without a vendor runtime (so they describe a
// runtime that has every function the plugin can use). Empty when the plugin is not there.
std::map<std::string, Cell> Declarations(const std::string& plugin_dir, const Vendor& vendor) {
  std::map<std::string, Cell> cells;
  const std::string path = plugin_dir + "/libinfinirt_" + vendor.plugin + ".so";
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return cells;
  auto get_table =
      reinterpret_cast<infinirtPluginGetTableFn>(dlsym(library, INFINIRT_PLUGIN_ENTRY_SYMBOL));
  const infinirtPluginTable* table = get_table ? get_table() : nullptr;
  if (table == nullptr || table->GetSupport == nullptr) return cells;
  infinirtPluginHost host{};
  host.struct_size = sizeof(host);
  host.abi_major = INFINIRT_PLUGIN_ABI_MAJOR;
  host.abi_minor = INFINIRT_PLUGIN_ABI_MINOR;
  host.config_json = R"({"runtime_library": []})";  // no runtime: the full declarations
  if (table->Initialize(&host) != infinirtSuccess) return cells;
  for (const auto& [entry, functions] : Rows()) {
    infinirtPluginSupport support{};
    support.struct_size = sizeof(support);
    if (table->GetSupport(entry.c_str(), &support) != infinirtSuccess) continue;
    cells[entry] = Cell{support.level, support.vendor_functions, support.note};
  }
  table->Finalize();
  return cells;  // the library stays loaded: plugins may not expect to be unloaded
}

std::string CellText(const Cell& cell, Notes& notes) {
  std::string text;
  switch (cell.level) {
    case INFINIRT_SUPPORT_NATIVE:
      // Native with no function: the plugin answers from what it holds, calling nothing.
      text = cell.functions.empty() ? "native (no call)" : "`" + cell.functions + "`";
      break;
    case INFINIRT_SUPPORT_EMULATED:
      text = "emulated: `" + cell.functions + "`";
      break;
    default:
      text = "**NotSupported**";
      break;
  }
  for (size_t at = 0; (at = text.find(", ", at)) != std::string::npos; at += 4) {
    text.replace(at, 2, "`, `");
  }
  if (!cell.note.empty()) text += " [" + std::to_string(notes.Number(cell.note)) + "]";
  return text;
}

// --- Assumptions --------------------------------------------------------------------------
// docs/vendor-plugins.md holds, per plugin ("### `<plugin>`" under "## What each plugin relies
// on"), a table of the facts it relies on: | fact | status | entries | if it is wrong |. A row
// whose status begins "**assumed**" marks the entries it names (backticked, `all` for every
// one) in the matrix, so that the matrix shows which cells rest on facts no vendor header
// confirmed. The page is the one list; this reads it.

struct Assumption {
  std::string plugin;
  std::string fact;
  std::vector<std::string> entries;  // {"all"} for the whole column
};

std::vector<std::string> TableCells(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream in(line.substr(1));
  for (std::string cell; std::getline(in, cell, '|');) {
    const size_t first = cell.find_first_not_of(' ');
    const size_t last = cell.find_last_not_of(' ');
    cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
  }
  return cells;
}

std::vector<std::string> Backticked(const std::string& text) {
  std::vector<std::string> names;
  for (size_t at = text.find('`'); at != std::string::npos; at = text.find('`', at)) {
    const size_t end = text.find('`', at + 1);
    if (end == std::string::npos) break;
    names.push_back(text.substr(at + 1, end - at - 1));
    at = end + 1;
  }
  return names;
}

// The assumed facts of the page; *error says what is malformed (an unknown entry, a vendor
// without a table).
std::vector<Assumption> ReadAssumptions(const std::string& path, std::string* error) {
  std::vector<Assumption> assumptions;
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path;
    return assumptions;
  }
  std::vector<std::string> entries;
  for (const auto& row : Rows()) entries.push_back(row.first);
  bool in_section = false;
  std::string plugin;
  std::set<std::string> tabled;  // the plugins with a table
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## What each plugin relies on";
    if (!in_section) continue;
    if (line.rfind("### ", 0) == 0) {
      const std::vector<std::string> names = Backticked(line);
      plugin = names.empty() ? "" : names[0];
      continue;
    }
    const std::vector<std::string> cells =
        line.rfind("| ", 0) == 0 ? TableCells(line) : std::vector<std::string>();
    if (cells.size() >= 4) tabled.insert(plugin);
    if (cells.size() < 4 || cells[1].rfind("**assumed**", 0) != 0) continue;
    Assumption assumption{plugin, cells[0], Backticked(cells[2])};
    for (const std::string& entry : assumption.entries) {
      if (entry != "all" && std::find(entries.begin(), entries.end(), entry) == entries.end()) {
        *error = path + ": `" + entry + "` (" + plugin + ") is no entry of the matrix";
      }
    }
    assumptions.push_back(assumption);
  }
  for (const Vendor& vendor : kVendors) {
    if (tabled.count(vendor.plugin) == 0 && error->empty()) {
      *error = path + " has no table of the facts the " + vendor.plugin +
               " plugin relies on (\"### `" + vendor.plugin +
               "`\" under \"## What each plugin relies on\")";
    }
  }
  return assumptions;
}

// The marks of one cell (or, for entry "all", of the column's heading): " ‡1 ‡4".
std::string Marks(const std::vector<Assumption>& assumptions, const std::string& plugin,
                  const std::string& entry, Notes& marks) {
  std::string text;
  for (const Assumption& assumption : assumptions) {
    if (assumption.plugin != plugin) continue;
    if (std::find(assumption.entries.begin(), assumption.entries.end(), entry) ==
        assumption.entries.end()) {
      continue;
    }
    text += " ‡" + std::to_string(marks.Number(plugin + ": " + assumption.fact));
  }
  return text;
}

std::vector<std::string> Skips(const std::string& skips_dir, const std::string& variant) {
  std::vector<std::string> lines;
  std::ifstream in(skips_dir + "/" + variant + ".tsv");
  for (std::string line; std::getline(in, line);) {
    const size_t tab = line.find('\t');
    std::string message = tab == std::string::npos ? "" : line.substr(tab + 1);
    const size_t reason = message.find("not supported by");
    if (reason == std::string::npos) continue;  // only "not supported" skips feed the matrix
    lines.push_back("`" + line.substr(0, tab) + "`: " + message.substr(reason));
  }
  // By name: the order the tests ran in depends on how the build grouped their sources.
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::string Generate(const std::string& plugin_dir, const std::string& skips_dir,
                     const std::vector<Assumption>& assumptions) {
  std::ostringstream out;
  out << "# Support matrix\n\n"
      << "Generated by `tests/vendor_plugins/support_matrix.cc` from each vendor plugin's own\n"
      << "declarations (the plugin ABI's `GetSupport`); do not edit by hand. The test\n"
      << "`vendor_support_<vendor>` checks every declaration against what the plugin does over\n"
      << "its host-emulated vendor runtime (an entry declared NotSupported must answer\n"
      << "`infinirtErrorNotSupported`; every vendor function named must be called), and\n"
      << "`support_matrix_check` fails when this file and the code part. Regenerate with\n"
      << "`build/tests/support_matrix --plugins build/lib/infinirt --skips "
         "build/conformance_skips --facts docs/vendor-plugins.md --write docs/support-matrix.md`\n"
      << "after `ctest -L vendor`.\n\n"
      << "The emulated runtimes prove the translation, not vendor hardware: see\n"
      << "`tests/emulated_runtimes/`. A cell names the vendor functions an entry calls, for a\n"
      << "runtime that has every function the plugin can use; *emulated* means the plugin does\n"
      << "the work itself with the functions named; **NotSupported** means the call answers\n"
      << "`infinirtErrorNotSupported`. The CPU backend supports every row natively. The core\n"
      << "provides, for every backend, the functions not listed: errors, `SetDevice`/`GetDevice`,\n"
      << "`PointerGetAttributes`, `RuntimeGetVersion`, stream capture, `GraphDestroy`,\n"
      << "`DeviceGetDefaultMemPool`, copies between backends, and graph replay for a backend\n"
      << "whose `GraphInstantiate` is NotSupported.\n\n"
      << "A mark ‡ says that a cell (or, on a vendor's name, the whole column) rests on a fact\n"
      << "about the vendor's runtime that no vendor header confirmed: the facts are listed under\n"
      << "[Assumptions](#assumptions), and each vendor's, verified and assumed, in\n"
      << "[vendor-plugins.md](vendor-plugins.md#what-each-plugin-relies-on).\n\n";
  Notes notes;
  Notes marks;
  std::vector<std::pair<const Vendor*, std::map<std::string, Cell>>> columns;
  for (const Vendor& vendor : kVendors) {
    auto cells = Declarations(plugin_dir, vendor);
    if (!cells.empty()) columns.emplace_back(&vendor, std::move(cells));
  }
  out << "| `infinirt...` |";
  for (const auto& column : columns) {
    const std::string& plugin = column.first->plugin;
    out << " " << plugin << Marks(assumptions, plugin, "all", marks) << " |";
  }
  out << "\n|---|";
  for (size_t i = 0; i < columns.size(); ++i) out << "---|";
  out << "\n";
  for (const auto& [entry, functions] : Rows()) {
    out << "| " << functions << " |";
    for (const auto& column : columns) {
      const auto cell = column.second.find(entry);
      out << " " << (cell == column.second.end() ? "undeclared" : CellText(cell->second, notes))
          << Marks(assumptions, column.first->plugin, entry, marks) << " |";
    }
    out << "\n";
  }
  out << "\n## Notes\n\n";
  for (size_t i = 0; i < notes.all().size(); ++i) {
    out << i + 1 << ". " << notes.all()[i] << "\n";
  }
  out << "\n## Assumptions\n\n";
  for (size_t i = 0; i < marks.all().size(); ++i) {
    out << "- ‡" << i + 1 << " " << marks.all()[i] << "\n";
  }
  out << "\n## Conformance tests skipped over the emulated runtimes\n\n"
      << "The conformance suite (`tests/conformance`) runs once per vendor plugin over its\n"
      << "emulated runtime; a test that needs something the vendor does not support is skipped\n"
      << "with \"not supported by <vendor>\". Every other test passes.\n\n";
  for (const auto& column : columns) {
    for (const std::string& variant : column.first->variants) {
      const std::vector<std::string> skips = Skips(skips_dir, variant);
      out << "- **" << variant << "**: " << (skips.empty() ? "none" : "") << "\n";
      for (const std::string& skip : skips) out << "  - " << skip << "\n";
    }
  }
  return out.str();
}

int Usage() {
  std::cerr << "usage: support_matrix --plugins DIR --skips DIR --facts VENDOR_PLUGINS_MD "
               "(--write FILE | --check FILE)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> options;
  for (int i = 1; i + 1 < argc; i += 2) options[argv[i]] = argv[i + 1];
  if (!options.count("--plugins") || !options.count("--skips") || !options.count("--facts")) {
    return Usage();
  }
  std::string error;
  const std::vector<Assumption> assumptions = ReadAssumptions(options["--facts"], &error);
  if (!error.empty()) {
    std::cerr << error << "\n";
    return 1;
  }
  // The declarations must not depend on which vendor runtime this machine happens to have.
  for (const Vendor& vendor : kVendors) {
    std::string variable = std::string("INFINIRT_") + vendor.plugin + "_RUNTIME";
    for (char& c : variable) c = static_cast<char>(toupper(c));
    unsetenv(variable.c_str());
  }
  const std::string generated = Generate(options["--plugins"], options["--skips"], assumptions);
  if (options.count("--write")) {
    std::ofstream(options["--write"]) << generated;
    return 0;
  }
  if (!options.count("--check")) return Usage();
  std::ifstream in(options["--check"]);
  const std::string current((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (current == generated) return 0;
  std::cerr << options["--check"] << " is out of date; regenerate it with\n  support_matrix "
            << "--plugins " << options["--plugins"] << " --skips " << options["--skips"]
            << " --facts " << options["--facts"] << " --write " << options["--check"]
            << "\nExpected:\n"
            << generated;
  return 1;
}
