#include "verifier/pruning.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/graph_builder.h"
#include "verifier/candidate.h"
#include "verifier/random_rules.h"

namespace taso::verifier {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Builds one side of a rule from a tiny expression language over named
// variables: each call returns the tensor.
class Side : public ::taso::testing::GraphBuilder {
 public:
  TensorRef V(const std::string& name) {
    auto it = vars_.find(name);
    if (it != vars_.end()) return it->second;
    static const std::map<char, std::vector<int64_t>> shapes = {
        {'x', {2, 4}}, {'w', {4, 4}}, {'i', {2, 4, 5, 5}}, {'k', {4, 4, 3, 3}}, {'d', {4, 1, 3, 3}}};
    TensorRef t = name[0] == 'w' || name[0] == 'k' || name[0] == 'd' ? W(name, shapes.at(name[0])) : In(name, shapes.at(name[0]));
    vars_[name] = t;
    return t;
  }
  TensorRef Add(TensorRef a, TensorRef b) { return Op(OpKind::kEwAdd, {a, b}); }
  TensorRef Relu(TensorRef a) { return Op(OpKind::kRelu, {a}); }
  // Outputs named o0, o1, ...
  Side& Out(TensorRef t) {
    graph.AddOutput("o" + std::to_string(graph.outputs().size()), t);
    return *this;
  }

 private:
  std::map<std::string, TensorRef> vars_;
};

rules::Rule MakeRule(const std::string& id, const Side& a, const Side& b,
                     rules::RuleStatus status = rules::RULE_STATUS_PROVED) {
  CandidateGraphs graphs{a.graph, b.graph, {}};
  for (size_t i = 0; i < a.graph.outputs().size(); ++i) graphs.outputs.emplace_back(i, i);
  rules::Rule r = RuleFromGraphs(graphs);
  r.set_id(id);
  r.set_status(status);
  return r;
}

// x + (y + z) = (x + y) + z over the named variables.
rules::Rule Assoc(const std::string& id, const std::string& x, const std::string& y, const std::string& z,
                  rules::RuleStatus status = rules::RULE_STATUS_PROVED) {
  Side a, b;
  a.Out(a.Add(a.V(x), a.Add(a.V(y), a.V(z))));
  b.Out(b.Add(b.Add(b.V(x), b.V(y)), b.V(z)));
  return MakeRule(id, a, b, status);
}

TEST(Pruning, RenamingsInstancesAndReversalsOfAProvedRule) {
  std::vector<rules::Rule> rules = {Assoc("rA", "x1", "x2", "x3"), Assoc("rB", "x2", "x1", "x3"),
                                    Assoc("rC", "x1", "x1", "x2")};
  {
    Side a, b;  // rA read right to left
    a.Out(a.Add(a.Add(a.V("x1"), a.V("x2")), a.V("x3")));
    b.Out(b.Add(b.V("x1"), b.Add(b.V("x2"), b.V("x3"))));
    rules.push_back(MakeRule("rD", a, b));
  }
  ReductionTable t = PruneRules(rules);
  EXPECT_EQ(rules[0].status(), rules::RULE_STATUS_PROVED);
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(rules[i].status(), rules::RULE_STATUS_PRUNED) << rules[i].id();
    EXPECT_THAT(rules[i].status_detail(), HasSubstr("rA")) << rules[i].id();
  }
  EXPECT_EQ(t.proved, 4);
  EXPECT_EQ(t.after_renaming, 1);
  EXPECT_EQ(t.after_common_subgraph, 1);
}

TEST(Pruning, CommonSubgraphAndSupergraphFollowFromTheSmallerRule) {
  std::vector<rules::Rule> rules = {Assoc("rA", "x1", "x2", "x3")};
  {
    Side a, b;  // relu(x3) is an operator on variables both sides compute
    a.Out(a.Add(a.V("x1"), a.Add(a.V("x2"), a.Relu(a.V("x3")))));
    b.Out(b.Add(b.Add(b.V("x1"), b.V("x2")), b.Relu(b.V("x3"))));
    rules.push_back(MakeRule("rSub", a, b));
  }
  {
    Side a, b;  // the same last operator over the two sides of rA
    a.Out(a.Relu(a.Add(a.V("x1"), a.Add(a.V("x2"), a.V("x3")))));
    b.Out(b.Relu(b.Add(b.Add(b.V("x1"), b.V("x2")), b.V("x3"))));
    rules.push_back(MakeRule("rSuper", a, b));
  }
  {
    Side a, b;  // rA beside an output both sides share
    a.Out(a.Add(a.V("x1"), a.Add(a.V("x2"), a.V("x3")))).Out(a.Relu(a.V("w1")));
    b.Out(b.Add(b.Add(b.V("x1"), b.V("x2")), b.V("x3"))).Out(b.Relu(b.V("w1")));
    rules.push_back(MakeRule("rBeside", a, b));
  }
  ReductionTable t = PruneRules(rules);
  EXPECT_EQ(rules[0].status(), rules::RULE_STATUS_PROVED);
  EXPECT_THAT(rules[1].status_detail(), StartsWith("common subgraph"));
  EXPECT_THAT(rules[2].status_detail(), StartsWith("common supergraph"));
  EXPECT_THAT(rules[3].status_detail(), StartsWith("common subgraph"));
  EXPECT_EQ(t.pruned_subgraph, 2);
  EXPECT_EQ(t.pruned_supergraph, 1);
  EXPECT_EQ(t.after_common_subgraph, 1);
}

