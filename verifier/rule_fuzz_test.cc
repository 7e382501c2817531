#include "verifier/rule_fuzz.h"

#include "core/graph_proto.h"
#include "core/rule_sexpr.h"
#include "core/side_conditions.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "verifier/precheck.h"
#include "verifier/prover.h"
#include "verifier/prover_fixture.h"
#include "verifier/rule_text.h"

namespace taso::verifier {
namespace {

using ::testing::HasSubstr;

using testing::FalselyProved;
using testing::ParseRule;

FuzzOptions Options(int instances) {
  FuzzOptions o;
  o.instances = instances;
  o.seed = 7;
  o.threads = 2;
  return o;
}

class RuleFuzzTest : public ProverFixture {
 protected:
  // Proved here, so the conditions are the ones a real proof records.
  rules::Rule Proved(const std::string& line, const std::string& id) {
    rules::Rule rule = ParseRule(line, id);
    EXPECT_TRUE(VerifyStandalone(*prover_, "z3", rule).ok());
    EXPECT_EQ(rule.status(), rules::RULE_STATUS_PROVED) << line << ": " << rule.status_detail();
    EXPECT_TRUE(rule.has_conditions()) << line;
    return rule;
  }
};

TEST_F(RuleFuzzTest, ProvedRulesHoldAtShapesOtherThanTheirOwn) {
  const std::vector<rules::Rule> rules = {
      Proved("(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y@2_4 ?x@2_4)", "comm"),
      Proved("(matmul 0 ?x@2_4 (matmul 0 ?y@4_4 ?z@4_4))=>(matmul 0 (matmul 0 ?x@2_4 ?y@4_4) ?z@4_4)", "assoc"),
      Proved("((matmul 0 ?x@2_4 ?w1@4_4) (matmul 0 ?x@2_4 ?w2@4_4))=>"
             "((split_0 (split 1 (matmul 0 ?x@2_4 (concat 1 2 ?w1@4_4 ?w2@4_4)))) "
             "(split_1 (split 1 (matmul 0 ?x@2_4 (concat 1 2 ?w1@4_4 ?w2@4_4)))))",
             "merge"),
      Proved("(relu (conv2d 1 1 0 0 ?i@1_4_5_5 ?w@4_4_3_3))=>(conv2d 1 1 0 2 ?i@1_4_5_5 ?w@4_4_3_3)", "fuse"),
      Proved("(poolavg (smul ?i@2_4_5_5 ?s@) 3 3 1 1 0 0)=>(smul (poolavg ?i@2_4_5_5 3 3 1 1 0 0) ?s@)", "pool"),
      // tanh has no integer semantics: float only.
      Proved("(ewadd (tanh ?x@2_4) ?y@2_4)=>(ewadd ?y@2_4 (tanh ?x@2_4))", "tanh"),
  };
  const FuzzReport report = FuzzRules(rules, Options(30));
  ASSERT_EQ(report.rules.size(), rules.size());
  for (const RuleFuzzResult& r : report.rules) {
    EXPECT_EQ(r.outcome, FuzzOutcome::kFuzzed) << r.rule_id << ": " << r.reason;
    EXPECT_EQ(r.mismatches, 0) << r.rule_id << ": "
                               << (r.examples.empty() ? "" : r.examples[0].detail + " at " +
                                                                 DescribeShapes(r.examples[0].shapes));
    EXPECT_EQ(r.instances_run + r.instances_not_found, 30) << r.rule_id;
    EXPECT_GE(r.instances_run, 25) << r.rule_id;
    EXPECT_GE(r.instances_at_other_shapes, 15) << r.rule_id;
    EXPECT_EQ(r.instances_int32, r.rule_id == "tanh" ? 0 : r.instances_run) << r.rule_id;
  }
  EXPECT_EQ(report.totals.rules, 6);
  EXPECT_EQ(report.totals.rules_fuzzed, 6);
  EXPECT_EQ(report.totals.mismatches, 0);
  EXPECT_EQ(report.totals.rules_without_instances, 0);
}

TEST_F(RuleFuzzTest, TheSameSeedGivesTheSameInstancesOnAnyNumberOfThreads) {
  const std::vector<rules::Rule> rules = {
      Proved("(matmul 0 ?x@2_4 (ewadd ?y@4_4 ?z@4_4))=>(ewadd (matmul 0 ?x@2_4 ?y@4_4) (matmul 0 ?x@2_4 ?z@4_4))", "a"),
      FalselyProved("(relu (ewadd ?x@2_4 ?y@2_4))=>(ewadd (relu ?x@2_4) (relu ?y@2_4))", "b"),
  };
  FuzzOptions one = Options(20);
  one.threads = 1;
  const FuzzReport a = FuzzRules(rules, one);
  const FuzzReport b = FuzzRules(rules, Options(20));
  ASSERT_EQ(a.rules.size(), b.rules.size());
  for (size_t i = 0; i < a.rules.size(); ++i) {
    EXPECT_EQ(a.rules[i].instances_run, b.rules[i].instances_run);
    EXPECT_EQ(a.rules[i].instances_at_other_shapes, b.rules[i].instances_at_other_shapes);
    EXPECT_EQ(a.rules[i].elements_loosened, b.rules[i].elements_loosened);
    EXPECT_EQ(a.rules[i].mismatches, b.rules[i].mismatches);
    ASSERT_EQ(a.rules[i].examples.size(), b.rules[i].examples.size());
    for (size_t e = 0; e < a.rules[i].examples.size(); ++e) {
      EXPECT_EQ(a.rules[i].examples[e].detail, b.rules[i].examples[e].detail);
      EXPECT_EQ(DescribeShapes(a.rules[i].examples[e].shapes), DescribeShapes(b.rules[i].examples[e].shapes));
    }
  }
  FuzzOptions other = Options(20);
  other.seed = 8;
  EXPECT_NE(FuzzRules(rules, other).rules[1].examples[0].input_seed, a.rules[1].examples[0].input_seed);
}

TEST_F(RuleFuzzTest, AFalseRuleMarkedProvedIsCaughtWithItsInstance) {
  const std::vector<rules::Rule> rules = {
      FalselyProved("(relu (ewadd ?x@2_4 ?y@2_4))=>(ewadd (relu ?x@2_4) (relu ?y@2_4))", "relu"),
      FalselyProved("(matmul 0 ?x@2_4 (concat 1 2 ?w1@4_4 ?w2@4_4))=>(matmul 0 ?x@2_4 (concat 1 2 ?w2@4_4 ?w1@4_4))",
                    "swap"),
  };
  const FuzzReport report = FuzzRules(rules, Options(10));
  for (const RuleFuzzResult& r : report.rules) {
    EXPECT_EQ(r.outcome, FuzzOutcome::kFuzzed) << r.rule_id;
    EXPECT_EQ(r.mismatches, r.instances_run) << r.rule_id;
    ASSERT_FALSE(r.examples.empty()) << r.rule_id;
    const FuzzMismatch& m = r.examples[0];
    EXPECT_EQ(m.domain, FuzzDomain::kFloat32);
    EXPECT_GE(m.element, 0);
    EXPECT_NE(m.source_value, m.target_value);
    EXPECT_THAT(m.detail, HasSubstr("differs in float32"));
    EXPECT_THAT(DescribeShapes(m.shapes), HasSubstr("x=["));
  }
  EXPECT_EQ(report.totals.rules_with_mismatches, 2);
  EXPECT_EQ(report.totals.mismatches, report.totals.instances_run);
}

TEST_F(RuleFuzzTest, SamplesBreakEqualitiesTheRulesShapesHadByCoincidence) {
  // Associativity with a relu slipped in: typed like x(yz) = (xy)z, wrong
  // wherever z has a negative entry, so instances come back with their shapes.
  rules::Rule rule = FalselyProved(
      "(matmul 0 ?x@2_4 (matmul 0 ?y@4_4 ?z@4_4))=>(matmul 0 (matmul 0 ?x@2_4 ?y@4_4) (relu ?z@4_4))", "relu");
  FuzzOptions options = Options(100);
  options.max_examples = 100;
  const RuleFuzzResult r = FuzzRule(rule, options);
  ASSERT_EQ(r.examples.size(), static_cast<size_t>(r.mismatches));
  ASSERT_GE(r.mismatches, 50);
  int rectangular = 0;
  for (const FuzzMismatch& m : r.examples) {
    ASSERT_EQ(m.shapes.size(), 3u);  // x, y, z
    rectangular += m.shapes[1].dims[0] != m.shapes[1].dims[1];
  }
  // The generator's y is square; a fuzzer that kept it square would miss
  // every law that needs a side condition about it.
  EXPECT_GE(rectangular, 30) << "of " << r.mismatches;
}

TEST_F(RuleFuzzTest, ARuleProvedFromAnAxiomTrueOnlyAtItsShapesIsCaughtElsewhere) {
  // A 3x3 max pool of a 1x1 image is the image. Stated as an axiom for every
  // tensor, it proves a rule that the import's numeric pre-check, at the
  // rule's own 1x1 shapes, cannot fault; at a larger image it is wrong.
  ProverOptions options;
  options.extra_axioms_smt2 = {"(assert (forall ((x T)) (= (pool_max 3 3 1 1 0 x) x)))"};
  auto wrong = Prover::Create(options);
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  rules::Rule rule = ParseRule("(poolmax ?x@1_2_1_1 3 3 1 1 0 0)=>?x@1_2_1_1", "pool");
  ASSERT_TRUE(VerifyStandalone(**wrong, "z3", rule).ok());
  ASSERT_EQ(rule.status(), rules::RULE_STATUS_PROVED) << rule.status_detail();
  EXPECT_THAT(rule.proof().axioms_used(), ::testing::Contains("extra0"));
  const RuleFuzzResult r = FuzzRule(rule, Options(20));
  EXPECT_GT(r.mismatches, 0);
  ASSERT_FALSE(r.examples.empty());
  EXPECT_THAT(DescribeShapes(r.examples[0].shapes), ::testing::Not(HasSubstr("x=[1,2,1,1]")));
}

TEST_F(RuleFuzzTest, RulesWithoutUsableConditionsAreReportedNotFuzzed) {
  rules::Rule none = Proved("(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y@2_4 ?x@2_4)", "none");
  none.clear_conditions();
  rules::Rule old = Proved("(ewmul ?x@2_4 ?y@2_4)=>(ewmul ?y@2_4 ?x@2_4)", "old");
  old.mutable_conditions()->set_vocabulary_version(1);
  rules::Rule wrong = FalselyProved("(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y@2_4 ?x@2_4)", "wrong");
  wrong.mutable_conditions()->mutable_source(0)->mutable_signatures(0)->set_function("ewadd_bcast");
  const FuzzReport report = FuzzRules({none, old, wrong}, Options(5));
  EXPECT_EQ(report.rules[0].outcome, FuzzOutcome::kNoConditions);
  EXPECT_EQ(report.rules[1].outcome, FuzzOutcome::kOtherVocabulary);
  EXPECT_EQ(report.rules[2].outcome, FuzzOutcome::kConditionsDisagree);
  EXPECT_THAT(report.rules[2].reason, HasSubstr("ewadd_bcast"));
  for (const RuleFuzzResult& r : report.rules) EXPECT_EQ(r.instances_run, 0) << r.rule_id;
  EXPECT_EQ(report.totals.rules_not_fuzzed, 3);
  EXPECT_EQ(report.totals.instances_run, 0);
}

TEST_F(RuleFuzzTest, RulesPinnedByConstantsAreFuzzedInWhatIsFree) {
  // const_pool fixes the channel count and the window; batch and image size are free.
  rules::Rule rule = Proved("(conv2d 1 1 0 0 ?i@2_4_5_5 (Cpool 4 1 3 3))=>(poolavg ?i@2_4_5_5 3 3 1 1 0 0)", "cpool");
  const RuleFuzzResult r = FuzzRule(rule, Options(20));
  EXPECT_EQ(r.mismatches, 0) << (r.examples.empty() ? "" : r.examples[0].detail);
  EXPECT_GE(r.instances_run, 15);
  EXPECT_GE(r.instances_at_other_shapes, 10);
  EXPECT_EQ(r.instances_int32, r.instances_run);
}

}  // namespace
}  // namespace taso::verifier
