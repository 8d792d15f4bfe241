// The vendor table, config/vendors.json, is the only place the vendors are written down. This
// tool keeps it so:
//   vendor_table --check <source root>          exit 1 when include/infinicore.h's
//                                               INFINIRT_DEVICE_TYPES is not the table's
//   vendor_table --write <source root>          rewrite that block from the table
//   vendor_table --single-source <source root>  exit 1 naming every place of a tracked file that
//                                               spells the vendor set out by hand
//   vendor_table --scan <source root> <file>... the same for the given files, allow-list or not
//
// infinicore.h is a public header, installed and read by C compilers: it cannot include a file
// the build generates, so its device type list is generated here and checked in (as
// per_thread_variants.cc does for the per-thread variants), and vendor_table_device_types_check
// fails until it is current.
//
// A hand-written vendor set is three or more different vendors (a row's name or display name,
// in any case: "metax", "MetaX", INFINI_DEVICE_METAX) named in one group of consecutive lines that
// each name one: a list, whether one item per line or several on one. Such a list goes stale when
// a vendor is added; it must be generated from the table or read from it instead. A file that
// names vendors one per place (a test of one vendor) passes.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "generated_files.h"
#include "nlohmann/json.hpp"

namespace {

using nlohmann::json;

using generated_files::Read;

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// --- The table --------------------------------------------------------------------------------

struct DeviceType {
  std::string name;        // the plugin's name: "moore"
  std::string enumerator;  // INFINI_DEVICE_<enumerator>: "MOORE"
  int value = 0;           // InfiniCore's number
  std::string display;     // "Moore Threads"
};

// The table's rows, in the order of their device type values.
std::vector<DeviceType> DeviceTypes(const json& table) {
  std::map<int, DeviceType> by_value;
  for (const json& row : table.at("vendors")) {
    const json& type = row.at("device_type");
    DeviceType device{row.at("name").get<std::string>(), type.at("enumerator").get<std::string>(),
                      type.at("value").get<int>(), type.at("display").get<std::string>()};
    by_value[device.value] = device;
  }
  std::vector<DeviceType> types;
  for (const auto& [value, type] : by_value) types.push_back(type);
  return types;
}

// --- include/infinicore.h's INFINIRT_DEVICE_TYPES ---------------------------------------------

constexpr char kHeader[] = "include/infinicore.h";
constexpr char kBlockStart[] = "#define INFINIRT_DEVICE_TYPES(X)";

// The #define as clang-format lays it out: every backslash one column after the longest line that
// has one (the last has none).
std::string DeviceTypesBlock(const std::vector<DeviceType>& types) {
  std::vector<std::string> lines = {kBlockStart};
  for (const DeviceType& type : types) {
    lines.push_back("  X(" + type.enumerator + ", " + std::to_string(type.value) + ", \"" +
                    type.display + "\", " + type.name + ")");
  }
  size_t width = 0;
  for (size_t i = 0; i + 1 < lines.size(); ++i) width = std::max(width, lines[i].size());
  std::string block;
  for (size_t i = 0; i < lines.size(); ++i) {
    block += lines[i];
    if (i + 1 < lines.size()) block += std::string(width + 1 - lines[i].size(), ' ') + "\\";
    block += "\n";
  }
  return block;
}

// Where the block is in the header's text: [begin, end), end after its last line's newline.
// Both are npos when the header has no block.
std::pair<size_t, size_t> BlockBounds(const std::string& header) {
  const size_t begin = header.find(kBlockStart);
  if (begin == std::string::npos) return {std::string::npos, std::string::npos};
  size_t end = begin;
  while (true) {
    const size_t newline = header.find('\n', end);
    if (newline == std::string::npos) return {begin, header.size()};
    const bool continued = newline > 0 && header[newline - 1] == '\\';
    end = newline + 1;
    if (!continued) return {begin, end};
  }
}

// The header with its block generated from the table; "" when it has no block.
std::string CurrentHeader(const std::string& header, const json& table) {
  const auto [begin, end] = BlockBounds(header);
  if (begin == std::string::npos) return "";
  return header.substr(0, begin) + DeviceTypesBlock(DeviceTypes(table)) + header.substr(end);
}

int CheckOrWriteHeader(const std::string& root, const json& table, bool write) {
  const std::string path = root + "/" + kHeader;
  const std::string header = Read(path);
  const std::string current = CurrentHeader(header, table);
  if (current.empty()) {
    std::printf("%s has no %s block\n", kHeader, kBlockStart);
    return 1;
  }
  const bool current_now = generated_files::Refresh(
      root, kHeader, current, write,
      "is not config/vendors.json's (INFINIRT_DEVICE_TYPES): run vendor_table --write "
      "<source root>");
  return current_now ? 0 : 1;
}

// --- Vendor sets written by hand --------------------------------------------------------------

// The spellings of each vendor (lower case) that count as naming it: its name and its display
// name. The CPU is no vendor: "cpu" is a word of every other line.
std::map<std::string, std::string> VendorSpellings(const json& table) {
  std::map<std::string, std::string> spellings;  // spelling to vendor
  for (const json& row : table.at("vendors")) {
    const std::string name = row.at("name").get<std::string>();
    if (row.at("family") == "cpu") continue;
    spellings[Lower(name)] = name;
    spellings[Lower(row.at("device_type").at("display").get<std::string>())] = name;
  }
  return spellings;
}

// Whether `spelling` (lower case) occurs in `line` at `at` as a name: not inside a longer word
// ("ascending" is not Ascend), though joined to other words by _ or a capital ("INFINI_DEVICE_X",
// "AscendCL").
bool NamedAt(const std::string& line, size_t at, size_t length) {
  const auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  const auto lower = [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0; };
  if (at > 0 && letter(line[at - 1])) return false;
  return at + length >= line.size() || !lower(line[at + length]);
}

// The vendors a line names.
std::set<std::string> VendorsNamed(const std::string& line,
                                   const std::map<std::string, std::string>& spellings) {
  const std::string lowered = Lower(line);
  std::set<std::string> named;
  for (const auto& [spelling, vendor] : spellings) {
    for (size_t at = lowered.find(spelling); at != std::string::npos;
         at = lowered.find(spelling, at + 1)) {
      if (NamedAt(line, at, spelling.size())) {
        named.insert(vendor);
        break;
      }
    }
  }
  return named;
}

struct Listing {
  std::string path;
  size_t first_line = 0, last_line = 0;
  std::set<std::string> vendors;
};

constexpr size_t kVendorSet = 3;  // this many vendors in one group of lines make a list

// The groups of consecutive lines, each naming a vendor, that name kVendorSet or more; lines in
// [skip_begin, skip_end) (1-based) are left out.
std::vector<Listing> Listings(const std::string& path, const std::string& text,
                              const std::map<std::string, std::string>& spellings,
                              size_t skip_begin = 0, size_t skip_end = 0) {
  std::vector<Listing> listings;
  Listing group{path, 0, 0, {}};
  std::istringstream lines(text + "\n");
  size_t number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const bool skipped = number >= skip_begin && number < skip_end;
    const std::set<std::string> named =
        skipped ? std::set<std::string>() : VendorsNamed(line, spellings);
    if (!named.empty()) {
      if (group.vendors.empty()) group.first_line = number;
      group.last_line = number;
      group.vendors.insert(named.begin(), named.end());
      continue;
    }
    if (group.vendors.size() >= kVendorSet) listings.push_back(group);
    group = Listing{path, 0, 0, {}};
  }
  return listings;
}

