// Element-wise sums and products match in either operand order. The
// generator enumerates their operands in one order, so its rules write a
// variable before an operator's result (`s * (x + y)`), while exporters write
// either (`(x + y) * s`); both searches must find the rule in both.
#include <algorithm>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "optimizer/backtrack/backtrack.h"
#include "optimizer/eqsat/egraph.h"
#include "optimizer/eqsat/ematch.h"
#include "optimizer/eqsat/eqsat.h"
#include "optimizer/rewrite/apply.h"
#include "optimizer/rewrite/match.h"
#include "optimizer/rewrite/rewrite_rule.h"
#include "optimizer/rewrite/test_util.h"

namespace taso::optimizer {
namespace {

using testing::BothWays;
using testing::ExpectEquivalent;
using testing::F32;
using testing::Forward;
using testing::MakeRule;

// s * (x + y) = s*x + s*y, as the generator writes it: each variable first.
rules::Rule Distributes() {
  Graph s, t;
  TensorRef ss = s.AddInput("s", F32({2, 3})), sx = s.AddInput("x", F32({2, 3})), sy = s.AddInput("y", F32({2, 3}));
  s.AddOutput("out", *s.AddOp1(OpKind::kEwMul, {}, {ss, *s.AddOp1(OpKind::kEwAdd, {}, {sx, sy})}));
  TensorRef ts = t.AddInput("s", F32({2, 3})), tx = t.AddInput("x", F32({2, 3})), ty = t.AddInput("y", F32({2, 3}));
  t.AddOutput("out", *t.AddOp1(OpKind::kEwAdd, {}, {*t.AddOp1(OpKind::kEwMul, {}, {ts, tx}),
                                                    *t.AddOp1(OpKind::kEwMul, {}, {ts, ty})}));
  return MakeRule("distributes", s, t);
}

// (a + b) * c with the operands of the product in `product_first` order: the
// sum first, as exporters write `(a + b) * c`, or second.
Graph SumTimes(bool sum_first) {
  Graph g;
  TensorRef a = g.AddInput("a", F32({2, 3})), b = g.AddInput("b", F32({2, 3})), c = g.AddInput("c", F32({2, 3}));
  TensorRef sum = *g.AddOp1(OpKind::kEwAdd, {}, {a, b});
  g.AddOutput("out", *g.AddOp1(OpKind::kEwMul, {}, sum_first ? std::vector<TensorRef>{sum, c}
                                                              : std::vector<TensorRef>{c, sum}));
  return g;
}

int CountOps(const Graph& g, OpKind kind) {
  return static_cast<int>(std::count_if(g.nodes().begin(), g.nodes().end(), [&](const Node& n) { return n.kind == kind; }));
}

// Matches of `rule`'s left side in the e-graph of `host`.
std::vector<EMatch> EMatchesIn(const RewriteRule& rule, const Graph& host) {
  auto built = EGraphFromGraph(host);
  EXPECT_TRUE(built.ok()) << built.status();
  if (!built.ok()) return {};
  CompiledPattern pattern(rule, built->egraph);
  return FindEMatches(pattern, EMatchIndex(built->egraph), 1000);
}

TEST(CommutativeMatchTest, ARuleMatchesAProductAndASumInEitherOperandOrder) {
  const RewriteRule rule = Forward(Distributes());
  for (const bool sum_first : {false, true}) {
    SCOPED_TRACE(sum_first ? "(a + b) * c" : "c * (a + b)");
    const Graph host = SumTimes(sum_first);
    const std::vector<Match> matches = FindMatches(rule, GraphIndex(host));
    // One match: the sum's own operands read either way bind the same
    // tensors to the rule's x and y the other way round, and add nothing.
    ASSERT_EQ(matches.size(), 1u);
    EXPECT_EQ(matches[0].binding.at("s"), (TensorRef{2, 0})) << "s binds c, wherever it stands";
    auto rewritten = ApplyRewrite(host, rule, matches[0]);
    ASSERT_TRUE(rewritten.ok()) << rewritten.status();
    EXPECT_EQ(CountOps(*rewritten, OpKind::kEwMul), 2);
    ExpectEquivalent(host, *rewritten);
    const std::vector<EMatch> ematches = EMatchesIn(rule, host);
    ASSERT_EQ(ematches.size(), 1u);
  }
}

TEST(CommutativeMatchTest, EqualOperandsMatchOnce) {
  // x * (y + y): the sum's two operands are one tensor.
  Graph host;
  TensorRef x = host.AddInput("x", F32({2, 3})), y = host.AddInput("y", F32({2, 3}));
  host.AddOutput("out", *host.AddOp1(OpKind::kEwMul, {}, {x, *host.AddOp1(OpKind::kEwAdd, {}, {y, y})}));
  const RewriteRule rule = Forward(Distributes());
  EXPECT_EQ(FindMatches(rule, GraphIndex(host)).size(), 1u);
  EXPECT_EQ(EMatchesIn(rule, host).size(), 1u);
}

TEST(CommutativeMatchTest, OnlySumsAndProductsCommute) {
  // concat is ordered: concat(b, a) is not concat(a, b), so a rule written
  // over concat(a, b) of two different producers matches one order only.
  Graph s, t;
  OpParams axis1;
  axis1.axis = 1;
  TensorRef sa = s.AddInput("a", F32({2, 3})), sb = s.AddInput("b", F32({2, 3}));
  s.AddOutput("out", *s.AddOp1(OpKind::kConcat, axis1, {*s.AddOp1(OpKind::kRelu, {}, {sa}),
                                                        *s.AddOp1(OpKind::kTanh, {}, {sb})}));
  TensorRef ta = t.AddInput("a", F32({2, 3})), tb = t.AddInput("b", F32({2, 3}));
  t.AddOutput("out", *t.AddOp1(OpKind::kConcat, axis1, {*t.AddOp1(OpKind::kRelu, {}, {ta}),
                                                        *t.AddOp1(OpKind::kTanh, {}, {tb})}));
  const RewriteRule rule = Forward(MakeRule("same", s, t));
  Graph reversed;
  TensorRef a = reversed.AddInput("a", F32({2, 3})), b = reversed.AddInput("b", F32({2, 3}));
  reversed.AddOutput("out", *reversed.AddOp1(OpKind::kConcat, axis1, {*reversed.AddOp1(OpKind::kTanh, {}, {b}),
                                                                      *reversed.AddOp1(OpKind::kRelu, {}, {a})}));
  EXPECT_TRUE(FindMatches(rule, GraphIndex(reversed)).empty());
  EXPECT_TRUE(EMatchesIn(rule, reversed).empty());
}

class CommutativeSearchTest : public testing::AnalyticProfilerTest {};

TEST_F(CommutativeSearchTest, BothSearchesFactorAProductWrittenInTheOtherOrder) {
  // c*a + b*c: the rule's right side (s*x + s*y) with the shared factor second
  // in one product and first in the other; read backwards, the rule factors
  // it into c * (a + b), one operator fewer.
  Graph host;
  TensorRef a = host.AddInput("a", F32({64, 64})), b = host.AddInput("b", F32({64, 64}));
  TensorRef c = host.AddInput("c", F32({64, 64}));
  host.AddOutput("out", *host.AddOp1(OpKind::kEwAdd, {}, {*host.AddOp1(OpKind::kEwMul, {}, {a, c}),
                                                          *host.AddOp1(OpKind::kEwMul, {}, {b, c})}));
  // The same law at these shapes.
  Graph s, t;
  TensorRef ss = s.AddInput("s", F32({64, 64})), sx = s.AddInput("x", F32({64, 64}));
  TensorRef sy = s.AddInput("y", F32({64, 64}));
  s.AddOutput("out", *s.AddOp1(OpKind::kEwMul, {}, {ss, *s.AddOp1(OpKind::kEwAdd, {}, {sx, sy})}));
  TensorRef ts = t.AddInput("s", F32({64, 64})), tx = t.AddInput("x", F32({64, 64}));
  TensorRef ty = t.AddInput("y", F32({64, 64}));
  t.AddOutput("out", *t.AddOp1(OpKind::kEwAdd, {}, {*t.AddOp1(OpKind::kEwMul, {}, {ts, tx}),
                                                    *t.AddOp1(OpKind::kEwMul, {}, {ts, ty})}));
  const std::vector<RewriteRule> rules = BothWays(MakeRule("distributes", s, t));
  ASSERT_EQ(rules.size(), 2u);
  CostModel cost(client_.get());
  auto backtrack = BacktrackSearch(host, rules, cost);
  ASSERT_TRUE(backtrack.ok()) << backtrack.status();
  EXPECT_EQ(CountOps(backtrack->best, OpKind::kEwMul), 1);
  ExpectEquivalent(host, backtrack->best);
  auto eqsat = EqsatSearch(host, rules, cost);
  ASSERT_TRUE(eqsat.ok()) << eqsat.status();
  EXPECT_EQ(CountOps(eqsat->best, OpKind::kEwMul), 1);
  ExpectEquivalent(host, eqsat->best);
}

}  // namespace
}  // namespace taso::optimizer
