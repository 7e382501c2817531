#include "verifier/random_rules.h"

#include "absl/strings/str_cat.h"
#include "verifier/candidate.h"

namespace taso::verifier {

std::vector<rules::Rule> RandomRules::Make(int count) {
  std::vector<rules::Rule> out;
  out.reserve(count);
  for (int i = 0; i < count; ++i) out.push_back(Next(i));
  return out;
}

rules::Rule RandomRules::Next(int index) {
  Graph a, b;
  std::map<std::string, TensorRef> va, vb;
  const bool square = Pick(2) == 0;
  a.AddOutput("o0", Expr(a, va, 1 + Pick(max_ops_), square));
  b.AddOutput("o0", Expr(b, vb, 1 + Pick(max_ops_), square));
  CandidateGraphs graphs{a, b, {{0, 0}}};
  rules::Rule r = RuleFromGraphs(graphs);
  r.set_id(absl::StrCat("r", 10000 + Pick(90000), "_", index));
  const int s = all_proved_ ? 0 : Pick(10);
  r.set_status(s < 7 ? rules::RULE_STATUS_PROVED : s < 9 ? rules::RULE_STATUS_PRUNED : rules::RULE_STATUS_UNKNOWN);
  if (r.status() == rules::RULE_STATUS_PRUNED) r.set_status_detail("pruned by an earlier pass");
  return r;
}

TensorRef RandomRules::Var(Graph& g, std::map<std::string, TensorRef>& vars, bool square) {
  const std::string name = absl::StrCat(square ? "s" : "x", 1 + Pick(3));
  auto it = vars.find(name);
  if (it != vars.end()) return it->second;
  const TensorType type =
      TensorType::RowMajor(DType::kFloat32, square ? std::vector<int64_t>{4, 4} : std::vector<int64_t>{2, 4});
  return vars[name] = g.AddInput(name, type);
}

TensorRef RandomRules::Expr(Graph& g, std::map<std::string, TensorRef>& vars, int ops, bool square) {
  if (ops == 0) return Var(g, vars, square);
  const int kind = Pick(square ? 4 : 3);
  if (kind == 0) return *g.AddOp1(OpKind::kRelu, OpParams{}, {Expr(g, vars, ops - 1, square)});
  const int left = Pick(ops);
  TensorRef l = Expr(g, vars, left, square);
  TensorRef r = Expr(g, vars, ops - 1 - left, square);
  const OpKind op = kind == 1 ? OpKind::kEwAdd : kind == 2 ? OpKind::kEwMul : OpKind::kMatMul;
  return *g.AddOp1(op, OpParams{}, {l, r});
}

}  // namespace taso::verifier
