#include "optimizer/rewrite/reachable_rules.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "optimizer/rewrite/test_util.h"

namespace taso::optimizer {
namespace {

using ::taso::optimizer::testing::F32;

KindSet Bit(OpKind kind) { return KindSet{1} << static_cast<int>(kind); }

// One 4-D input through `outer(inner(x))` (or just `inner(x)`); a binary kind
// reads x twice. Only kinds matter here, not what the rewrites compute.
Graph Chain(OpKind inner, std::optional<OpKind> outer = std::nullopt) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 4, 8, 8}));
  auto apply = [&](OpKind kind, TensorRef in) {
    const bool binary = kind == OpKind::kEwAdd || kind == OpKind::kEwMul;
    OpParams params;
    params.kernel_h = params.kernel_w = 2;  // read by pools only
    auto out = g.AddOp1(kind, params, binary ? std::vector<TensorRef>{in, in} : std::vector<TensorRef>{in});
    EXPECT_TRUE(out.ok()) << out.status();
    return *out;
  };
  TensorRef y = apply(inner, x);
  if (outer) y = apply(*outer, y);
  g.AddOutput("y", y);
  return g;
}

RewriteRule Rewrite(const std::string& name, Graph lhs, Graph rhs) {
  return RewriteFromSides(name, std::move(lhs), std::move(rhs), {}, false);
}

TEST(ReachableRulesTest, KindsOfAGraphAreItsOperatorsOnly) {
  EXPECT_EQ(OperatorKinds(Chain(OpKind::kRelu, OpKind::kTanh)), Bit(OpKind::kRelu) | Bit(OpKind::kTanh));
}

TEST(ReachableRulesTest, KeepsWhatTheGraphOrARewriteChainCanProduce) {
  std::vector<RewriteRule> rules;
  rules.push_back(Rewrite("mul-to-add", Chain(OpKind::kEwMul), Chain(OpKind::kEwAdd)));          // 0: after 4
  rules.push_back(Rewrite("relu-to-tanh", Chain(OpKind::kRelu), Chain(OpKind::kTanh)));          // 1: the graph's
  rules.push_back(Rewrite("tanh-to-sigmoid", Chain(OpKind::kTanh), Chain(OpKind::kSigmoid)));    // 2: after 1
  rules.push_back(Rewrite("pool", Chain(OpKind::kPoolMax), Chain(OpKind::kRelu)));               // 3: never
  rules.push_back(Rewrite("sigmoid-to-mul", Chain(OpKind::kSigmoid), Chain(OpKind::kEwMul)));    // 4: after 2
  rules.push_back(Rewrite("relu-pool", Chain(OpKind::kRelu, OpKind::kPoolMax), Chain(OpKind::kRelu)));  // 5: never
  std::vector<const RewriteRule*> given;
  for (const RewriteRule& r : rules) given.push_back(&r);

  KindSet reachable = 0;
  EXPECT_EQ(ReachableRewrites(Chain(OpKind::kRelu), given, &reachable), (std::vector<int>{0, 1, 2, 4}));
  EXPECT_EQ(reachable, Bit(OpKind::kRelu) | Bit(OpKind::kTanh) | Bit(OpKind::kSigmoid) | Bit(OpKind::kEwMul) |
                           Bit(OpKind::kEwAdd));
  // A graph with a pool reaches everything.
  EXPECT_EQ(ReachableRewrites(Chain(OpKind::kPoolMax), given).size(), rules.size());
  // A graph of additions reaches nothing: no rewrite starts from ewadd.
  EXPECT_TRUE(ReachableRewrites(Chain(OpKind::kEwAdd), given).empty());
}

}  // namespace
}  // namespace taso::optimizer