TEST(Pruning, OnlyAProvedGeneralRulePrunes) {
  std::vector<rules::Rule> rules = {Assoc("rA", "x1", "x2", "x3", rules::RULE_STATUS_UNKNOWN)};
  Side a, b;
  a.Out(a.Relu(a.Add(a.V("x1"), a.Add(a.V("x2"), a.V("x3")))));
  b.Out(b.Relu(b.Add(b.Add(b.V("x1"), b.V("x2")), b.V("x3"))));
  rules.push_back(MakeRule("rSuper", a, b));
  ReductionTable t = PruneRules(rules);
  EXPECT_EQ(rules[0].status(), rules::RULE_STATUS_UNKNOWN);
  EXPECT_EQ(rules[1].status(), rules::RULE_STATUS_PROVED);
  EXPECT_EQ(t.proved, 1);
  EXPECT_EQ(t.after_common_subgraph, 1);
}

TEST(Pruning, GroupedConvolutionIsNotAnInstanceOfADenseOne) {
  auto fusion = [](const std::string& id, const std::string& weight) {
    Side a, b;
    OpParams none, relu;
    relu.activation = Activation::kRelu;
    a.Out(a.Relu(a.Op(OpKind::kConv2D, {a.V("i1"), a.V(weight)}, none)));
    b.Out(b.Op(OpKind::kConv2D, {b.V("i1"), b.V(weight)}, relu));
    return MakeRule(id, a, b);
  };
  std::vector<rules::Rule> rules = {fusion("rDense", "k1"), fusion("rDepthwise", "d1"), fusion("rDense2", "k2")};
  PruneRules(rules);
  EXPECT_EQ(rules[0].status(), rules::RULE_STATUS_PROVED);
  EXPECT_EQ(rules[1].status(), rules::RULE_STATUS_PROVED);  // groups 4: a different law to Z3
  EXPECT_EQ(rules[2].status(), rules::RULE_STATUS_PRUNED);
}

TEST(Candidate, DirectionHintPointsToTheSmallerSide) {
  Side a, b;
  OpParams none, relu;
  relu.activation = Activation::kRelu;
  a.Out(a.Relu(a.Op(OpKind::kConv2D, {a.V("i1"), a.V("k1")}, none)));
  b.Out(b.Op(OpKind::kConv2D, {b.V("i1"), b.V("k1")}, relu));
  EXPECT_EQ(MakeRule("r", a, b).direction(), rules::DIRECTION_HINT_FORWARD);
  EXPECT_EQ(MakeRule("r", b, a).direction(), rules::DIRECTION_HINT_BACKWARD);
  EXPECT_EQ(Assoc("r", "x1", "x2", "x3").direction(), rules::DIRECTION_HINT_NONE);
}

TEST(Pruning, LayoutRulesAreKept) {
  Side a, b;
  OpParams copy, view;
  copy.perm = view.perm = {1, 0};
  view.shuffle = false;
  a.Out(a.Op(OpKind::kMatMul, {a.V("x1"), a.Op(OpKind::kTranspose, {a.V("w1")}, copy)}));
  b.Out(b.Op(OpKind::kMatMul, {b.V("x1"), b.Op(OpKind::kTranspose, {b.V("w1")}, view)}));
  std::vector<rules::Rule> rules = {MakeRule("rLayout", a, b)};
  PruneRules(rules);
  EXPECT_EQ(rules[0].status(), rules::RULE_STATUS_PROVED);
  EXPECT_FALSE(RuleRenamingKey(rules[0]).empty());
}

// The survey's variable groups (core/rule_form.h VariableGroups, which
// replaced writing each rule's form in pruning's first pass) are the
// form's, either way round, on rules full of shared and merged variables.
TEST(PruneSurveyTest, VariableGroupsAreTheFormsOnRandomRules) {
  int compared = 0;
  for (const rules::Rule& rule : RandomRules(11).Make(500)) {
    const auto d = DecodeRule(rule);
    if (!d) continue;
    const PairView p{&d->source, d->source_roots, {}, &d->target, d->target_roots, {}};
    EXPECT_EQ(VariableGroups(p), MakeForm(p).groups) << rule.id();
    EXPECT_EQ(VariableGroups(p.Reversed()), MakeForm(p.Reversed()).groups) << rule.id();
    ++compared;
  }
  EXPECT_GT(compared, 400);
}

}  // namespace
}  // namespace taso::verifier
