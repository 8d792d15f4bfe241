#include "cuda_api_header.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace porting {
namespace {

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string Trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// The identifiers of a piece of code, in order; each with whether a '(' follows it.
struct Identifier {
  std::string text;
  bool called = false;
};

std::vector<Identifier> Identifiers(const std::string& code) {
  std::vector<Identifier> identifiers;
  for (size_t i = 0; i < code.size();) {
    if (!IsIdentifierChar(code[i])) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < code.size() && IsIdentifierChar(code[i])) ++i;
    size_t next = i;
    while (next < code.size() && std::isspace(static_cast<unsigned char>(code[next]))) ++next;
    identifiers.push_back({code.substr(start, i - start), next < code.size() && code[next] == '('});
  }
  return identifiers;
}

// Builds the API from the header's comments, preprocessor lines and statements, in order.
class ApiBuilder {
 public:
  // Group commands of a comment: "\defgroup ID Title", "\addtogroup ID", "\ingroup ID" (the next
  // declaration's group), "@{" (opens the group this comment named, or keeps the current one
  // open once more) and "@}" (closes the innermost).
  void OnComment(const std::string& comment) {
    std::string named;
    for (size_t i = 0; i < comment.size(); ++i) {
      if (comment.compare(i, 2, "@{") == 0) {
        open_.push_back(named.empty() ? CurrentModule() : named);
        continue;
      }
      if (comment.compare(i, 2, "@}") == 0) {
        if (!open_.empty()) open_.pop_back();
        continue;
      }
      if (comment[i] != '\\' && comment[i] != '@') continue;
      size_t end = i + 1;
      while (end < comment.size() && IsIdentifierChar(comment[end])) ++end;
      const std::string command = comment.substr(i + 1, end - i - 1);
      if (command != "defgroup" && command != "addtogroup" && command != "ingroup") continue;
      const size_t line_end = comment.find('\n', end);
      std::istringstream arguments(comment.substr(end, line_end - end));
      std::string id;
      arguments >> id;
      std::string title;
      std::getline(arguments, title);
      title = title.substr(0, title.find("@{"));  // "\defgroup ID Title @{" on one line
      if (id.empty()) continue;
      if (command == "ingroup") {
        if (named.empty()) next_declaration_module_ = id;  // not a subgroup's placement
        continue;
      }
      named = id;
      AddModule(id, Trim(title));
    }
  }

  // "#define CUDART_VERSION 13000"; every other directive is no code.
  void OnDirective(const std::string& directive) {
    std::istringstream words(directive.substr(directive.find('#') + 1));
    std::string keyword, name;
    words >> keyword >> name;
    if (keyword == "define" && name == "CUDART_VERSION") words >> api_.version;
  }

  // A statement, from the previous ';', '{' or '}' to this one, comments removed.
  void OnStatement(const std::string& code) {
    const std::string module =
        next_declaration_module_.empty() ? CurrentModule() : next_declaration_module_;
    next_declaration_module_.clear();
    const std::vector<Identifier> identifiers = Identifiers(code);
    if (identifiers.empty() || identifiers[0].text != "extern") return;
    bool host = false;
    bool deprecated = false;
    for (const Identifier& identifier : identifiers) {
      if (identifier.text == "__host__") host = true;
      if (identifier.text == "__CUDA_DEPRECATED" || identifier.text == "CUDART_DEPRECATED") {
        deprecated = true;
      }
      if (!identifier.called || identifier.text.compare(0, 4, "cuda") != 0) continue;
      if (host) AddFunction(identifier.text, module, deprecated);
      return;
    }
  }

  CudaRuntimeApi Finish() {
    for (CudaFunction& function : api_.functions) {
      const CudaModule* module = api_.FindModule(function.module_id);
      if (module != nullptr && module->title.find("[DEPRECATED]") != std::string::npos) {
        function.deprecated = true;
      }
    }
    return api_;
  }

 private:
  std::string CurrentModule() const { return open_.empty() ? "" : open_.back(); }

  void AddModule(const std::string& id, const std::string& title) {
    for (CudaModule& module : api_.modules) {
      if (module.id != id) continue;
      if (module.title == module.id && !title.empty()) module.title = title;
      return;
    }
    api_.modules.push_back({id, title.empty() ? id : title});
  }

  void AddFunction(const std::string& name, const std::string& module, bool deprecated) {
    if (EndsWith(name, "_ptsz") || EndsWith(name, "_ptds")) return;
    const auto known = index_.find(name);
    if (known == index_.end()) {
      index_[name] = api_.functions.size();
      api_.functions.push_back({name, module, deprecated});
      return;
    }
    CudaFunction& function = api_.functions[known->second];
    if (function.module_id.empty()) function.module_id = module;
    function.deprecated = function.deprecated || deprecated;
  }

  CudaRuntimeApi api_;
  std::map<std::string, size_t> index_;  // function name -> its place in api_.functions
  std::vector<std::string> open_;        // the groups open, innermost last
  std::string next_declaration_module_;  // from "\ingroup"
};

// The end of the preprocessor directive that starts at `begin`: the first newline not escaped
// by a backslash and not inside a block comment.
size_t DirectiveEnd(const std::string& text, size_t begin) {
  for (size_t i = begin; i < text.size(); ++i) {
    if (text.compare(i, 2, "/*") == 0) {
      const size_t close = text.find("*/", i + 2);
      if (close == std::string::npos) return text.size();
      i = close + 1;
    } else if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
    } else if (text[i] == '\n') {
      return i;
    }
  }
  return text.size();
}

}  // namespace

const CudaModule* CudaRuntimeApi::FindModule(const std::string& id) const {
  for (const CudaModule& module : modules) {
    if (module.id == id) return &module;
  }
  return nullptr;
}

CudaRuntimeApi ParseCudaRuntimeHeader(const std::string& text) {
  ApiBuilder builder;
  std::string statement;
  bool at_line_start = true;  // nothing but blanks since the last newline
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "/*") == 0) {
      const size_t close = std::min(text.find("*/", i + 2), text.size());
      builder.OnComment(text.substr(i + 2, close - i - 2));
      statement += ' ';
      i = close + 2;
      continue;
    }
    if (text.compare(i, 2, "//") == 0) {
      i = std::min(text.find('\n', i), text.size());
      continue;
    }
    const char c = text[i];
    if (c == '#' && at_line_start) {
      const size_t end = DirectiveEnd(text, i);
      builder.OnDirective(text.substr(i, end - i));
      i = end;
      continue;
    }
    if (c == '\n') {
      at_line_start = true;
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      at_line_start = false;
    }
    if (c == ';' || c == '{' || c == '}') {
      builder.OnStatement(statement);
      statement.clear();
    } else {
      statement += c;
    }
    ++i;
  }
  return builder.Finish();
}

}  // namespace porting
