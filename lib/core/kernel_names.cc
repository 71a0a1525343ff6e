#include "lib/core/kernel_names.h"

#include <cstddef>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/core/kernel_selection.h"

namespace cuscope::core {
namespace {

// Template arguments shown in a base name; more are elided as "...".
constexpr size_t kMaxTemplateArguments = 4;

bool Opens(char c) { return c == '<' || c == '(' || c == '{' || c == '['; }
bool Closes(char c) { return c == '>' || c == ')' || c == '}' || c == ']'; }

// `text` split at `separator` where it is outside every bracket.
std::vector<std::string_view> SplitOutsideBrackets(std::string_view text, std::string_view separator) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (Opens(text[i])) {
      ++depth;
    } else if (Closes(text[i]) && depth > 0) {
      --depth;
    } else if (depth == 0 && text.compare(i, separator.size(), separator) == 0) {
      parts.push_back(text.substr(begin, i - begin));
      begin = i + separator.size();
      i = begin - 1;
    }
  }
  parts.push_back(text.substr(begin));
  return parts;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ')) s.remove_suffix(1);
  return s;
}

// The part of `component` before its own template arguments or parameters.
std::string_view BeforeBrackets(std::string_view component) {
  for (size_t i = 0; i < component.size(); ++i) {
    if (component[i] == '<' || component[i] == '(') return component.substr(0, i);
  }
  return component;
}

// One template argument cut to its base: "at::native::CUDAFunctor_add<float>" -> "CUDAFunctor_add",
// "char*" -> "char", a lambda's enclosing function for the lambda ("ns::f(int)::{lambda(int)#1}"
// -> "f"). Values ("128", "true", "(char)1") stay.
std::string ShortTemplateArgument(std::string_view argument) {
  argument = Trim(argument);
  if (argument.empty() || argument.front() == '(' || absl::ascii_isdigit(static_cast<unsigned char>(argument.front())) ||
      argument.front() == '-') {
    return std::string(argument);
  }
  const std::vector<std::string_view> scopes = SplitOutsideBrackets(argument, "::");
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    std::string_view scope = Trim(*it);
    if (scope.empty() || scope.front() == '{' || scope.front() == '(' || scope.rfind("operator", 0) == 0) continue;
    scope = Trim(BeforeBrackets(scope));
    if (scope.rfind("const ", 0) == 0) scope.remove_prefix(6);
    while (!scope.empty() && (scope.back() == '*' || scope.back() == '&' || scope.back() == ' ')) scope.remove_suffix(1);
    if (scope.size() > 6 && scope.substr(scope.size() - 6) == " const") scope.remove_suffix(6);
    if (!scope.empty()) return std::string(scope);
  }
  return std::string(argument);
}

}  // namespace

absl::StatusOr<KernelNameStyle> ParseKernelNameStyle(std::string_view text) {
  if (text == "base") return KernelNameStyle::kBase;
  if (text == "demangled") return KernelNameStyle::kDemangled;
  if (text == "mangled") return KernelNameStyle::kMangled;
  return absl::InvalidArgumentError(
      absl::StrCat("--kernel-names takes base, demangled or mangled, not '", absl::string_view(text.data(), text.size()), "'"));
}

std::string KernelBaseName(std::string_view demangled) {
  // The function's name without its return type and parameters: "ns::foo<int, ns::Bar<float> >".
  const std::string function = FunctionNameWithTemplateArguments(demangled);
  std::string_view head = function;
  if (head.empty()) return std::string(demangled);
  const std::vector<std::string_view> scopes = SplitOutsideBrackets(head, "::");
  std::string_view last = Trim(scopes.back());
  const size_t open = last.find('<');
  if (open == std::string_view::npos || last.back() != '>') return std::string(last.empty() ? demangled : last);
  const std::string_view name = last.substr(0, open);
  const std::string_view arguments = last.substr(open + 1, last.size() - open - 2);
  std::vector<std::string> shown;
  const std::vector<std::string_view> parts = SplitOutsideBrackets(arguments, ",");
  for (size_t i = 0; i < parts.size() && i < kMaxTemplateArguments; ++i) shown.push_back(ShortTemplateArgument(parts[i]));
  if (parts.size() > kMaxTemplateArguments) shown.push_back("...");
  return absl::StrCat(absl::string_view(name.data(), name.size()), "<", absl::StrJoin(shown, ", "), ">");
}

std::string KernelDisplayName(std::string_view name, KernelNameStyle style) {
  if (style == KernelNameStyle::kMangled) return std::string(name);
  const bool mangled = name.rfind("_Z", 0) == 0;
  const std::string demangled = DemangleName(name);
  if (mangled && demangled == name) return std::string(name);  // does not demangle: as recorded
  if (style == KernelNameStyle::kDemangled) return demangled;
  // A name that was never mangled is a C or Triton kernel's: already short.
  return mangled ? KernelBaseName(demangled) : demangled;
}

std::string RenameKernelNamesIn(std::string_view text, KernelNameStyle style) {
  if (style == KernelNameStyle::kMangled || text.find("_Z") == std::string_view::npos) return std::string(text);
  const auto word = [](char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  absl::flat_hash_map<std::string, std::string> shown;  // a table names one kernel many times
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "_Z") != 0 || (i > 0 && word(text[i - 1]))) {
      out.push_back(text[i++]);
      continue;
    }
    size_t end = i;
    while (end < text.size() && (word(text[end]) || text[end] == '.' || text[end] == '$')) ++end;
    while (end > i && text[end - 1] == '.') --end;  // a sentence's full stop is not the name's
    const std::string token(text.substr(i, end - i));
    auto [it, inserted] = shown.try_emplace(token);
    if (inserted) it->second = KernelDisplayName(token, style);
    out += it->second;
    i = end;
  }
  return out;
}

}  // namespace cuscope::core
