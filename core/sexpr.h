// S-expressions as text: atoms and parenthesised lists, read from a string.
// The syntax rules (core/rule_sexpr.h, Tensat's converted.txt in
// core/tensat_rules.h) and rule patterns (core/rule_pattern.h) are written in.
#ifndef TASO_CORE_SEXPR_H_
#define TASO_CORE_SEXPR_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace taso {

// An S-expression: an atom or a list.
struct Sexpr {
  std::string atom;
  std::vector<Sexpr> items;
  bool is_list = false;
};

// Reads S-expressions one after another from `text` (which must outlive
// the reader). Errors give the column.
class SexprReader {
 public:
  explicit SexprReader(std::string_view text) : text_(text) {}

  absl::StatusOr<Sexpr> Read();
  // True when only white space is left.
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
