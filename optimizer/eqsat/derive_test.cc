#include "optimizer/eqsat/derive.h"

#include "core/graph_proto.h"
#include "core/rule_sexpr.h"
#include "gtest/gtest.h"
#include "optimizer/rewrite/test_util.h"

namespace taso::optimizer {
namespace {

using testing::BothWays;
using testing::MakeRule;

// A rule written in our syntax, as read (status candidate, no conditions).
rules::Rule Read(const std::string& sexpr) {
  auto rules = RulesFromSexpr(sexpr);
  EXPECT_TRUE(rules.ok()) << rules.status();
  EXPECT_EQ(rules->size(), 1u);
  return rules->empty() ? rules::Rule{} : (*rules)[0];
}

// The rule proved, with the side conditions a verifier records.
rules::Rule Proved(const std::string& id, const std::string& sexpr) {
  const rules::Rule r = Read(sexpr);
  return MakeRule(id, *GraphFromProto(r.source()), *GraphFromProto(r.target()));
}

std::vector<RewriteRule> Rewrites(const std::vector<rules::Rule>& rules) {
  std::vector<RewriteRule> out;
  for (const rules::Rule& r : rules) {
    for (RewriteRule& w : BothWays(r)) out.push_back(std::move(w));
  }
  return out;
}

const char kFuse[] = "(relu (conv2d 1 1 0 0 ?x@1_4_5_5 ?w@4_4_3_3))=>(conv2d 1 1 0 2 ?x@1_4_5_5 ?w@4_4_3_3)";
const char kDistribute[] =
    "(ewmul ?a@1_4_5_5 (ewadd ?b@1_4_5_5 ?c@1_4_5_5))=>(ewadd (ewmul ?a@1_4_5_5 ?b@1_4_5_5) (ewmul ?a@1_4_5_5 ?c@1_4_5_5))";
// Needs both: fuse the relu, then distribute the product over the sum.
const char kComposed[] =
    "(ewmul ?y@1_4_5_5 (ewadd (relu (conv2d 1 1 0 0 ?x@1_4_5_5 ?w@4_4_3_3)) ?z@1_4_5_5))=>"
    "(ewadd (ewmul ?y@1_4_5_5 (conv2d 1 1 0 2 ?x@1_4_5_5 ?w@4_4_3_3)) (ewmul ?y@1_4_5_5 ?z@1_4_5_5))";
// True, but neither rule says anything about matmul.
const char kUnrelated[] =
    "(matmul 0 ?x@2_4 (ewadd ?w1@4_4 ?w2@4_4))=>(ewadd (matmul 0 ?x@2_4 ?w1@4_4) (matmul 0 ?x@2_4 ?w2@4_4))";

TEST(DeriveTest, TwoRulesChainedDeriveTheirComposition) {
  const auto rewrites = Rewrites({Proved("fuse", kFuse), Proved("distribute", kDistribute)});
  for (DeriveMode mode : {DeriveMode::kLhs, DeriveMode::kLhsAndRhs}) {
    DeriveOptions options;
    options.mode = mode;
    auto d = DeriveRule(Read(kComposed), rewrites, options);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->outcome, DeriveOutcome::kDerived) << d->stop_detail;
    EXPECT_EQ(d->stop, SearchStop::kGoalReached);
    EXPECT_GE(d->iterations, 1);
  }
}

TEST(DeriveTest, OneOfTheTwoAloneSaturatesWithoutDerivingIt) {
  for (const char* only : {kFuse, kDistribute}) {
    auto d = DeriveRule(Read(kComposed), Rewrites({Proved("only", only)}));
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->outcome, DeriveOutcome::kSaturated) << only << ": " << d->stop_detail;
  }
}

TEST(DeriveTest, AnUnrelatedRuleIsNotDerived) {
  auto d = DeriveRule(Read(kUnrelated), Rewrites({Proved("fuse", kFuse), Proved("distribute", kDistribute)}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->outcome, DeriveOutcome::kSaturated);
  EXPECT_EQ(d->stop, SearchStop::kSaturated);
}

TEST(DeriveTest, ALimitHitFirstIsUndecidedNotSaturated) {
  DeriveOptions options;
  options.iteration_limit = 0;
  auto d = DeriveRule(Read(kComposed), Rewrites({Proved("fuse", kFuse), Proved("distribute", kDistribute)}), options);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->outcome, DeriveOutcome::kLimit);
  EXPECT_EQ(d->stop, SearchStop::kIterationLimit);
}

TEST(DeriveTest, ARuleWhoseSourceIsAVariableStartsFromItsTarget) {
  // a => split_0(split(concat(a, b))): a bare variable has nothing to
  // rewrite, so the derivation starts from the target side.
  const char kSplitConcat[] = "(split_0 (split 1 (concat 1 2 ?a@2_4 ?b@2_4)))=>?a@2_4";
  rules::Rule backwards = Read(kSplitConcat);
  std::swap(*backwards.mutable_source(), *backwards.mutable_target());
  auto d = DeriveRule(backwards, Rewrites({Proved("split", kSplitConcat)}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->outcome, DeriveOutcome::kDerived) << d->stop_detail;
}

TEST(DeriveTest, WeightVariablesBindTheRulesInputsOnlyByTheEquations) {
  // Ours distributes a matmul over a sum of weights; the rule to derive sums
  // inputs, which the optimizer would not let a weight variable bind.
  const auto rewrites = Rewrites({Proved("distribute", kUnrelated)});
  const rules::Rule of_inputs =
      Read("(matmul 0 ?x@2_4 (ewadd ?y@4_4 ?z@4_4))=>(ewadd (matmul 0 ?x@2_4 ?y@4_4) (matmul 0 ?x@2_4 ?z@4_4))");
  auto equational = DeriveRule(of_inputs, rewrites);
  ASSERT_TRUE(equational.ok()) << equational.status();
  EXPECT_EQ(equational->outcome, DeriveOutcome::kDerived) << equational->stop_detail;
  DeriveOptions as_declared;
  as_declared.kinds_as_declared = true;
  auto optimizer_view = DeriveRule(of_inputs, rewrites, as_declared);
  ASSERT_TRUE(optimizer_view.ok()) << optimizer_view.status();
  EXPECT_EQ(optimizer_view->outcome, DeriveOutcome::kSaturated);
}

TEST(DeriveTest, SwappedOperandsOfSumsAndProductsNeedNoLaw) {
  // The e-graph holds x+y and y+x as one e-node (egraph.h), so a rule that
  // differs from another only in operand order derives without a rewrite.
  const rules::Rule swapped =
      Read("(ewmul (ewadd ?a@2_4 ?b@2_4) ?c@2_4)=>(ewmul ?c@2_4 (ewadd ?b@2_4 ?a@2_4))");
  auto d = DeriveRule(swapped, Rewrites({Proved("fuse", kFuse)}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->outcome, DeriveOutcome::kDerived) << d->stop_detail;
  // A concat's operands are ordered.
  const rules::Rule concat = Read("(concat 0 2 ?a@2_4 ?b@2_4)=>(concat 0 2 ?b@2_4 ?a@2_4)");
  auto not_derived = DeriveRule(concat, Rewrites({Proved("fuse", kFuse)}));
  ASSERT_TRUE(not_derived.ok()) << not_derived.status();
  EXPECT_EQ(not_derived->outcome, DeriveOutcome::kSaturated);
}

}  // namespace
}  // namespace taso::optimizer
