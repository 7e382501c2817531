#include "verifier/renaming_proof.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/graph_builder.h"
#include "testing/op_params.h"
#include "verifier/candidate.h"
#include "verifier/precheck.h"
#include "verifier/prover_fixture.h"

namespace taso::verifier {
namespace {

using ::taso::testing::Axis;
using ::testing::HasSubstr;
using G = ::taso::testing::GraphBuilder;
using records::RenamingOutcome;

rules::Rule RuleOf(const G& a, const G& b, const std::string& id = "") {
  CandidateGraphs graphs{a.graph, b.graph, {}};
  for (size_t i = 0; i < a.graph.outputs().size(); ++i) graphs.outputs.emplace_back(i, i);
  rules::Rule r = RuleFromGraphs(graphs);
  r.set_id(id);
  return r;
}

// conv(x,w) + conv(y,w) = conv(cat_1(x,y), cat_1(w,w)): its proof leaves the
// concats' equal halves open as one fact, so the conditions carry a fact
// variable. `weights_first` builds the target's nodes in another order, so
// node ids differ between renamings.
rules::Rule ChannelConcat(const std::string& x, const std::string& y, const std::string& w, bool reversed,
                          bool weights_first = false) {
  G a, b;
  auto i1 = a.In(x, {2, 4, 5, 5}), i2 = a.In(y, {2, 4, 5, 5});
  auto v = a.W(w, {4, 4, 3, 3});
  a.Out(a.Op(OpKind::kEwAdd, {a.Op(OpKind::kConv2D, {i1, v}, OpParams{}), a.Op(OpKind::kConv2D, {i2, v}, OpParams{})}));
  auto v2 = b.W(w, {4, 4, 3, 3});
  auto j2 = b.In(y, {2, 4, 5, 5}), j1 = b.In(x, {2, 4, 5, 5});
  TensorRef weights, inputs;
  if (weights_first) {
    weights = b.Op(OpKind::kConcat, {v2, v2}, Axis(1));
    inputs = b.Op(OpKind::kConcat, {j1, j2}, Axis(1));
  } else {
    inputs = b.Op(OpKind::kConcat, {j1, j2}, Axis(1));
    weights = b.Op(OpKind::kConcat, {v2, v2}, Axis(1));
  }
  b.Out(b.Op(OpKind::kConv2D, {inputs, weights}, OpParams{}));
  return reversed ? RuleOf(b, a) : RuleOf(a, b);
}

// ChannelConcat("i1", "i2", "w1") with its first input relu(i1) on both
// sides, and, with `pooled`, a second output both sides compute alike.
rules::Rule ChannelConcatOfRelu(bool pooled) {
  G a, b;
  auto i1 = a.In("i1", {2, 4, 5, 5}), i2 = a.In("i2", {2, 4, 5, 5});
  auto v = a.W("w1", {4, 4, 3, 3});
  auto r1 = a.Op(OpKind::kRelu, {i1});
  a.Out(a.Op(OpKind::kEwAdd, {a.Op(OpKind::kConv2D, {r1, v}, OpParams{}), a.Op(OpKind::kConv2D, {i2, v}, OpParams{})}));
  auto j1 = b.In("i1", {2, 4, 5, 5}), j2 = b.In("i2", {2, 4, 5, 5});
  auto v2 = b.W("w1", {4, 4, 3, 3});
  auto s1 = b.Op(OpKind::kRelu, {j1});
  b.Out(b.Op(OpKind::kConv2D, {b.Op(OpKind::kConcat, {s1, j2}, Axis(1)), b.Op(OpKind::kConcat, {v2, v2}, Axis(1))},
             OpParams{}));
  if (pooled) {
    a.Out(a.Op(OpKind::kSigmoid, {a.In("i3", {2, 4})}));
    b.Out(b.Op(OpKind::kSigmoid, {b.In("i3", {2, 4})}));
  }
  return RuleOf(a, b);
}

// ChannelConcat("i1", "i2", "w1") with both sides under a relu.
rules::Rule ChannelConcatUnderRelu() {
  G a, b;
  auto i1 = a.In("i1", {2, 4, 5, 5}), i2 = a.In("i2", {2, 4, 5, 5});
  auto v = a.W("w1", {4, 4, 3, 3});
  a.Out(a.Op(OpKind::kRelu, {a.Op(OpKind::kEwAdd, {a.Op(OpKind::kConv2D, {i1, v}, OpParams{}),
                                                    a.Op(OpKind::kConv2D, {i2, v}, OpParams{})})}));
  auto j1 = b.In("i1", {2, 4, 5, 5}), j2 = b.In("i2", {2, 4, 5, 5});
  auto v2 = b.W("w1", {4, 4, 3, 3});
  b.Out(b.Op(OpKind::kRelu, {b.Op(OpKind::kConv2D, {b.Op(OpKind::kConcat, {j1, j2}, Axis(1)),
                                                     b.Op(OpKind::kConcat, {v2, v2}, Axis(1))},
                                       OpParams{})}));
  return RuleOf(a, b);
}

class RenamingProofTest : public ProverFixture {
 protected:
  rules::Rule Proved(rules::Rule rule, const std::string& id) {
    EXPECT_TRUE(VerifyStandalone(*prover_, "z3", rule).ok());
    EXPECT_EQ(rule.status(), rules::RULE_STATUS_PROVED) << rule.status_detail();
    rule.set_id(id);
    return rule;
  }
};

TEST_F(RenamingProofTest, ARenamingGetsTheProofAndTheConditionsItsOwnProofWouldGive) {
  const rules::Rule proved = Proved(ChannelConcat("i1", "i2", "w1", false), "rA");
  ASSERT_GT(proved.conditions().target_size(), 0);
  struct Case {
    const char* what;
    rules::Rule rule;
  };
  const std::vector<Case> cases = {
      {"renamed", ChannelConcat("i3", "i1", "w2", false)},
      {"renamed, nodes in another order", ChannelConcat("i2", "i3", "w1", false, true)},
      {"read right to left", ChannelConcat("i2", "i1", "w1", true, true)},
  };
  for (const Case& c : cases) {
    records::RenamingVerdict v = ProveRuleAsRenaming(c.rule, proved);
    ASSERT_EQ(v.outcome, RenamingOutcome::kProved) << c.what << ": " << v.why_not;
    EXPECT_EQ(v.rule.status(), rules::RULE_STATUS_PROVED) << c.what;
    EXPECT_THAT(v.rule.status_detail(), HasSubstr("rA")) << c.what;
    EXPECT_EQ(v.rule.proof().axioms_used_size(), proved.proof().axioms_used_size()) << c.what;
    // The conditions a proof of its own records, node for node.
    const rules::Rule own = Proved(c.rule, "own");
    EXPECT_EQ(v.rule.conditions().DebugString(), own.conditions().DebugString()) << c.what;
    // And the store's check of a claimed proof accepts it as claimed.
    rules::Rule claimed = v.rule;
    ASSERT_TRUE(VerifyClaim(*prover_, "z3", claimed).ok());
    EXPECT_EQ(claimed.status(), rules::RULE_STATUS_PROVED) << c.what;
    EXPECT_EQ(claimed.conditions().DebugString(), v.rule.conditions().DebugString()) << c.what;
  }
}

TEST_F(RenamingProofTest, AnInstanceIsProvedByTheGeneralRulesProof) {
  const rules::Rule proved = Proved(ChannelConcat("i1", "i2", "w1", false), "rA");
  // One input twice, read either way: rA with its inputs merged.
  for (bool reversed : {false, true}) {
    records::RenamingVerdict v = ProveRuleAsRenaming(ChannelConcat("i3", "i3", "w2", reversed), proved);
    ASSERT_EQ(v.outcome, RenamingOutcome::kProved) << v.why_not;
    EXPECT_EQ(v.rule.status(), rules::RULE_STATUS_PROVED);
    EXPECT_THAT(v.rule.status_detail(), HasSubstr("an instance of rA"));
    EXPECT_EQ(v.rule.proof().axioms_used_size(), proved.proof().axioms_used_size());
    // The store's check of a claimed proof accepts it as claimed.
    rules::Rule claimed = v.rule;
    ASSERT_TRUE(VerifyClaim(*prover_, "z3", claimed).ok());
    EXPECT_EQ(claimed.status(), rules::RULE_STATUS_PROVED);
    EXPECT_EQ(claimed.conditions().DebugString(), v.rule.conditions().DebugString());
  }
  // The general rule is no instance of its instance.
  const rules::Rule merged = Proved(ChannelConcat("i1", "i1", "w1", false), "rM");
  records::RenamingVerdict back = ProveRuleAsRenaming(ChannelConcat("i1", "i2", "w1", false), merged);
  EXPECT_EQ(back.outcome, RenamingOutcome::kNotDerived);
  EXPECT_THAT(back.why_not, HasSubstr("instance"));
  EXPECT_EQ(back.rule.status(), rules::RULE_STATUS_CANDIDATE);
}

TEST_F(RenamingProofTest, AnotherLawIsNotDerived) {
  const rules::Rule proved = Proved(ChannelConcat("i1", "i2", "w1", false), "rA");
  G a, b;
  auto x = a.In("i1", {2, 4}), y = a.In("i2", {2, 4});
  a.Out(a.Op(OpKind::kEwAdd, {x, y}));
  auto u = b.In("i1", {2, 4}), v = b.In("i2", {2, 4});
  b.Out(b.Op(OpKind::kEwAdd, {v, u}));
  records::RenamingVerdict other = ProveRuleAsRenaming(RuleOf(a, b), proved);
  EXPECT_EQ(other.outcome, RenamingOutcome::kNotDerived);
  EXPECT_FALSE(other.rule.has_conditions());
}

TEST_F(RenamingProofTest, ConditionsThatDoNotCarryOverDeriveNothing) {
  rules::Rule proved = Proved(ChannelConcat("i1", "i2", "w1", false), "rA");
  // A stored rule whose conditions lost a node: nothing to carry to it.
  proved.mutable_conditions()->mutable_target()->RemoveLast();
  records::RenamingVerdict v = ProveRuleAsRenaming(ChannelConcat("i3", "i1", "w2", false), proved);
  EXPECT_EQ(v.outcome, RenamingOutcome::kNotDerived);
  EXPECT_THAT(v.why_not, HasSubstr("conditions"));
  EXPECT_NE(v.rule.status(), rules::RULE_STATUS_PROVED);
  // Conditions naming a signature the rule's shapes do not have.
  rules::Rule edited = Proved(ChannelConcat("i1", "i2", "w1", false), "rA");
  edited.mutable_conditions()->mutable_source(0)->mutable_signatures(0)->set_params(0, 7);
  records::RenamingVerdict w = ProveRuleAsRenaming(ChannelConcat("i3", "i1", "w2", false), edited);
  EXPECT_EQ(w.outcome, RenamingOutcome::kNotDerived);
  EXPECT_NE(w.rule.status(), rules::RULE_STATUS_PROVED);
}

TEST_F(RenamingProofTest, AnUnprovedRuleGivesItsVerdictWithoutAProof) {
  rules::Rule timed_out = ChannelConcat("i1", "i2", "w1", false, false);
  timed_out.set_id("rT");
  timed_out.set_status(rules::RULE_STATUS_TIMEOUT);
  timed_out.set_status_detail("z3 gave up after 10 s");
  records::RenamingVerdict v = ProveRuleAsRenaming(ChannelConcat("i3", "i1", "w2", false), timed_out);
  EXPECT_EQ(v.outcome, RenamingOutcome::kSameVerdict);
  EXPECT_EQ(v.rule.status(), rules::RULE_STATUS_TIMEOUT);
  EXPECT_THAT(v.rule.status_detail(), HasSubstr("rT"));
  EXPECT_FALSE(v.rule.has_conditions());
  EXPECT_EQ(v.rule.proof().axioms_used_size(), 0);
  // An instance of it may still hold, or be proved alone: not derived.
  records::RenamingVerdict instance = ProveRuleAsRenaming(ChannelConcat("i3", "i3", "w2", false), timed_out);
  EXPECT_EQ(instance.outcome, RenamingOutcome::kNotDerived);
  EXPECT_THAT(instance.why_not, HasSubstr("not proved"));
  rules::Rule candidate = timed_out;
  candidate.set_status(rules::RULE_STATUS_CANDIDATE);
  EXPECT_EQ(ProveRuleAsRenaming(ChannelConcat("i3", "i1", "w2", false), candidate).outcome,
            RenamingOutcome::kNotDerived);
}

TEST_F(RenamingProofTest, ARuleFollowingFromASmallerOneIsProvedByItsProof) {
  const rules::Rule smaller = Proved(ChannelConcat("i1", "i2", "w1", false), "rA");
  struct Case {
    const char* what;
    rules::Rule rule;
  };
  const std::vector<Case> cases = {
      {"an operator both sides compute on the same variables", ChannelConcatOfRelu(false)},
      {"and an output both sides compute alike", ChannelConcatOfRelu(true)},
      {"an operator both sides end in", ChannelConcatUnderRelu()},
  };
  for (const Case& c : cases) {
    // Not a renaming of rA: its own form is larger.
    EXPECT_EQ(ProveRuleAsRenaming(c.rule, smaller).outcome, RenamingOutcome::kNotDerived) << c.what;
    records::RenamingVerdict v = ProveRuleFromSmaller(c.rule, smaller);
    ASSERT_EQ(v.outcome, RenamingOutcome::kProved) << c.what << ": " << v.why_not;
    EXPECT_EQ(v.rule.status(), rules::RULE_STATUS_PROVED) << c.what;
    EXPECT_THAT(v.rule.status_detail(), HasSubstr("following from the smaller rA")) << c.what;
    EXPECT_EQ(v.rule.proof().axioms_used_size(), smaller.proof().axioms_used_size()) << c.what;
    // Every operator is named: rA's carried over (the concats' open fact
    // with them), the others on their own shapes.
    const rules::Rule own = Proved(c.rule, "own");
    EXPECT_EQ(v.rule.conditions().source_size(), own.conditions().source_size()) << c.what;
    EXPECT_EQ(v.rule.conditions().target_size(), own.conditions().target_size()) << c.what;
    EXPECT_EQ(v.rule.conditions().DebugString(), own.conditions().DebugString()) << c.what;
    // The store's check of a claimed proof accepts it as claimed.
    rules::Rule claimed = v.rule;
    ASSERT_TRUE(VerifyClaim(*prover_, "z3", claimed).ok());
    EXPECT_EQ(claimed.status(), rules::RULE_STATUS_PROVED) << c.what;
  }
}

TEST_F(RenamingProofTest, NothingFollowsFromAnUnprovedOrUnrelatedSmallerRule) {
  rules::Rule timed_out = ChannelConcat("i1", "i2", "w1", false);
  timed_out.set_id("rT");
  timed_out.set_status(rules::RULE_STATUS_TIMEOUT);
  records::RenamingVerdict v = ProveRuleFromSmaller(ChannelConcatOfRelu(false), timed_out);
  EXPECT_EQ(v.outcome, RenamingOutcome::kNotDerived);
  EXPECT_THAT(v.why_not, HasSubstr("not proved"));
  EXPECT_NE(v.rule.status(), rules::RULE_STATUS_PROVED);
  // x + y = y + x is no reduction of the rule.
  G a, b;
  auto x = a.In("i1", {2, 4}), y = a.In("i2", {2, 4});
  a.Out(a.Op(OpKind::kEwAdd, {x, y}));
  auto u = b.In("i1", {2, 4}), w = b.In("i2", {2, 4});
  b.Out(b.Op(OpKind::kEwAdd, {w, u}));
  const rules::Rule commute = Proved(RuleOf(a, b), "rC");
  records::RenamingVerdict unrelated = ProveRuleFromSmaller(ChannelConcatOfRelu(false), commute);
  EXPECT_EQ(unrelated.outcome, RenamingOutcome::kNotDerived);
  EXPECT_THAT(unrelated.why_not, HasSubstr("no smaller pair it follows from"));
  EXPECT_FALSE(unrelated.rule.has_conditions());
}

}  // namespace
}  // namespace taso::verifier
