#include "core/rule_pattern.h"

#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/op.h"
#include "core/rule_sexpr.h"

namespace taso {
namespace {

bool IsVariable(const Sexpr& e) { return !e.is_list && !e.atom.empty() && e.atom[0] == '?'; }

std::string VariableName(const std::string& atom) { return atom.substr(0, atom.find('@')); }

// Argument counts of the operators RuleToSexpr writes with parameters
// besides their operands; -1: any number (the constants list their shape).
// Operators it writes by their IR name take their operands only.
const std::map<std::string_view, int>& WrittenArity() {
  static const auto* arity = new std::map<std::string_view, int>{
      {"matmul", 3}, {"conv2d", 6},  {"poolavg", 7}, {"poolmax", 7}, {"concat", 4},  {"split_0", 1},
      {"split_1", 1}, {"split", 2},  {"transpose", 3}, {"enlarge", 3}, {"reshape", 2}, {"merge", 2},
      {"Cpool", -1}, {"Iconv", -1}, {"Imatmul", -1}, {"Ones", -1}};
  return *arity;
}

absl::Status CheckOperators(const Sexpr& e) {
  if (!e.is_list) return absl::OkStatus();
  if (e.items.empty() || e.items[0].is_list || IsVariable(e.items[0])) {
    return absl::InvalidArgumentError("every list of a pattern starts with an operator name, e.g. (relu ?x)");
  }
  const std::string& op = e.items[0].atom;
  const int args = static_cast<int>(e.items.size()) - 1;
  auto known = WrittenArity().find(op);
  if (known != WrittenArity().end()) {
    if (known->second >= 0 && known->second != args) {
      return absl::InvalidArgumentError(absl::StrCat(op, " takes ", known->second, " arguments in the rule syntax, got ",
                                                     args, " (see `taso rules list` for examples)"));
    }
  } else if (!OpKindFromName(op)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown operator '", op, "' in the pattern"));
  }
  for (size_t i = 1; i < e.items.size(); ++i) {
    if (absl::Status s = CheckOperators(e.items[i]); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool Equal(const Sexpr& a, const Sexpr& b) {
  if (a.is_list != b.is_list || a.atom != b.atom || a.items.size() != b.items.size()) return false;
  for (size_t i = 0; i < a.items.size(); ++i) {
    if (!Equal(a.items[i], b.items[i])) return false;
  }
  return true;
}

using Bindings = std::map<std::string, const Sexpr*>;

// Sums and products, whose two operands match in either order as the
// optimizer matches them (OperandsCommute).
bool Commutes(const Sexpr& e) {
  if (!e.is_list || e.items.size() != 3 || e.items[0].is_list) return false;
  const std::optional<OpKind> kind = OpKindFromName(e.items[0].atom);
  return kind && OperandsCommute(*kind);
}

void MatchAt(const Sexpr& p, const Sexpr& e, const Bindings& bound, std::vector<Bindings>& out);

// Every way items 1.. of `p` match `e`'s, the operands read as `order` says.
void MatchItems(const Sexpr& p, const Sexpr& e, const std::vector<size_t>& order, const Bindings& bound,
                std::vector<Bindings>& out) {
  std::vector<Bindings> states = {bound};
  for (size_t i = 1; i < p.items.size() && !states.empty(); ++i) {
    std::vector<Bindings> next;
    for (const Bindings& b : states) MatchAt(p.items[i], e.items[order[i]], b, next);
    states = std::move(next);
  }
  for (Bindings& b : states) out.push_back(std::move(b));
}

// Appends to `out` every binding, extending `bound`, under which `e`
// matches `p` (several where sums or products match either way round).
void MatchAt(const Sexpr& p, const Sexpr& e, const Bindings& bound, std::vector<Bindings>& out) {
  if (IsVariable(p)) {
    auto it = bound.find(VariableName(p.atom));
    if (it == bound.end()) {
      Bindings b = bound;
      b.emplace(VariableName(p.atom), &e);
      out.push_back(std::move(b));
    } else if (Equal(*it->second, e)) {
      out.push_back(bound);
    }
    return;
  }
  if (p.is_list != e.is_list || p.items.size() != e.items.size()) return;
  if (!p.is_list) {
    if (p.atom == e.atom) out.push_back(bound);
    return;
  }
  if (!Equal(p.items[0], e.items[0])) return;  // lists start with the operator's name (CheckOperators)
  std::vector<size_t> order(p.items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  MatchItems(p, e, order, bound, out);
  if (Commutes(e) && !Equal(e.items[1], e.items[2])) MatchItems(p, e, {0, 2, 1}, bound, out);
}

bool FoundBelow(const Sexpr& p, const Sexpr& e) {
  if (!e.is_list) return false;
  std::vector<Bindings> matches;
  MatchAt(p, e, Bindings{}, matches);
  if (!matches.empty()) return true;
  for (const Sexpr& item : e.items) {
    if (FoundBelow(p, item)) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<RulePattern> RulePattern::Parse(const std::string& text) {
  SexprReader reader(text);
  auto e = reader.Read();
  if (!e.ok()) return absl::InvalidArgumentError(absl::StrCat("pattern: ", e.status().message()));
  if (!reader.AtEnd()) return absl::InvalidArgumentError("pattern: text after the expression; give one expression");
  if (!e->is_list) {
    return absl::InvalidArgumentError(absl::StrCat("pattern '", text, "' is not an operator list, e.g. (relu ?x)"));
  }
  if (absl::Status s = CheckOperators(*e); !s.ok()) return absl::InvalidArgumentError(absl::StrCat("pattern: ", s.message()));
  return RulePattern(*std::move(e));
}

bool RulePattern::FoundIn(const rules::Rule& rule, PatternSide side) const {
  auto text = RuleToSexpr(rule);
  if (!text.ok()) return false;
  std::string_view line(*text);
  line = line.substr(0, line.find(";;"));
  const size_t arrow = line.find("=>");
  if (arrow == std::string_view::npos) return false;
  const std::string_view sides[2] = {line.substr(0, arrow), line.substr(arrow + 2)};
  for (int k = 0; k < 2; ++k) {
    if ((k == 0 && side == PatternSide::kTarget) || (k == 1 && side == PatternSide::kSource)) continue;
    SexprReader reader(sides[k]);
    auto e = reader.Read();
    if (e.ok() && FoundBelow(pattern_, *e)) return true;
  }
  return false;
}

}  // namespace taso
