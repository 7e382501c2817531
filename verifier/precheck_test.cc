#include "verifier/precheck.h"

#include "core/rule_sexpr.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taso::verifier {
namespace {

using ::testing::HasSubstr;

rules::Rule Parse(const std::string& line) {
  auto rules = RulesFromSexpr(line);
  EXPECT_TRUE(rules.ok()) << rules.status();
  EXPECT_EQ(rules.ok() ? rules->size() : 0, 1u);
  return rules.ok() && !rules->empty() ? (*rules)[0] : rules::Rule();
}

class StandaloneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = Prover::Create();
    ASSERT_TRUE(p.ok());
    prover = std::move(*p);
  }
  rules::RuleStatus Verify(rules::Rule& rule) {
    EXPECT_TRUE(VerifyStandalone(*prover, "z3", rule).ok());
    return rule.status();
  }
  std::unique_ptr<Prover> prover;
};

TEST_F(StandaloneTest, HandWrittenRulesAreCheckedThenProved) {
  rules::Rule comm = Parse("(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y@2_4 ?x@2_4)");
  EXPECT_EQ(Verify(comm), rules::RULE_STATUS_PROVED) << comm.status_detail();
  rules::Rule merge = Parse(
      "((matmul 0 ?x@2_4 ?w1@4_4) (matmul 0 ?x@2_4 ?w2@4_4))=>"
      "((split_0 (split 1 (matmul 0 ?x@2_4 (concat 1 2 ?w1@4_4 ?w2@4_4)))) "
      "(split_1 (split 1 (matmul 0 ?x@2_4 (concat 1 2 ?w1@4_4 ?w2@4_4)))))");
  EXPECT_EQ(merge.outputs_size(), 2);
  EXPECT_EQ(Verify(merge), rules::RULE_STATUS_PROVED) << merge.status_detail();
  rules::Rule fusion = Parse("(relu (conv2d 1 1 0 0 ?i@1_4_5_5 ?w@4_4_3_3))=>(conv2d 1 1 0 2 ?i@1_4_5_5 ?w@4_4_3_3)");
  EXPECT_EQ(Verify(fusion), rules::RULE_STATUS_PROVED) << fusion.status_detail();
}

TEST_F(StandaloneTest, AWrongRuleIsRefutedWithNumbersBeforeAnyProof) {
  rules::Rule wrong = Parse("(relu (ewadd ?x@2_4 ?y@2_4))=>(ewadd (relu ?x@2_4) (relu ?y@2_4))");
  EXPECT_EQ(Verify(wrong), rules::RULE_STATUS_REJECTED_PRECHECK);
  EXPECT_THAT(wrong.status_detail(), HasSubstr("differs"));
  EXPECT_TRUE(wrong.proof().axioms_used().empty());
  rules::Rule shapes = Parse("(matmul 0 ?x@2_4 ?w@4_4)=>(matmul 0 ?x@2_4 (transpose ?w@4_4 1_0 1))");
  EXPECT_EQ(Verify(shapes), rules::RULE_STATUS_REJECTED_PRECHECK);
}

TEST_F(StandaloneTest, AClaimedProofIsCheckedWithItsOwnAxiomsAndOpenFacts) {
  // The weight-merge rule's proof opens the concat's equal halves.
  const rules::Rule merge = Parse(
      "((matmul 0 ?x@2_4 ?w1@4_4) (matmul 0 ?x@2_4 ?w2@4_4))=>"
      "((split_0 (split 1 (matmul 0 ?x@2_4 (concat 1 2 ?w1@4_4 ?w2@4_4)))) "
      "(split_1 (split 1 (matmul 0 ?x@2_4 (concat 1 2 ?w1@4_4 ?w2@4_4)))))");
  rules::Rule proved = merge;
  ASSERT_EQ(Verify(proved), rules::RULE_STATUS_PROVED) << proved.status_detail();
  ASSERT_GT(proved.proof().axioms_used_size(), 0);
  // The claim, checked: the same verdict and conditions, derived here.
  rules::Rule claim = proved;
  claim.mutable_proof()->set_solver("someone else's");
  ASSERT_TRUE(VerifyClaim(*prover, "z3", claim).ok());
  EXPECT_EQ(claim.status(), rules::RULE_STATUS_PROVED);
  EXPECT_EQ(claim.conditions().SerializeAsString(), proved.conditions().SerializeAsString());
  EXPECT_EQ(claim.proof().solver(), "z3");
  // A claim naming axioms no proof needs (or that do not exist) is proved
  // here from scratch, with the conditions this prover derives.
  rules::Rule made_up = proved;
  made_up.mutable_proof()->clear_axioms_used();
  made_up.mutable_proof()->add_axioms_used("no such axiom");
  made_up.clear_conditions();
  ASSERT_TRUE(VerifyClaim(*prover, "z3", made_up).ok());
  EXPECT_EQ(made_up.status(), rules::RULE_STATUS_PROVED);
  EXPECT_EQ(made_up.conditions().SerializeAsString(), proved.conditions().SerializeAsString());
}

