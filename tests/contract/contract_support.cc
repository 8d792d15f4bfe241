#include "contract_support.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

namespace infinirt::contract {
namespace {

bool IsIdentifierStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string Trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

bool IsIdentifier(const std::string& text) {
  if (text.empty() || !IsIdentifierStart(text[0])) return false;
  for (char c : text) {
    if (!IsIdentifierChar(c)) return false;
  }
  return true;
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream stream(text);
  while (std::getline(stream, part, separator)) parts.push_back(part);
  return parts;
}

// Reads the identifier starting at *cursor and advances past it.
std::string ReadIdentifier(const std::string& text, size_t* cursor) {
  const size_t begin = *cursor;
  while (*cursor < text.size() && IsIdentifierChar(text[*cursor])) ++*cursor;
  return text.substr(begin, *cursor - begin);
}

void SkipSpace(const std::string& text, size_t* cursor) {
  while (*cursor < text.size() && std::isspace(static_cast<unsigned char>(text[*cursor]))) {
    ++*cursor;
  }
}

// The text between the braces of `<keyword> [words...] <name> {...}`, e.g. keyword "enum" and
// name "cudaError" find `enum __device_builtin__ cudaError { ... }`. Occurrences not followed by a
// brace (`enum cudaError e;`, `struct cudaDeviceProp *prop`) are skipped.
std::optional<std::string> FindBody(const std::string& text, const std::string& keyword,
                                    const std::string& name) {
  for (size_t pos = text.find(keyword); pos != std::string::npos;
       pos = text.find(keyword, pos + 1)) {
    size_t cursor = pos + keyword.size();
    const bool whole_word = (pos == 0 || !IsIdentifierChar(text[pos - 1])) &&
                            cursor < text.size() && !IsIdentifierChar(text[cursor]);
    if (!whole_word) continue;
    std::string last_word;
    for (SkipSpace(text, &cursor); cursor < text.size() && IsIdentifierStart(text[cursor]);
         SkipSpace(text, &cursor)) {
      last_word = ReadIdentifier(text, &cursor);
    }
    if (last_word != name || cursor >= text.size() || text[cursor] != '{') continue;
    int depth = 0;
    for (size_t end = cursor; end < text.size(); ++end) {
      if (text[end] == '{') ++depth;
      if (text[end] == '}' && --depth == 0) return text.substr(cursor + 1, end - cursor - 1);
    }
    return std::nullopt;  // unbalanced braces
  }
  return std::nullopt;
}

// An integer literal such as 10, 0x1F, 0x80u or (-2); nullopt for anything else.
std::optional<long long> ParseIntegerLiteral(std::string text) {
  text = Trim(text);
  while (text.size() >= 2 && text.front() == '(' && text.back() == ')') {
    text = Trim(text.substr(1, text.size() - 2));
  }
  while (!text.empty() && std::string("uUlL").find(text.back()) != std::string::npos) {
    text.pop_back();
  }
  if (text.empty()) return std::nullopt;
  try {
    size_t used = 0;
    const long long value = std::stoll(text, &used, 0);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

std::string Demangle(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && text ? std::string(text.get()) : std::string(type.name());
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

std::string StripComments(const std::string& text) {
  std::string out = text;
  size_t i = 0;
  while (i < out.size()) {
    const char c = out[i];
    if (c == '"' || c == '\'') {  // skip a literal, honouring backslash escapes
      for (++i; i < out.size() && out[i] != c && out[i] != '\n'; ++i) {
        if (out[i] == '\\') ++i;
      }
      ++i;
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      const size_t end = out.find("*/", i + 2);
      const size_t stop = end == std::string::npos ? out.size() : end + 2;
      for (; i < stop; ++i) {
        if (out[i] != '\n') out[i] = ' ';
      }
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
    } else {
      ++i;
    }
  }
  return out;
}

std::optional<std::vector<Enumerator>> ParseEnum(const std::string& text,
                                                 const std::string& enum_name, std::string* error) {
  const std::optional<std::string> body = FindBody(text, "enum", enum_name);
  if (!body) {
    *error = "no definition of enum " + enum_name + " found";
    return std::nullopt;
  }
  std::vector<Enumerator> enumerators;
  std::map<std::string, long long> seen;  // for values that name an earlier enumerator
  for (const std::string& item : Split(*body, ',')) {
    const size_t equals = item.find('=');
    const std::string name = Trim(item.substr(0, equals));
    if (name.empty() && equals == std::string::npos) continue;  // trailing comma
    if (!IsIdentifier(name)) {
      *error = "enum " + enum_name + ": cannot read enumerator '" + Trim(item) + "'";
      return std::nullopt;
    }
    long long value = enumerators.empty() ? 0 : enumerators.back().value + 1;
    if (equals != std::string::npos) {
      const std::string value_text = Trim(item.substr(equals + 1));
      const std::optional<long long> literal = ParseIntegerLiteral(value_text);
      if (literal) {
        value = *literal;
      } else if (seen.count(value_text) != 0) {
        value = seen[value_text];
      } else {
        *error = "enum " + enum_name + ": cannot evaluate " + name + " = " + value_text;
        return std::nullopt;
      }
    }
    seen[name] = value;
    enumerators.push_back({name, value});
  }
  return enumerators;
}

std::optional<std::vector<std::string>> ParseStructFields(const std::string& text,
                                                          const std::string& struct_name,
                                                          std::string* error) {
  const std::optional<std::string> body = FindBody(text, "struct", struct_name);
  if (!body) {
    *error = "no definition of struct " + struct_name + " found";
    return std::nullopt;
  }
  std::vector<std::string> fields;
  for (std::string declaration : Split(*body, ';')) {
    // Array bounds may hold identifiers (char name[NAME_LEN]); they are not field names.
    for (size_t open = declaration.find('['); open != std::string::npos;
         open = declaration.find('[')) {
      declaration.erase(open, declaration.find(']', open) - open + 1);
    }
    // Each declarator ("int a, b") names a field: its last identifier.
    for (const std::string& declarator : Split(declaration, ',')) {
      std::string last;
      size_t cursor = 0;
      while (cursor < declarator.size()) {
        if (IsIdentifierStart(declarator[cursor])) {
          last = ReadIdentifier(declarator, &cursor);
        } else {
          ++cursor;
        }
      }
      if (!last.empty()) fields.push_back(last);
    }
  }
  if (fields.empty()) {
    *error = "struct " + struct_name + " has no fields";
    return std::nullopt;
  }
  return fields;
}

std::vector<std::string> ObjectMacrosWithPrefix(const std::string& text,
                                                const std::string& prefix) {
  std::vector<std::string> names;
  for (const std::string& line : Split(text, '\n')) {
    size_t cursor = 0;
    SkipSpace(line, &cursor);
    if (cursor >= line.size() || line[cursor] != '#') continue;
    ++cursor;
    SkipSpace(line, &cursor);
    if (ReadIdentifier(line, &cursor) != "define") continue;
    SkipSpace(line, &cursor);
    const std::string name = ReadIdentifier(line, &cursor);
    const bool function_like = cursor < line.size() && line[cursor] == '(';
    if (!function_like && name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  return names;
}

}  // namespace infinirt::contract
