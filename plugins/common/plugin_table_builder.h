// Builds a plugin's table from the one list of entries (INFINIRT_PLUGIN_ENTRIES).
//
// A plugin is a struct of static member functions named after the entries it implements,
// defined in the struct or declared there and defined elsewhere:
//
//   struct VendorPlugin {
//     INFINIRT_PLUGIN_ENTRY(Initialize);  // static infinirtError_t Initialize(const ...* host);
//     INFINIRT_PLUGIN_ENTRY(Malloc);
//     ...
//   };
//   infinirtError_t VendorPlugin::Malloc(int device, void** ptr, size_t size) { ... }
//   INFINIRT_DEFINE_PLUGIN_TABLE(MakePluginTable<VendorPlugin>("vendor", INFINI_DEVICE_...))
//
// MakePluginTable finds which entries the struct provides (a detection trait per entry),
// leaves the others NULL (the core answers NotSupported), and wraps every entry in one guard
// that turns an escaping exception into an error code. It checks each member's signature
// against the list at compile time. Optional members:
//   static const PluginLog& GuardLog();  where the guard reports an escaping exception;
//   static std::optional<Declaration> Declare(infinirtPluginEntry_t entry);
//                                        the support declarations, from which the builder
//                                        makes the GetSupport entry (see Declaration below);
//   static std::string VendorFunctionName(const char* function);
//                                        how Declare's function names are spelled in the
//                                        listing (a vendor's symbol prefix, for instance).
//
// The builder also holds every plugin to the ABI's lifecycle rule: a repeated Initialize (no
// Finalize in between) answers infinirtSuccess and changes nothing, and a Finalize without a
// successful Initialize answers infinirtSuccess; the plugin's own entries see neither.
#ifndef INFINIRT_PLUGINS_COMMON_PLUGIN_TABLE_BUILDER_H_
#define INFINIRT_PLUGINS_COMMON_PLUGIN_TABLE_BUILDER_H_

#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "infinirt_plugin.h"
#include "plugin_support.h"