TEST_F(StandaloneTest, AClaimThatOpenedOnlyTheUnequalConcatsIsCheckedAsClaimed) {
  // The interchange's proof opens the outer concats (2 rows on 4) and keeps
  // the inner ones' equal halves: the check opens the same facts, in one query.
  rules::Rule proved = Parse(
      "(concat 0 2 (concat 1 2 ?x1@2_4 ?x2@2_4) (concat 1 2 ?w2@4_4 ?w3@4_4))=>"
      "(concat 1 2 (concat 0 2 ?x1@2_4 ?w2@4_4) (concat 0 2 ?x2@2_4 ?w3@4_4))");
  ASSERT_EQ(Verify(proved), rules::RULE_STATUS_PROVED) << proved.status_detail();
  rules::Rule claim = proved;
  const int64_t before = prover->queries();
  ASSERT_TRUE(VerifyClaim(*prover, "z3", claim).ok());
  EXPECT_EQ(prover->queries() - before, 1);
  EXPECT_EQ(claim.status(), rules::RULE_STATUS_PROVED);
  EXPECT_EQ(claim.conditions().SerializeAsString(), proved.conditions().SerializeAsString());
}

TEST_F(StandaloneTest, AFalseRuleClaimedProvedIsNotProved) {
  rules::Rule claim = Parse("(relu (ewadd ?x@2_4 ?y@2_4))=>(ewadd (relu ?x@2_4) (relu ?y@2_4))");
  claim.set_status(rules::RULE_STATUS_PROVED);
  claim.mutable_proof()->add_axioms_used("forged");
  ASSERT_TRUE(VerifyClaim(*prover, "z3", claim).ok());
  EXPECT_EQ(claim.status(), rules::RULE_STATUS_REJECTED_PRECHECK);
  EXPECT_EQ(claim.proof().axioms_used_size(), 0);
}

TEST(RuleSexpr, ExportedRulesReadBackTheSame) {
  const std::string text =
      "(conv2d 1 1 0 2 ?i1@2_4_5_5 (enlarge 3 3 ?w7@4_4_1_3))=>(conv2d 1 1 0 2 ?i1@2_4_5_5 ?w7@4_4_1_3)\n"
      "; a comment\n"
      "\n"
      "(poolavg (smul ?w5@4_4_3_3 ?s0@) 3 3 1 1 0 0)=>(smul (poolavg ?w5@4_4_3_3 3 3 1 1 0 0) ?s0@)\n";
  auto rules = RulesFromSexpr(text);
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 2u);
  for (const rules::Rule& r : *rules) {
    auto line = RuleToSexpr(r);
    ASSERT_TRUE(line.ok()) << line.status();
    auto again = RulesFromSexpr(*line);
    ASSERT_TRUE(again.ok()) << again.status() << " in " << *line;
    EXPECT_EQ(RuleToSexpr((*again)[0]).value(), *line);
  }
}

TEST(RuleSexpr, MistakesNameTheLine) {
  auto expect_error = [](const std::string& text, const std::string& what) {
    auto r = RulesFromSexpr(text);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(r.status().message(), HasSubstr(what)) << text;
  };
  expect_error("(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y ?x@2_4)", "has no shape");
  expect_error("\n(frobnicate ?x@2_4)=>?x@2_4", "line 2: unknown operator 'frobnicate'");
  expect_error("(ewadd ?x@2_4 ?y@2_4=>?x@2_4", "missing ')'");
  expect_error("(ewadd ?x@2_4 ?y@2_4)", "LHS=>RHS");
  expect_error("(ewadd ?x@2_4 ?y@2_5)=>?x@2_4", "broadcast");
  expect_error("((relu ?x@2_4) (relu ?y@2_4))=>(relu ?x@2_4)", "outputs");
  expect_error("(ewadd ?x@2_4 ?x@4_4)=>?x@2_4", "two shapes");
}

}  // namespace
}  // namespace taso::verifier
