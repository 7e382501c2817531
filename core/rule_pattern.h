// Rule patterns: which rules contain a given subexpression (`taso rules list
// --pattern`). A pattern is one S-expression in the rule syntax of
// core/rule_sexpr.h, e.g. `(relu (conv2d 1 1 0 0 ?x ?w))`, where a variable
// (`?name`; a shape after '@' is ignored) matches anything: a subexpression,
// a rule variable or a parameter, as in `(conv2d ?sh ?sw ?pad 2 ?x ?w)`. A
// variable used twice must match equal text both times. A side contains the
// pattern when some subexpression of one of its outputs, written as
// RuleToSexpr writes it, matches it: as written, but for the operands of an
// element-wise sum or product, which match in either order (as the
// optimizer's searches match them).
#ifndef TASO_CORE_RULE_PATTERN_H_
#define TASO_CORE_RULE_PATTERN_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/sexpr.h"
#include "proto/rules.pb.h"

namespace taso {

enum class PatternSide { kEither, kSource, kTarget };

class RulePattern {
 public:
  // InvalidArgument for text that is not one operator list, an unknown
  // operator, or an operator with the wrong number of arguments.
  static absl::StatusOr<RulePattern> Parse(const std::string& text);

  // Whether `side` of `rule` contains the pattern. A rule the syntax cannot
  // write (a conv with a bias input, explicit padding) contains nothing.
  bool FoundIn(const rules::Rule& rule, PatternSide side) const;

 private:
  explicit RulePattern(Sexpr pattern) : pattern_(std::move(pattern)) {}
  Sexpr pattern_;
};

}  // namespace taso

#endif  // TASO_CORE_RULE_PATTERN_H_
