#include "core/tensat_rules.h"

#include "core/graph_proto.h"
#include "gtest/gtest.h"

namespace taso {
namespace {

// The dims and kind of a rule's variable.
std::string VariableOf(const rules::Rule& rule, const std::string& name) {
  for (const rules::Variable& v : rule.variables()) {
    if (v.name() != name) continue;
    std::string dims;
    for (int64_t d : v.type().dims()) dims += std::to_string(d) + ",";
    return (v.kind() == ir::OP_WEIGHT ? "weight " : "input ") + dims;
  }
  return "absent";
}

TEST(TensatRulesTest, ShapesAndWeightsAreInferredFromBothSides) {
  // A matmul's right operand is a weight, its left an input; the concat on
  // the right forces the left's shapes to agree with it.
  auto rules = ReadTensatRules(
      "; comment\n"
      "(ewadd (matmul 0 ?input_0 ?input_1) (matmul 0 ?input_2 ?input_3))=>"
      "(matmul 0 (concat 1 2 ?input_0 ?input_2) (concat 0 2 ?input_1 ?input_3))\n"
      "\n"
      "(relu (conv2d 1 1 0 0 ?input_0 ?input_1))=>(conv2d 1 1 0 2 ?input_0 ?input_1)");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 2u);
  const TensatRule& merge = (*rules)[0];
  ASSERT_TRUE(merge.rule.has_value()) << merge.not_expressible;
  EXPECT_EQ(merge.line, 2);
  EXPECT_EQ(VariableOf(*merge.rule, "input_0"), "input 4,4,");
  EXPECT_EQ(VariableOf(*merge.rule, "w_input_1"), "weight 4,4,");
  EXPECT_EQ(VariableOf(*merge.rule, "w_input_3"), "weight 4,4,");
  EXPECT_NE(merge.sexpr.find("(concat 0 2 ?w_input_1@4_4 ?w_input_3@4_4)"), std::string::npos) << merge.sexpr;

  const TensatRule& fuse = (*rules)[1];
  ASSERT_TRUE(fuse.rule.has_value()) << fuse.not_expressible;
  EXPECT_EQ(fuse.line, 4);
  // NCHW input and a 3x3 kernel of one group.
  EXPECT_EQ(VariableOf(*fuse.rule, "input_0"), "input 4,4,4,4,");
  EXPECT_EQ(VariableOf(*fuse.rule, "w_input_1"), "weight 4,4,3,3,");
  auto target = GraphFromProto(fuse.rule->target());
  ASSERT_TRUE(target.ok());
  EXPECT_EQ(target->num_ops(), 1);
}

TEST(TensatRulesTest, ConcatsSumTheirAxisAndNaryConcatsNest) {
  auto rules = ReadTensatRules(
      "(concat3 1 2 ?a ?b ?c)=>(concat 1 2 (concat 1 2 ?a ?b) ?c)\n"
      "(split_0 (split 1 (concat 1 2 ?a ?b)))=>?a");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 2u);
  ASSERT_TRUE((*rules)[0].rule.has_value()) << (*rules)[0].not_expressible;
  EXPECT_EQ((*rules)[0].sexpr,
            "(concat 1 2 (concat 1 2 ?a@4_4 ?b@4_4) ?c@4_4)=>(concat 1 2 (concat 1 2 ?a@4_4 ?b@4_4) ?c@4_4)");
  ASSERT_TRUE((*rules)[1].rule.has_value()) << (*rules)[1].not_expressible;
  auto source = GraphFromProto((*rules)[1].rule->source());
  ASSERT_TRUE(source.ok());
  EXPECT_EQ(source->num_ops(), 2);  // concat, split
}

TEST(TensatRulesTest, ConcatsNestedEitherWayHaveOneShape) {
  auto rules = ReadTensatRules("(concat 1 2 ?a (concat 1 2 ?b ?c))=>(concat 1 2 (concat 1 2 ?a ?b) ?c)");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_TRUE((*rules)[0].rule.has_value()) << (*rules)[0].not_expressible;
  EXPECT_EQ((*rules)[0].sexpr,
            "(concat 1 2 ?a@4_4 (concat 1 2 ?b@4_4 ?c@4_4))=>(concat 1 2 (concat 1 2 ?a@4_4 ?b@4_4) ?c@4_4)");
  // A concat's axis cannot equal one of its inputs'.
  auto wrong = ReadTensatRules("(concat 1 2 ?a ?b)=>?a");
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  EXPECT_FALSE((*wrong)[0].rule.has_value());
}

TEST(TensatRulesTest, WhatWeCannotExpressIsKeptWithItsReason) {
  auto rules = ReadTensatRules(
      "(dropout ?input_0)=>?input_0\n"
      "(ewadd ?a (matmul 0 ?a ?b))=>(ewadd (matmul 0 ?a ?b) ?a)\n"
      "(ewadd ?x ?y)=>(ewadd ?y ?x)");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 3u);
  EXPECT_FALSE((*rules)[0].rule.has_value());
  EXPECT_NE((*rules)[0].not_expressible.find("no dropout"), std::string::npos) << (*rules)[0].not_expressible;
  // a = a*b needs a's columns to be b's rows and b's columns a's: fine at
  // 4x4, so this one is expressible.
  EXPECT_TRUE((*rules)[1].rule.has_value()) << (*rules)[1].not_expressible;
  EXPECT_TRUE((*rules)[2].rule.has_value());
}

TEST(TensatRulesTest, ShapesThatCannotAgreeAreNotExpressible) {
  // A 2-D tensor added to a 4-D one.
  auto rules = ReadTensatRules("(ewadd (matmul 0 ?a ?b) (conv2d 1 1 0 0 ?x ?w))=>?a");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 1u);
  EXPECT_FALSE((*rules)[0].rule.has_value());
  EXPECT_NE((*rules)[0].not_expressible.find("2-D"), std::string::npos) << (*rules)[0].not_expressible;
}

TEST(TensatRulesTest, TextThatIsNoRuleIsAnError) {
  auto missing = ReadTensatRules("(ewadd ?a ?b)\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("line 1: a rule is LHS=>RHS"), std::string::npos);
  auto unbalanced = ReadTensatRules("(ewadd ?a ?b)=>(ewadd ?b ?a)\n(relu ?a=>?a");
  ASSERT_FALSE(unbalanced.ok());
  EXPECT_NE(unbalanced.status().message().find("line 2"), std::string::npos) << unbalanced.status();
}

TEST(TensatRulesTest, ShapesWrittenInOurSyntaxAreKept) {
  auto rules = ReadTensatRules("(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y@2_4 ?x@2_4)");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_TRUE((*rules)[0].rule.has_value());
  EXPECT_EQ(VariableOf(*(*rules)[0].rule, "x"), "input 2,4,");
  auto clash = ReadTensatRules("(ewadd ?x@2_4 ?y@3_4)=>(ewadd ?y@3_4 ?x@2_4)");
  ASSERT_TRUE(clash.ok());
  EXPECT_FALSE((*clash)[0].rule.has_value());
  EXPECT_NE((*clash)[0].not_expressible.find("differ"), std::string::npos) << (*clash)[0].not_expressible;
}

}  // namespace
}  // namespace taso
