#include "core/rule_pattern.h"

#include "core/rule_sexpr.h"
#include "gtest/gtest.h"

namespace taso {
namespace {

rules::Rule Parse(const std::string& text) {
  auto rules = RulesFromSexpr(text);
  EXPECT_TRUE(rules.ok()) << rules.status();
  return rules.ok() && !rules->empty() ? (*rules)[0] : rules::Rule();
}

bool Found(const std::string& pattern, const std::string& rule, PatternSide side = PatternSide::kEither) {
  auto p = RulePattern::Parse(pattern);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() && p->FoundIn(Parse(rule), side);
}

constexpr char kFusion[] = "(relu (conv2d 1 1 0 0 ?x@1_4_8_8 ?w@4_4_3_3))=>(conv2d 1 1 0 2 ?x@1_4_8_8 ?w@4_4_3_3)";
constexpr char kDistribute[] =
    "(matmul 0 ?x@4_4 (ewadd ?w1@4_4 ?w2@4_4))=>(ewadd (matmul 0 ?x@4_4 ?w1@4_4) (matmul 0 ?x@4_4 ?w2@4_4))";

TEST(RulePattern, VariablesMatchSubexpressionsAndParameters) {
  EXPECT_TRUE(Found("(relu ?y)", kFusion));
  EXPECT_TRUE(Found("(relu (conv2d 1 1 0 0 ?x ?w))", kFusion));
  EXPECT_TRUE(Found("(conv2d ?sh ?sw ?pad 2 ?x ?w)", kFusion));  // any stride and padding, relu fused
  EXPECT_FALSE(Found("(conv2d 2 2 ?pad ?act ?x ?w)", kFusion));  // stride 2 appears nowhere
  EXPECT_FALSE(Found("(tanh ?y)", kFusion));
}

TEST(RulePattern, SidesAreSearchedAsAsked) {
  EXPECT_TRUE(Found("(relu ?y)", kFusion, PatternSide::kSource));
  EXPECT_FALSE(Found("(relu ?y)", kFusion, PatternSide::kTarget));
  EXPECT_TRUE(Found("(conv2d 1 1 0 2 ?x ?w)", kFusion, PatternSide::kTarget));
  EXPECT_FALSE(Found("(conv2d 1 1 0 2 ?x ?w)", kFusion, PatternSide::kSource));
}

TEST(RulePattern, RepeatedVariablesMustBindEqualText) {
  // Both matmuls read the same ?x: (ewadd (matmul 0 ?a ?b) (matmul 0 ?a ?c)).
  EXPECT_TRUE(Found("(ewadd (matmul 0 ?a ?b) (matmul 0 ?a ?c))", kDistribute));
  EXPECT_FALSE(Found("(ewadd (matmul 0 ?a ?b) (matmul 0 ?c ?b))", kDistribute));
  EXPECT_FALSE(Found("(ewadd ?a ?a)", kDistribute));
  // Operands are matched as written, not reordered...
  EXPECT_TRUE(Found("(matmul 0 ?x (ewadd ?a ?b))", kDistribute, PatternSide::kSource));
  EXPECT_FALSE(Found("(matmul 0 (ewadd ?a ?b) ?x)", kDistribute));
}

TEST(RulePattern, SumsAndProductsMatchInEitherOrder) {
  // ... but for a sum's or a product's, as the optimizer matches them.
  constexpr char kFactor[] =
      "(ewadd (ewmul ?s@4_4 ?x@4_4) (relu ?y@4_4))=>(ewadd (relu ?y@4_4) (ewmul ?s@4_4 ?x@4_4))";
  EXPECT_TRUE(Found("(ewadd (relu ?a) ?b)", kFactor, PatternSide::kSource));
  EXPECT_TRUE(Found("(ewadd ?b (relu ?a))", kFactor, PatternSide::kSource));
  EXPECT_TRUE(Found("(ewmul ?x ?s)", kFactor));
  // Nested: the outer sum read one way, the inner product the other, and a
  // variable used twice still has to agree across both.
  EXPECT_TRUE(Found("(ewadd (relu ?y) (ewmul ?x ?s))", kFactor, PatternSide::kSource));
  EXPECT_FALSE(Found("(ewadd (relu ?s) (ewmul ?x ?s))", kFactor, PatternSide::kSource));
  // Other operators keep their order.
  EXPECT_FALSE(Found("(matmul 0 (ewadd ?a ?b) ?x)", kDistribute));
}

TEST(RulePattern, BadPatternsSayWhatIsWrong) {
  auto unknown = RulePattern::Parse("(conv ?x ?w)");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown operator 'conv'"), std::string::npos) << unknown.status();
  auto arity = RulePattern::Parse("(matmul ?x ?w)");
  ASSERT_FALSE(arity.ok());
  EXPECT_NE(arity.status().message().find("matmul takes 3 arguments"), std::string::npos) << arity.status();
  EXPECT_FALSE(RulePattern::Parse("?x").ok());
  EXPECT_FALSE(RulePattern::Parse("(relu ?x").ok());
  EXPECT_FALSE(RulePattern::Parse("(relu ?x) (tanh ?y)").ok());
  EXPECT_FALSE(RulePattern::Parse("((relu ?x))").ok());
}

}  // namespace
}  // namespace taso
