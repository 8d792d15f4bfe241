// Helpers for the contract tests: type names for failure messages, and a small reader of C header
// text (enumerators, flag #defines, struct fields) so the tests can compare InfiniRT's lists with
// what the CUDA headers and infinirt.h actually declare, instead of with a hand-written copy.
#ifndef INFINIRT_TESTS_CONTRACT_CONTRACT_SUPPORT_H_
#define INFINIRT_TESTS_CONTRACT_CONTRACT_SUPPORT_H_

#include <optional>
#include <string>
#include <typeinfo>
#include <vector>

namespace infinirt::contract {

// The demangled spelling of a type, e.g. "infinirtError (*)(void**, unsigned long)".
std::string Demangle(const std::type_info& type);

// The whole file, or nullopt when it cannot be read.
std::optional<std::string> ReadFile(const std::string& path);

// `text` with /* */ and // comments replaced by spaces (newlines kept, string and character
// literals left alone), so that comment text cannot be mistaken for declarations.
std::string StripComments(const std::string& text);

struct Enumerator {
  std::string name;
  long long value;
};

// The enumerators of `enum [attributes] <enum_name> { ... }` in comment-free C text, in order.
// Values may be integer literals, earlier enumerators of the same enum, or implicit (previous +
// 1). On failure returns nullopt and says why in *error.
std::optional<std::vector<Enumerator>> ParseEnum(const std::string& text,
                                                 const std::string& enum_name, std::string* error);

// The field names of `struct [attributes] <struct_name> { ... }` in comment-free C text, in
// order. On failure returns nullopt and says why in *error.
std::optional<std::vector<std::string>> ParseStructFields(const std::string& text,
                                                          const std::string& struct_name,
                                                          std::string* error);

// The names of object-like macros defined in `text` whose name starts with `prefix`
// (case-sensitive), in order. Function-like macros (name followed directly by '(') are left out.
std::vector<std::string> ObjectMacrosWithPrefix(const std::string& text, const std::string& prefix);

}  // namespace infinirt::contract

#endif  // INFINIRT_TESTS_CONTRACT_CONTRACT_SUPPORT_H_
