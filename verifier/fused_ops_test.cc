// Rules into a runtime's fused operators are proved and fuzzed like any
// other: the verifier and the interpreters read a composite through its
// decomposition (core/decomposition.h), so no fused kernel needs axioms.
#include "core/graph_proto.h"
#include "core/rule_sexpr.h"
#include "core/side_conditions.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "verifier/precheck.h"
#include "verifier/prover.h"
#include "verifier/prover_fixture.h"
#include "verifier/rule_text.h"
#include "verifier/rule_fuzz.h"

namespace taso::verifier {
namespace {

using testing::FalselyProved;
using testing::ParseRule;

// Into a fused gemm, by definition; with each activation the runtime fuses.
const char* const kIntoFusedGemm[] = {
    "(ewadd (matmul 0 ?x@2_4 ?w@4_3) ?b@3)=>(fused_gemm 0 ?x@2_4 ?w@4_3 ?b@3)",
    "(relu (ewadd (matmul 0 ?x@2_4 ?w@4_3) ?b@3))=>(fused_gemm 2 ?x@2_4 ?w@4_3 ?b@3)",
    "(tanh (ewadd (matmul 0 ?x@2_4 ?w@4_3) ?b@2_3))=>(fused_gemm 3 ?x@2_4 ?w@4_3 ?b@2_3)",
    "(sigmoid (ewadd (matmul 0 ?x@2_4 ?w@4_3) ?b@1_3))=>(fused_gemm 1 ?x@2_4 ?w@4_3 ?b@1_3)",
    // A second bias joins the first.
    "(ewadd (fused_gemm 0 ?x@2_4 ?w@4_3 ?b1@2_3) ?b2@2_3)=>(fused_gemm 0 ?x@2_4 ?w@4_3 (ewadd ?b1@2_3 ?b2@2_3))",
    // Two fused gemms reading one input are one over the concatenated weights and biases.
    "((fused_gemm 2 ?x@2_4 ?w1@4_4 ?b1@2_4) (fused_gemm 2 ?x@2_4 ?w2@4_4 ?b2@2_4))=>"
    "((split_0 (split 1 (fused_gemm 2 ?x@2_4 (concat 1 2 ?w1@4_4 ?w2@4_4) (concat 1 2 ?b1@2_4 ?b2@2_4)))) "
    "(split_1 (split 1 (fused_gemm 2 ?x@2_4 (concat 1 2 ?w1@4_4 ?w2@4_4) (concat 1 2 ?b1@2_4 ?b2@2_4)))))",
};

using FusedOpsTest = ProverFixture;

TEST_F(FusedOpsTest, RulesIntoAFusedGemmAreProvedAndHoldWhenFuzzed) {
  std::vector<rules::Rule> proved;
  int i = 0;
  for (const char* line : kIntoFusedGemm) {
    rules::Rule rule = ParseRule(line, absl::StrCat("r", i++));
    ASSERT_TRUE(VerifyStandalone(*prover_, "z3", rule).ok()) << line;
    EXPECT_EQ(rule.status(), rules::RULE_STATUS_PROVED) << line << ": " << rule.status_detail();
    ASSERT_TRUE(rule.has_conditions()) << line;
    proved.push_back(rule);
  }
  FuzzOptions options;
  options.instances = 20;
  options.seed = 3;
  options.threads = 2;
  const FuzzReport report = FuzzRules(proved, options);
  ASSERT_EQ(report.rules.size(), proved.size());
  for (const RuleFuzzResult& r : report.rules) {
    EXPECT_EQ(r.outcome, FuzzOutcome::kFuzzed) << r.rule_id << ": " << r.reason;
    EXPECT_EQ(r.mismatches, 0) << r.rule_id;
    EXPECT_GE(r.instances_run, 15) << r.rule_id;
    EXPECT_GE(r.instances_at_other_shapes, 5) << r.rule_id;
  }
  EXPECT_EQ(report.totals.mismatches, 0);
}

TEST_F(FusedOpsTest, TheRecordedConditionsAreTheDecompositions) {
  rules::Rule rule = ParseRule(kIntoFusedGemm[1], "def");
  auto source = GraphFromProto(rule.source());
  auto target = GraphFromProto(rule.target());
  ASSERT_TRUE(source.ok() && target.ok());
  auto r = prover_->Prove(*source, *target, {{0, 0}});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcome, ProofOutcome::kProved) << r->detail;
  // The fused node stands for its decomposition's signatures, as the
  // optimizer checks them where it matches the rule.
  EXPECT_EQ(DescribeConditions(r->conditions.target), DescribeConditions(r->conditions.source));
  EXPECT_EQ(DescribeConditions(r->conditions.target), "matmul(0) ewadd_bcast() relu()");
}

TEST_F(FusedOpsTest, AWrongFusionIsNotProvedAndTheFuzzerCatchesIt) {
  // The activation before the bias is not the fused kernel's.
  const std::string line = "(ewadd (relu (matmul 0 ?x@2_4 ?w@4_3)) ?b@2_3)=>(fused_gemm 2 ?x@2_4 ?w@4_3 ?b@2_3)";
  rules::Rule rule = ParseRule(line, "wrong");
  ASSERT_TRUE(VerifyStandalone(*prover_, "z3", rule).ok());
  EXPECT_NE(rule.status(), rules::RULE_STATUS_PROVED);
  // Marked proved as a wrong axiom would: the fuzzer finds the difference.
  rules::Rule claimed = FalselyProved(line, "wrong");
  FuzzOptions options;
  options.instances = 10;
  options.threads = 2;
  const RuleFuzzResult r = FuzzRule(claimed, options);
  EXPECT_EQ(r.outcome, FuzzOutcome::kFuzzed) << r.reason;
  EXPECT_GT(r.mismatches, 0);
}

}  // namespace
}  // namespace taso::verifier
