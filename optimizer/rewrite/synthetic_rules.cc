#include "optimizer/rewrite/synthetic_rules.h"

#include <random>

#include "absl/strings/str_cat.h"

namespace taso::optimizer {
namespace {

TensorType Square() { return TensorType::RowMajor(DType::kFloat32, {4, 4}); }

const OpKind kKinds[] = {OpKind::kRelu, OpKind::kTanh, OpKind::kSigmoid,
                         OpKind::kEwAdd, OpKind::kEwMul, OpKind::kMatMul};

bool Unary(OpKind k) { return k == OpKind::kRelu || k == OpKind::kTanh || k == OpKind::kSigmoid; }

// A chain of `ops` operators from `start`; binary operators read an earlier
// value or a new variable as their second operand.
TensorRef Chain(Graph& g, TensorRef start, int ops, std::mt19937& rng, int& variables) {
  std::vector<TensorRef> values = {start};
  for (int i = 0; i < ops; ++i) {
    const OpKind kind = kKinds[rng() % 6];
    std::vector<TensorRef> inputs = {values.back()};
    if (!Unary(kind)) {
      inputs.push_back(rng() % 2 == 0 ? values[rng() % values.size()]
                                      : g.AddInput(absl::StrCat("v", variables++), Square()));
    }
    values.push_back(*g.AddOp1(kind, {}, inputs));
  }
  return values.back();
}

}  // namespace

std::vector<RewriteRule> SyntheticRules(int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<RewriteRule> rules;
  rules.reserve(count);
  for (int i = 0; i < count; ++i) {
    RewriteRule r;
    r.name = absl::StrCat("synthetic", i);
    int variables = 1;
    Graph lhs;
    const TensorRef x = lhs.AddInput("v0", Square());
    const bool two_outputs = i % 20 == 0;
    const int ops = 1 + static_cast<int>(rng() % (two_outputs ? 2 : 4));
    lhs.AddOutput("a", Chain(lhs, x, ops, rng, variables));
    if (two_outputs) lhs.AddOutput("b", Chain(lhs, x, ops, rng, variables));
    r.SetSides(lhs, lhs);
    rules.push_back(std::move(r));
  }
  return rules;
}

Graph SyntheticRulesHost() {
  Graph g;
  const TensorRef x = g.AddInput("x", Square());
  const TensorRef w1 = g.AddWeight("w1", Square()), w2 = g.AddWeight("w2", Square());
  const TensorRef a = *g.AddOp1(OpKind::kMatMul, {}, {x, w1});
  const TensorRef b = *g.AddOp1(OpKind::kMatMul, {}, {x, w2});
  const TensorRef s = *g.AddOp1(OpKind::kEwAdd, {}, {*g.AddOp1(OpKind::kRelu, {}, {a}), b});
  g.AddOutput("y", *g.AddOp1(OpKind::kRelu, {}, {*g.AddOp1(OpKind::kEwAdd, {}, {s, x})}));
  g.AddOutput("z", *g.AddOp1(OpKind::kMatMul, {}, {s, w1}));
  return g;
}

}  // namespace taso::optimizer
