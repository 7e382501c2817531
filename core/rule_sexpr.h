// Rules as S-expressions in Tensat's syntax, one rule per line:
//   (matmul 0 ?x1 (ewadd ?w1 ?w2))=>(ewadd (matmul 0 ?x1 ?w1) (matmul 0 ?x1 ?w2))
// Variables are `?name`; parameters are leading numbers as Tensat orders
// them (conv2d: stride_h stride_w padding activation; matmul: activation;
// concat: axis ndim; pools: kh kw sh sw padding activation after the input;
// transpose: the input, then perm as "1_0" and shuffle). Activations use
// TASO's numbering (none 0, sigmoid 1, relu 2, tanh 3). A side with several
// outputs is a parenthesized list of S-expressions, in output-pair order
// (graph output order for a rule without output pairs: a rejected pair).
// Operators Tensat lacks keep our names and parameters: enlarge (kh kw),
// const_pool/const_iconv/const_imatmul/const_ones (shape), merge_gconv.
// A variable carries its shape after '@', as Tensat's inputs do: ?x1@2_4
// (a 0-D tensor is ?s0@). Variables whose name starts with 'w' are weights.
// A proved rule ends with its side conditions as a comment,
//   ... ;; if conv2d(1,1,0,0,?0) relu() => conv2d(1,1,0,1,?0)
// (core/side_conditions.h); the parser skips from ";;" to the end of line.
#ifndef TASO_CORE_RULE_SEXPR_H_
#define TASO_CORE_RULE_SEXPR_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/rules.pb.h"

namespace taso {

absl::StatusOr<std::string> RuleToSexpr(const rules::Rule& rule);

// Parses rules, one per line (blank lines and lines starting with ';' or '#'
// are skipped), into rules with status CANDIDATE and outputs paired in
// order. Errors name the line and what is wrong; nothing is returned then.
absl::StatusOr<std::vector<rules::Rule>> RulesFromSexpr(const std::string& text);

}  // namespace taso

#endif  // TASO_CORE_RULE_SEXPR_H_
