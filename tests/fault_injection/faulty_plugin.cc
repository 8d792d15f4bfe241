// libinfinirt_faulty.so: the CPU backend behind a layer that injects faults, for the fault
// injection tests. It is a complete backend (a private copy of the CPU plugin, device type
// NVIDIA, name "faulty"), and environment variables, read at each Initialize, choose what goes
// wrong:
//
//   FAULTY_FAULTS     comma-separated <entry>:<error>[:<after>[:<times>]]: the entry succeeds
//                     <after> calls (default 0), then answers <error> (an infinirtError_t number)
//                     without calling the CPU backend, <times> times (default 0: for ever).
//                     <entry> "*" counts the calls of every device entry together (all entries
//                     but Initialize, Finalize, GetInfo, GetDeviceCount and GetSupport), so a
//                     sweep over <after> fails each call of a workload in turn.
//   FAULTY_DELAY_MS   comma-separated <entry>:<milliseconds>: the entry sleeps, then proceeds.
//   FAULTY_MISSING    comma-separated entry names left NULL in the table (the core answers
//                     NotSupported for them).
//   FAULTY_THROWS     comma-separated <entry>:<bad_alloc|exception|other>: the entry throws
//                     std::bad_alloc, a std::runtime_error or an int, for the guard every
//                     plugin's entries run in (plugin_table_builder.h) to turn into an error.
//
// A malformed item is reported on stderr and makes Initialize fail, so a test cannot run with
// a switch it did not mean.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "infinirt_plugin.h"
#include "plugin_table_builder.h"

// The CPU plugin's own entry point, renamed at compile time for this library (CMakeLists.txt).
extern "C" const infinirtPluginTable* faultyInnerCpuTable(void);

