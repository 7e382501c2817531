#include "core/rule_sexpr.h"

#include "core/graph_proto.h"
#include "core/side_conditions.h"
#include "gtest/gtest.h"

namespace taso {
namespace {

TEST(RuleSexprTest, ASubexpressionWrittenTwiceIsOneNode) {
  auto rules = RulesFromSexpr(
      "((matmul 0 ?x@2_4 ?w1@4_3) (matmul 0 ?x@2_4 ?w2@4_3))=>"
      "((split_0 (split 1 (matmul 0 ?x@2_4 (concat 1 2 ?w1@4_3 ?w2@4_3))))"
      " (split_1 (split 1 (matmul 0 ?x@2_4 (concat 1 2 ?w1@4_3 ?w2@4_3)))))");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 1u);
  auto source = GraphFromProto((*rules)[0].source());
  auto target = GraphFromProto((*rules)[0].target());
  ASSERT_TRUE(source.ok() && target.ok());
  EXPECT_EQ(source->num_ops(), 2);
  EXPECT_EQ(target->num_ops(), 3);  // concat, matmul, split: both outputs read the one split
  ASSERT_EQ(target->outputs().size(), 2u);
  EXPECT_EQ(target->outputs()[0].tensor.node, target->outputs()[1].tensor.node);
  EXPECT_NE(target->outputs()[0].tensor.index, target->outputs()[1].tensor.index);
  // And it prints back the same way.
  auto text = RuleToSexpr((*rules)[0]);
  ASSERT_TRUE(text.ok()) << text.status();
  auto again = RulesFromSexpr(*text);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(GraphFromProto((*again)[0].target())->num_ops(), 3);
}

TEST(RuleSexprTest, AProvedRuleCarriesItsConditionsAsAComment) {
  auto rules = RulesFromSexpr("(relu (conv2d 1 1 0 0 ?x@1_4_5_5 ?w@4_2_3_3))=>(conv2d 1 1 0 2 ?x@1_4_5_5 ?w@4_2_3_3)");
  ASSERT_TRUE(rules.ok()) << rules.status();
  rules::Rule& rule = (*rules)[0];
  auto source = GraphFromProto(rule.source());
  auto target = GraphFromProto(rule.target());
  auto s = ConditionsOf(*source);
  auto t = ConditionsOf(*target);
  ASSERT_TRUE(s.ok() && t.ok());
  *rule.mutable_conditions() = ConditionsToProto({*s, *t});
  auto text = RuleToSexpr(rule);
  ASSERT_TRUE(text.ok()) << text.status();
  // Two groups: the weight has 2 of x's 4 channels per group.
  EXPECT_NE(text->find(";; if conv2d(1,1,0,0,2) relu() => conv2d(1,1,0,1,2)"), std::string::npos) << *text;
  auto again = RulesFromSexpr(*text);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(GraphFromProto((*again)[0].target())->num_ops(), 1);
}

}  // namespace
}  // namespace taso