// The files whose vendor lists are not written by hand, or must name vendors, each with why.
// Everything else tracked is scanned.
bool AllowListed(const std::string& path) {
  // The table itself.
  if (path == "config/vendors.json") return true;
  // Prose for people (docs/, the READMEs), which names the vendors it describes; the tables in
  // docs/ that list every vendor are generated (support-matrix.md, infiniop-support.md) or say
  // where the list comes from.
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".md") == 0) return true;
  // A copy of InfiniCore's own published header (its device enum is the other side of the
  // numbering contract, tests/contract), not InfiniRT's list.
  if (path.rfind("tests/contract/infinicore_double/", 0) == 0) return true;
  return false;
}

// The 1-based lines [begin, end) of the generated block of include/infinicore.h, which the scan
// leaves out (--check keeps it equal to the table); {0, 0} for any other file.
std::pair<size_t, size_t> GeneratedLines(const std::string& path, const std::string& text) {
  if (path != kHeader) return {0, 0};
  const auto [begin, end] = BlockBounds(text);
  if (begin == std::string::npos) return {0, 0};
  const auto line_of = [&](size_t offset) {
    return static_cast<size_t>(std::count(text.begin(), text.begin() + offset, '\n')) + 1;
  };
  return {line_of(begin), line_of(end)};
}

