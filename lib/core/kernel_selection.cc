#include "lib/core/kernel_selection.h"

#include <cxxabi.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "re2/re2.h"

namespace cuscope::core {

std::string DemangleName(std::string_view mangled) {
  const std::string name(mangled);
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return name;
  }
  std::string demangled(out);
  std::free(out);
  return demangled;
}

namespace {

// Nesting of every kind of bracket a demangled name holds: template arguments <>, parameter lists
// and "(anonymous namespace)" (), lambdas {}, arrays [].
class Nesting {
 public:
  // Steps over `c`; true when it is outside every bracket (a closing one included).
  bool Outside(char c) {
    if (c == '<' || c == '(' || c == '{' || c == '[') {
      ++depth_;
      return false;
    }
    if ((c == '>' || c == ')' || c == '}' || c == ']') && depth_ > 0) --depth_;
    return depth_ == 0;
  }
  int depth() const { return depth_; }

 private:
  int depth_ = 0;
};

}  // namespace

std::string FunctionNameWithTemplateArguments(std::string_view demangled) {
  // Cut at the parameter list: the last '(' outside every bracket, so that a scope such as
  // "(anonymous namespace)" before the name is not taken for it.
  Nesting nesting;
  size_t end = demangled.size();
  for (size_t i = 0; i < demangled.size(); ++i) {
    if (demangled[i] == '(' && nesting.depth() == 0) end = i;
    nesting.Outside(demangled[i]);
  }
  std::string_view head = demangled.substr(0, end);
  // Drop the return type: whatever precedes the last space outside every bracket.
  Nesting outer;
  size_t begin = 0;
  for (size_t i = 0; i < head.size(); ++i) {
    if (outer.Outside(head[i]) && head[i] == ' ') begin = i + 1;
  }
  return std::string(head.substr(begin));
}

std::string FunctionBaseName(std::string_view demangled) {
  const std::string head = FunctionNameWithTemplateArguments(demangled);
  // Drop template arguments wherever they appear (ns::foo<int>, ns<1>::foo).
  std::string base;
  int depth = 0;
  for (const char c : head) {
    if (c == '<') {
      ++depth;
    } else if (c == '>' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      base.push_back(c);
    }
  }
  return base.empty() ? std::string(demangled) : base;
}

absl::StatusOr<KernelSelector> KernelSelector::Create(const KernelSelection& selection) {
  KernelSelector s(selection);
  constexpr std::string_view kRegexPrefix = "regex:";
  if (selection.kernel_name.rfind(kRegexPrefix, 0) == 0) {
    const std::string pattern = selection.kernel_name.substr(kRegexPrefix.size());
    if (pattern.empty()) return absl::InvalidArgumentError("the kernel-name regex is empty");
    if (pattern.size() > kMaxRegexLength) {
      return absl::InvalidArgumentError(absl::StrCat("the kernel-name regex has ", pattern.size(),
                                                     " characters; at most ", kMaxRegexLength, " are accepted"));
    }
    RE2::Options options;
    options.set_log_errors(false);  // the error goes into the status, not onto the program's stderr
    auto regex = std::make_shared<const RE2>(pattern, options);
    if (!regex->ok()) {
      // RE2's message quotes the offending part; both are cut so the error stays one short line.
      const auto cut = [](const std::string& text) {
        return text.size() <= 120 ? text : absl::StrCat(text.substr(0, 120), "...");
      };
      return absl::InvalidArgumentError(
          absl::StrCat("kernel-name regex \"", cut(pattern), "\" does not compile: ", cut(regex->error())));
    }
    s.regex_ = std::move(regex);
  }
  return s;
}

bool KernelSelector::NameMatches(std::string_view mangled_name) {
  if (selection_.kernel_name.empty()) return true;
  const std::string key(mangled_name);
  if (auto it = name_matches_.find(key); it != name_matches_.end()) return it->second;
  const std::string demangled = DemangleName(mangled_name);
  bool match = false;
  if (regex_ != nullptr) {
    match = RE2::PartialMatch(key, *regex_) || RE2::PartialMatch(demangled, *regex_);
  } else {
    const std::string& want = selection_.kernel_name;
    const std::string base = FunctionBaseName(demangled);
    const size_t colon = base.rfind("::");
    const std::string unqualified = colon == std::string::npos ? base : base.substr(colon + 2);
    match = want == key || want == demangled || want == base || want == unqualified;
  }
  name_matches_.emplace(key, match);
  return match;
}

bool KernelSelector::Select(std::string_view mangled_name, const LaunchShape& shape) {
  if (Exhausted()) return false;
  if (!NameMatches(mangled_name)) return false;
  ++matched_;
  if (matched_ <= selection_.launch_skip) return false;
  if (selection_.per_kernel_count != 0) {
    const std::string key = absl::StrCat(absl::string_view(mangled_name.data(), mangled_name.size()), "|", shape.grid[0], ",", shape.grid[1], ",", shape.grid[2], "|",
                                         shape.block[0], ",", shape.block[1], ",", shape.block[2]);
    uint64_t& n = profiled_per_kernel_[key];
    if (n >= selection_.per_kernel_count) return false;
    ++n;
  }
  ++profiled_;
  return true;
}

}  // namespace cuscope::core
