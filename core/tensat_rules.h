// Rules in Tensat's converted.txt syntax: one `LHS=>RHS` per line whose
// variables carry no shapes (`?input_0`), read by converting each line to
// our S-expression syntax (core/rule_sexpr.h) and parsing that.
//
// The conversion, line by line:
// - Shapes: every variable's shape is inferred by unification over both
//   sides (element-wise operands equal, a matmul's inner dimensions, a
//   convolution's channels with one group, a concat's other dimensions equal
//   and its axis the sum of its inputs', the two sides' outputs equal).
//   Dimensions nothing fixes are 4 (as most of TASO's generator tensors'),
//   kernel dimensions 3, and a tensor whose rank nothing fixes is 2-D.
//   A variable written with a shape (`?x@2_4`) keeps it.
// - Weights: a variable read as a convolution's kernel or a matmul's right
//   operand, or under one, is a weight (TASO's generator only put weights
//   there), and our syntax says so by a name starting with 'w': `?input_1`
//   becomes `?w_input_1`. Other variables are inputs (a name starting with
//   'w' gets an `x_` prefix). Variables written with a shape keep their name.
// - Operators: Tensat's concat3..concat5 become nested binary concats (our
//   n-ary concat nests to the left); Tensat's `(enlarge ?a ?b)` (enlarge a
//   to b's kernel) becomes `(enlarge KH KW ?a)` with b's kernel size.
// Lines whose operators our rules cannot write (Tensat's noop, dropout,
// batchnorm, input/weight leaves, ...), or whose shapes do not unify, are
// kept and marked not expressible, with the reason.
#ifndef TASO_CORE_TENSAT_RULES_H_
#define TASO_CORE_TENSAT_RULES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/rules.pb.h"

namespace taso {

struct TensatRule {
  int line = 0;          // 1-based line in the file
  std::string text;      // as written
  std::string sexpr;     // in our syntax; empty when not expressible
  std::optional<rules::Rule> rule;  // status CANDIDATE, as RulesFromSexpr makes it
  std::string not_expressible;      // why, when `rule` is absent
};

// Every rule line of `text` (blank lines and lines starting with ';' or '#'
// are skipped; a trailing ";;" comment is dropped). InvalidArgument naming
// the line for text that is no rule at all (unbalanced parentheses, no
// "=>"); a rule we cannot express is returned with its reason instead.
absl::StatusOr<std::vector<TensatRule>> ReadTensatRules(const std::string& text);

}  // namespace taso

#endif  // TASO_CORE_TENSAT_RULES_H_