namespace infinirt::plugin {

inline constexpr const char* kEntryNames[] = {
#define INFINIRT_ENTRY_NAME_(name, params) #name,
    INFINIRT_PLUGIN_ENTRIES(INFINIRT_ENTRY_NAME_)
#undef INFINIRT_ENTRY_NAME_
};
static_assert(sizeof(kEntryNames) / sizeof(kEntryNames[0]) == INFINIRT_PLUGIN_ENTRY_COUNT);

// The entry ids under short names, for support declarations: case entry::Malloc: ...
namespace entry {
#define INFINIRT_ENTRY_CONSTANT_(name, params) \
  inline constexpr infinirtPluginEntry_t name = INFINIRT_PLUGIN_ENTRY_##name;
INFINIRT_PLUGIN_ENTRIES(INFINIRT_ENTRY_CONSTANT_)
#undef INFINIRT_ENTRY_CONSTANT_
}  // namespace entry

// Each entry's function type under its name, so that a plugin struct declares an entry without
// repeating its parameters: static plugin::signature::Malloc Malloc;
namespace signature {
#define INFINIRT_ENTRY_SIGNATURE_(name, params) using name = infinirtError_t params;
INFINIRT_PLUGIN_ENTRIES(INFINIRT_ENTRY_SIGNATURE_)
#undef INFINIRT_ENTRY_SIGNATURE_
}  // namespace signature

// Declares an entry in a plugin struct: INFINIRT_PLUGIN_ENTRY(Malloc);
#define INFINIRT_PLUGIN_ENTRY(name) static ::infinirt::plugin::signature::name name

// The id of the entry with this name, or nullopt when there is none.
inline std::optional<infinirtPluginEntry_t> EntryFromName(const char* name) {
  if (name == nullptr) return std::nullopt;
  for (int id = 0; id < INFINIRT_PLUGIN_ENTRY_COUNT; ++id) {
    if (std::strcmp(kEntryNames[id], name) == 0) return static_cast<infinirtPluginEntry_t>(id);
  }
  return std::nullopt;
}

// What a plugin declares about one entry: its level, the vendor functions it uses (as Declare
// names them; VendorFunctionName may spell them), and a note on how or why not.
struct Declaration {
  infinirtPluginSupportLevel_t level = INFINIRT_SUPPORT_NONE;
  std::vector<std::string> functions;
  std::string note;
};

inline Declaration Native(std::vector<std::string> functions, std::string note = "") {
  return {INFINIRT_SUPPORT_NATIVE, std::move(functions), std::move(note)};
}
inline Declaration Emulated(std::vector<std::string> functions, std::string note) {
  return {INFINIRT_SUPPORT_EMULATED, std::move(functions), std::move(note)};
}
inline Declaration None(std::string note) { return {INFINIRT_SUPPORT_NONE, {}, std::move(note)}; }
// The vendor function behind an optional entry, or NotSupported when the runtime lacks it.
inline Declaration NativeIfPresent(bool present, const std::string& function,
                                   std::string note = "") {
  if (present) return Native({function}, std::move(note));
  return None("the runtime lacks " + function);
}

namespace table_detail {

// Provides<Name><Impl>: whether Impl has a static member named after the entry.
#define INFINIRT_DETECT_ENTRY_(name, params)  \
  template <class Impl, class = void>         \
  struct Provides##name : std::false_type {}; \
  template <class Impl>                       \
  struct Provides##name<Impl, std::void_t<decltype(&Impl::name)>> : std::true_type {};
INFINIRT_PLUGIN_ENTRIES(INFINIRT_DETECT_ENTRY_)
#undef INFINIRT_DETECT_ENTRY_

template <class Impl, class = void>
struct HasGuardLog : std::false_type {};
template <class Impl>
struct HasGuardLog<Impl, std::void_t<decltype(Impl::GuardLog())>> : std::true_type {};

template <class Impl, class = void>
struct HasDeclare : std::false_type {};
template <class Impl>
struct HasDeclare<Impl, std::void_t<decltype(Impl::Declare(INFINIRT_PLUGIN_ENTRY_Initialize))>>
    : std::true_type {};

template <class Impl, class = void>
struct HasVendorFunctionName : std::false_type {};
template <class Impl>
struct HasVendorFunctionName<Impl, std::void_t<decltype(Impl::VendorFunctionName(""))>>
    : std::true_type {};

template <class Impl>
void ReportEscapedException(const char* what) noexcept {
  if constexpr (HasGuardLog<Impl>::value) {
    try {
      Impl::GuardLog()(INFINIRT_LOG_ERROR, std::string("internal error: ") + what);
    } catch (...) {
      // Nothing more to do: the entry still answers with an error code.
    }
  }
}

// The error for the exception being handled (called in a catch block): bad_alloc is
// infinirtErrorMemoryAllocation, anything else infinirtErrorUnknown, reported to the plugin's
// log. Out of line, so that the guarded entries stay small.
template <class Impl>
[[gnu::noinline, gnu::cold]] infinirtError_t CurrentExceptionAsError() noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return infinirtErrorMemoryAllocation;
  } catch (const std::exception& exception) {
    ReportEscapedException<Impl>(exception.what());
  } catch (...) {
    ReportEscapedException<Impl>("an exception that is not a std::exception");
  }
  return infinirtErrorUnknown;
}

// The guarded wrapper of one entry: no exception crosses the C boundary. The body is a
// compile-time constant, called directly (and inlined where the compiler sees it), so the
// wrapper adds nothing to the dispatch path while no exception is thrown.
template <class Impl, auto Body>
struct GuardedEntry;
template <class Impl, class... Args, infinirtError_t (*Body)(Args...)>
struct GuardedEntry<Impl, Body> {
  static infinirtError_t Call(Args... args) noexcept {
    try {
      return Body(args...);
    } catch (...) {
      return CurrentExceptionAsError<Impl>();
    }
  }
};

// Whether the plugin is initialised, for the lifecycle rule. One per plugin struct.
template <class Impl>
struct Lifecycle {
  static std::mutex& Mutex() {
    static std::mutex mutex;
    return mutex;
  }
  static inline bool initialized = false;

  static infinirtError_t Initialize(const infinirtPluginHost* host) {
    std::lock_guard<std::mutex> lock(Mutex());
    if (initialized) return infinirtSuccess;
    const infinirtError_t status = Impl::Initialize(host);
    initialized = status == infinirtSuccess;
    return status;
  }
  static infinirtError_t Finalize() {
    std::lock_guard<std::mutex> lock(Mutex());
    if (!initialized) return infinirtSuccess;
    const infinirtError_t status = Impl::Finalize();
    if (status == infinirtSuccess) initialized = false;
    return status;
  }
};

