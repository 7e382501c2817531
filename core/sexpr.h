// S-expressions as the rule syntaxes write them (core/rule_sexpr.h, Tensat's
// converted.txt in core/tensat_rules.h): an atom, or a parenthesized list.
#ifndef TASO_CORE_SEXPR_H_
#define TASO_CORE_SEXPR_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace taso {

struct Sexpr {
  std::string atom;
  std::vector<Sexpr> items;
  bool is_list = false;
};

// Reads one S-expression after another from `text`; errors name the column.
class SexprReader {
 public:
  explicit SexprReader(std::string_view text) : text_(text) {}
  absl::StatusOr<Sexpr> Read();
  // Whether only white space is left.
  bool AtEnd();

 private:
  void Skip();
  absl::Status Error(const std::string& what) const;
  std::string_view text_;
  size_t pos_ = 0;
};

// The expression written back: atoms as they are, lists in parentheses with
// single spaces.
std::string WriteSexpr(const Sexpr& e);

}  // namespace taso

#endif  // TASO_CORE_SEXPR_H_