std::vector<std::string> TrackedFiles(const std::string& root, bool* ok) {
  std::vector<std::string> files;
  FILE* pipe = popen(("git -C '" + root + "' ls-files -z 2>/dev/null").c_str(), "r");
  *ok = pipe != nullptr;
  if (pipe == nullptr) return files;
  std::string name;
  for (int c; (c = std::fgetc(pipe)) != EOF;) {
    if (c != '\0') {
      name += static_cast<char>(c);
    } else {
      files.push_back(name);
      name.clear();
    }
  }
  *ok = pclose(pipe) == 0 && !files.empty();
  return files;
}

int Scan(const std::string& root, const std::vector<std::string>& files, const json& table,
         bool allow_list) {
  const std::map<std::string, std::string> spellings = VendorSpellings(table);
  std::vector<Listing> listings;
  for (const std::string& file : files) {
    if (allow_list && AllowListed(file)) continue;
    const std::string text = Read(file.rfind('/', 0) == 0 ? file : root + "/" + file);
    if (text.find('\0') != std::string::npos) continue;  // binary
    const auto [skip_begin, skip_end] = GeneratedLines(file, text);
    for (const Listing& listing : Listings(file, text, spellings, skip_begin, skip_end)) {
      listings.push_back(listing);
    }
  }
  for (const Listing& listing : listings) {
    std::string vendors;
    for (const std::string& vendor : listing.vendors)
      vendors += (vendors.empty() ? "" : ", ") + vendor;
    std::printf(
        "%s:%zu-%zu: names %zu vendors (%s) by hand: generate the list from "
        "config/vendors.json or read it from there\n",
        listing.path.c_str(), listing.first_line, listing.last_line, listing.vendors.size(),
        vendors.c_str());
  }
  if (!listings.empty()) return 1;
  std::printf("%zu files: no vendor set written outside config/vendors.json\n", files.size());
  return 0;
}

int Usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s --check|--write|--single-source <source root>\n"
               "       %s --scan <source root> <file>...\n",
               program, program);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage(argv[0]);
  const std::string mode = argv[1];
  const std::string root = argv[2];
  const json table = json::parse(Read(root + "/config/vendors.json"), nullptr, false);
  if (!table.is_object() || !table.contains("vendors")) {
    std::printf("%s/config/vendors.json is not the vendor table\n", root.c_str());
    return 1;
  }
  if (mode == "--check" || mode == "--write") {
    return argc == 3 ? CheckOrWriteHeader(root, table, mode == "--write") : Usage(argv[0]);
  }
  if (mode == "--single-source" && argc == 3) {
    bool ok = false;
    const std::vector<std::string> files = TrackedFiles(root, &ok);
    if (!ok) {
      std::printf("%s is not a git work tree: its tracked files are unknown, nothing scanned\n",
                  root.c_str());
      return 77;  // skipped
    }
    return Scan(root, files, table, /*allow_list=*/true);
  }
  if (mode == "--scan" && argc > 3) {
    return Scan(root, std::vector<std::string>(argv + 3, argv + argc), table,
                /*allow_list=*/false);
  }
  return Usage(argv[0]);
}