template <class Impl>
std::string SpelledFunctions(const Declaration& declaration) {
  std::string functions;
  for (const std::string& function : declaration.functions) {
    if (!functions.empty()) functions += ", ";
    if constexpr (HasVendorFunctionName<Impl>::value) {
      functions += Impl::VendorFunctionName(function.c_str());
    } else {
      functions += function;
    }
  }
  return functions;
}

// Whether Impl provides each entry, indexed by entry id.
template <class Impl>
struct ProvidedEntries {
  static constexpr bool kProvided[] = {
#define INFINIRT_PROVIDED_ENTRY_(name, params) Provides##name<Impl>::value,
      INFINIRT_PLUGIN_ENTRIES(INFINIRT_PROVIDED_ENTRY_)
#undef INFINIRT_PROVIDED_ENTRY_
  };
};

// GetSupport made from the plugin's Declare. An entry the plugin does not provide and declares
// nothing about is NotSupported ("not implemented by this plugin"): an entry added to the list
// needs no declaration from the plugins that leave it out. An unknown entry name, or a
// provided entry the plugin declares nothing about (the lifecycle entries), is
// infinirtErrorInvalidValue.
template <class Impl>
infinirtError_t GetSupportFromDeclarations(const char* entry, infinirtPluginSupport* support) {
  const std::optional<infinirtPluginEntry_t> id = EntryFromName(entry);
  if (!id || support == nullptr) return infinirtErrorInvalidValue;
  std::optional<Declaration> declaration = Impl::Declare(*id);
  if (!declaration && !ProvidedEntries<Impl>::kProvided[*id]) {
    declaration = None("not implemented by this plugin");
  }
  if (!declaration) return infinirtErrorInvalidValue;
  support->level = declaration->level;
  CopyText(support->vendor_functions, sizeof(support->vendor_functions),
           SpelledFunctions<Impl>(*declaration));
  CopyText(support->note, sizeof(support->note), declaration->note);
  return infinirtSuccess;
}

}  // namespace table_detail

// The table of the plugin struct Impl (see the top of this file).
template <class Impl>
infinirtPluginTable MakePluginTable(const char* name, infiniDevice_t device_type) {
  using namespace table_detail;
  infinirtPluginTable table{};
  table.struct_size = sizeof(infinirtPluginTable);
  table.abi_major = INFINIRT_PLUGIN_ABI_MAJOR;
  table.abi_minor = INFINIRT_PLUGIN_ABI_MINOR;
  table.name = name;
  table.device_type = device_type;
#define INFINIRT_FILL_ENTRY_(entry, params)                                                       \
  if constexpr (Provides##entry<Impl>::value) {                                                   \
    static_assert(std::is_same_v<decltype(&Impl::entry), decltype(table.entry)>,                  \
                  "a plugin's " #entry " must have the signature INFINIRT_PLUGIN_ENTRIES gives"); \
    table.entry = &GuardedEntry<Impl, &Impl::entry>::Call;                                        \
  }
  INFINIRT_PLUGIN_ENTRIES(INFINIRT_FILL_ENTRY_)
#undef INFINIRT_FILL_ENTRY_
  if constexpr (ProvidesInitialize<Impl>::value) {
    table.Initialize = &GuardedEntry<Impl, &Lifecycle<Impl>::Initialize>::Call;
  }
  if constexpr (ProvidesFinalize<Impl>::value) {
    table.Finalize = &GuardedEntry<Impl, &Lifecycle<Impl>::Finalize>::Call;
  }
  if constexpr (HasDeclare<Impl>::value) {
    static_assert(!ProvidesGetSupport<Impl>::value,
                  "a plugin declares its support with Declare or GetSupport, not both");
    table.GetSupport = &GuardedEntry<Impl, &GetSupportFromDeclarations<Impl>>::Call;
  }
  return table;
}

}  // namespace infinirt::plugin

// Defines the plugin's exported entry point, returning the table made once by the expression.
#define INFINIRT_DEFINE_PLUGIN_TABLE(make_table)                       \
  extern "C" const infinirtPluginTable* infinirtPluginGetTable(void) { \
    static const infinirtPluginTable table = make_table;               \
    return &table;                                                     \
  }

#endif  // INFINIRT_PLUGINS_COMMON_PLUGIN_TABLE_BUILDER_H_