namespace {

using infinirt::plugin::kEntryNames;
constexpr int kEntryCount = INFINIRT_PLUGIN_ENTRY_COUNT;

constexpr int kAnyEntry = kEntryCount;  // "*"

struct Fault {
  int entry = -1;
  infinirtError_t error = infinirtSuccess;
  long after = 0;  // successful calls before the first failure
  long times = 0;  // failures, 0 for ever
  long calls = 0;  // calls seen so far
  long failed = 0;
};

enum class Throw { kNothing, kBadAlloc, kException, kOther };

struct Switches {
  std::mutex mutex;
  std::vector<Fault> faults;
  long delay_ms[kEntryCount] = {};
  bool missing[kEntryCount] = {};
  Throw throws[kEntryCount] = {};
};

Switches& TheSwitches() {
  static Switches switches;
  return switches;
}

bool CountsForAnyEntry(int entry) {
  return entry != INFINIRT_PLUGIN_ENTRY_Initialize && entry != INFINIRT_PLUGIN_ENTRY_Finalize &&
         entry != INFINIRT_PLUGIN_ENTRY_GetInfo && entry != INFINIRT_PLUGIN_ENTRY_GetDeviceCount &&
         entry != INFINIRT_PLUGIN_ENTRY_GetSupport;
}

int EntryIndexOf(const std::string& name) {
  if (name == "*") return kAnyEntry;
  const auto id = infinirt::plugin::EntryFromName(name.c_str());
  return id ? static_cast<int>(*id) : -1;
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(separator, start), text.size());
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

bool ParseNumber(const std::string& text, long* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  *value = std::strtol(text.c_str(), &end, 10);
  return *end == '\0' && *value >= 0;
}

bool Reject(const char* variable, const std::string& item) {
  std::fprintf(stderr, "faulty plugin: %s: malformed item '%s'\n", variable, item.c_str());
  return false;
}

bool ParseFaults(const char* text, std::vector<Fault>* faults) {
  for (const std::string& item : Split(text ? text : "", ',')) {
    const std::vector<std::string> fields = Split(item, ':');
    Fault fault;
    long error = 0;
    fault.entry = fields.empty() ? -1 : EntryIndexOf(fields[0]);
    if (fields.size() < 2 || fields.size() > 4 || fault.entry < 0 ||
        !ParseNumber(fields[1], &error) || error == 0 ||
        (fields.size() > 2 && !ParseNumber(fields[2], &fault.after)) ||
        (fields.size() > 3 && !ParseNumber(fields[3], &fault.times))) {
      return Reject("FAULTY_FAULTS", item);
    }
    fault.error = static_cast<infinirtError_t>(error);
    faults->push_back(fault);
  }
  return true;
}

bool ParseDelays(const char* text, long* delay_ms) {
  for (const std::string& item : Split(text ? text : "", ',')) {
    const std::vector<std::string> fields = Split(item, ':');
    const int entry = fields.size() == 2 ? EntryIndexOf(fields[0]) : -1;
    if (entry < 0 || entry == kAnyEntry || !ParseNumber(fields[1], &delay_ms[entry])) {
      return Reject("FAULTY_DELAY_MS", item);
    }
  }
  return true;
}

bool ParseMissing(const char* text, bool* missing) {
  for (const std::string& item : Split(text ? text : "", ',')) {
    const int entry = EntryIndexOf(item);
    if (entry < 0 || entry == kAnyEntry) return Reject("FAULTY_MISSING", item);
    missing[entry] = true;
  }
  return true;
}

bool ParseThrows(const char* text, Throw* throws) {
  for (const std::string& item : Split(text ? text : "", ',')) {
    const std::vector<std::string> fields = Split(item, ':');
    const int entry = fields.size() == 2 ? EntryIndexOf(fields[0]) : -1;
    if (entry < 0 || entry == kAnyEntry) return Reject("FAULTY_THROWS", item);
    if (fields[1] == "bad_alloc") {
      throws[entry] = Throw::kBadAlloc;
    } else if (fields[1] == "exception") {
      throws[entry] = Throw::kException;
    } else if (fields[1] == "other") {
      throws[entry] = Throw::kOther;
    } else {
      return Reject("FAULTY_THROWS", item);
    }
  }
  return true;
}

// Reads the switches; false when one is malformed.
bool LoadSwitches() {
  Switches& switches = TheSwitches();
  std::lock_guard<std::mutex> lock(switches.mutex);
  switches.faults.clear();
  std::memset(switches.delay_ms, 0, sizeof switches.delay_ms);
  std::memset(switches.missing, 0, sizeof switches.missing);
  std::fill(std::begin(switches.throws), std::end(switches.throws), Throw::kNothing);
  return ParseFaults(std::getenv("FAULTY_FAULTS"), &switches.faults) &&
         ParseDelays(std::getenv("FAULTY_DELAY_MS"), switches.delay_ms) &&
         ParseMissing(std::getenv("FAULTY_MISSING"), switches.missing) &&
         ParseThrows(std::getenv("FAULTY_THROWS"), switches.throws);
}

// Counts a call of an entry against every fault that watches it; the error to inject, if any.
infinirtError_t InjectedError(int entry) {
  Switches& switches = TheSwitches();
  std::lock_guard<std::mutex> lock(switches.mutex);
  infinirtError_t injected = infinirtSuccess;
  for (Fault& fault : switches.faults) {
    if (fault.entry != entry && !(fault.entry == kAnyEntry && CountsForAnyEntry(entry))) continue;
    const long call = fault.calls++;
    const bool exhausted = fault.times != 0 && fault.failed >= fault.times;
    if (call >= fault.after && !exhausted && injected == infinirtSuccess) {
      ++fault.failed;
      injected = fault.error;
    }
  }
  return injected;
}

// Throws what FAULTY_THROWS asks of the entry, if anything.
void ThrowIfAsked(int entry) {
  Throw what;
  {
    Switches& switches = TheSwitches();
    std::lock_guard<std::mutex> lock(switches.mutex);
    what = switches.throws[entry];
  }
  switch (what) {
    case Throw::kBadAlloc:
      throw std::bad_alloc();
    case Throw::kException:
      throw std::runtime_error("injected by FAULTY_THROWS");
    case Throw::kOther:
      throw 42;
    case Throw::kNothing:
      break;
  }
}

long DelayOf(int entry) {
  Switches& switches = TheSwitches();
  std::lock_guard<std::mutex> lock(switches.mutex);
  return switches.delay_ms[entry];
}

const infinirtPluginTable& Inner() {
  static const infinirtPluginTable* const table = faultyInnerCpuTable();
  return *table;
}

struct FaultyPlugin {};  // for the guard: no log of its own

// The wrapper of one entry: delay, then an injected error or the CPU backend's answer, in the
// one guard every plugin's entries have.
template <int Index, auto Member, class Function>
struct Wrapper;
template <int Index, auto Member, class... Args>
struct Wrapper<Index, Member, infinirtError_t (*)(Args...)> {
  static infinirtError_t Faulty(Args... args) {
    if (const long delay = DelayOf(Index)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    }
    if (const infinirtError_t error = InjectedError(Index)) return error;
    ThrowIfAsked(Index);
    return (Inner().*Member)(args...);
  }
  static infinirtError_t Call(Args... args) noexcept {
    return infinirt::plugin::table_detail::GuardedEntry<FaultyPlugin, &Faulty>::Call(args...);
  }
};

// Initialize reads the switches before anything else, so that they apply to it too.
infinirtError_t Initialize(const infinirtPluginHost* host) {
  if (!LoadSwitches()) return infinirtErrorInvalidValue;
  using InitializeWrapper =
      Wrapper<INFINIRT_PLUGIN_ENTRY_Initialize, &infinirtPluginTable::Initialize,
              decltype(infinirtPluginTable::Initialize)>;
  return InitializeWrapper::Call(host);
}

// The table is rebuilt at each call of the entry point: FAULTY_MISSING is read here, since the
// core reads the table before calling Initialize.
infinirtPluginTable MakeTable() {
  LoadSwitches();
  infinirtPluginTable table = Inner();
  table.name = "faulty";
  table.device_type = INFINI_DEVICE_NVIDIA;
#define FAULTY_WRAP_(name, params)                                                      \
  table.name = TheSwitches().missing[INFINIRT_PLUGIN_ENTRY_##name]                      \
                   ? nullptr                                                            \
                   : &Wrapper<INFINIRT_PLUGIN_ENTRY_##name, &infinirtPluginTable::name, \
                              decltype(infinirtPluginTable::name)>::Call;
  INFINIRT_PLUGIN_ENTRIES(FAULTY_WRAP_)
#undef FAULTY_WRAP_
  if (!TheSwitches().missing[INFINIRT_PLUGIN_ENTRY_Initialize]) table.Initialize = &Initialize;
  return table;
}

}  // namespace

extern "C" const infinirtPluginTable* infinirtPluginGetTable(void) {
  static infinirtPluginTable table;
  table = MakeTable();
  return &table;
}
