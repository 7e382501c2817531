#include "verifier/prover.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "records/axiom_versions.h"
#include "testing/graph_builder.h"
#include "testing/op_params.h"
#include "verifier/axioms.h"
#include "verifier/prover_fixture.h"

namespace taso::verifier {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

using ::taso::testing::Axis;
using ::taso::testing::Kernel;
using ::taso::testing::ShapeParam;
using ::taso::testing::WithActivation;
// A small builder: tensors by name, so each side of a rule reads like the law.
using G = ::taso::testing::GraphBuilder;

class ProverTest : public ProverFixture {
 protected:
  ProofResult Prove(const G& a, const G& b, std::vector<std::pair<int, int>> outputs = {{0, 0}}) {
    auto r = prover_->Prove(a.graph, b.graph, outputs);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : ProofResult{};
  }
};

TEST_F(ProverTest, ProvesAssociativityAndNamesTheAxiom) {
  G a, b;
  {
    auto x1 = a.In("x1", {2, 4}), x2 = a.In("x2", {2, 4}), x3 = a.In("x3", {2, 4});
    a.Out(a.Op(OpKind::kEwAdd, {x1, a.Op(OpKind::kEwAdd, {x2, x3})}));
  }
  {
    auto x1 = b.In("x1", {2, 4}), x2 = b.In("x2", {2, 4}), x3 = b.In("x3", {2, 4});
    b.Out(b.Op(OpKind::kEwAdd, {b.Op(OpKind::kEwAdd, {x1, x2}), x3}));
  }
  ProofResult r = Prove(a, b);
  EXPECT_EQ(r.outcome, ProofOutcome::kProved) << r.detail;
  EXPECT_THAT(r.axioms_used, Contains("ewadd_assoc"));
}

// Associativity of ewadd over three 2x4 inputs: the proof every limit test uses.
void Associativity(G& a, G& b) {
  auto x1 = a.In("x1", {2, 4}), x2 = a.In("x2", {2, 4}), x3 = a.In("x3", {2, 4});
  a.Out(a.Op(OpKind::kEwAdd, {x1, a.Op(OpKind::kEwAdd, {x2, x3})}));
  auto y1 = b.In("x1", {2, 4}), y2 = b.In("x2", {2, 4}), y3 = b.In("x3", {2, 4});
  b.Out(b.Op(OpKind::kEwAdd, {b.Op(OpKind::kEwAdd, {y1, y2}), y3}));
}

// The solver's parameters are set only when the limit changes (setting them
// is most of a small query's cost): each query must still run under its own.
TEST(ProverLimitsTest, EveryQueryRunsUnderItsStagesLimit) {
  G a, b;
  Associativity(a, b);
  ProverOptions starved;
  starved.rlimit = 1;
  starved.relevant_rlimit = 1;
  auto none = Prover::Create(starved);
  ASSERT_TRUE(none.ok()) << none.status();
  for (int round = 0; round < 2; ++round) {
    auto r = (*none)->Prove(a.graph, b.graph, {{0, 0}});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->outcome, ProofOutcome::kTimeout) << "round " << round << ": " << r->detail;
  }
  // Only the first stage starved: each proof fails there and goes through
  // with every axiom, so the limit switches back and forth between queries.
  ProverOptions first_starved;
  first_starved.relevant_rlimit = 1;
  auto second = Prover::Create(first_starved);
  ASSERT_TRUE(second.ok()) << second.status();
  for (int round = 0; round < 3; ++round) {
    auto r = (*second)->Prove(a.graph, b.graph, {{0, 0}});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->outcome, ProofOutcome::kProved) << "round " << round << ": " << r->detail;
    auto claimed = (*second)->CheckClaim(a.graph, b.graph, {{0, 0}}, OpenFacts::kNone, r->axioms_used);
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    EXPECT_EQ(claimed->outcome, ProofOutcome::kTimeout) << "a claim is checked under the first stage's limit";
  }
}

// A bound below what the axioms alone take renews the context after every
// proof: each proof, claim check and failure must come out as from a prover
// that never renews.
TEST(ProverRenewalTest, AFreshContextAfterEveryProofGivesTheSameVerdicts) {
  G a, b, sum, product;
  Associativity(a, b);
  {
    auto x1 = sum.In("x1", {2, 4}), x2 = sum.In("x2", {2, 4});
    sum.Out(sum.Op(OpKind::kEwAdd, {x1, x2}));
    auto y1 = product.In("x1", {2, 4}), y2 = product.In("x2", {2, 4});
    product.Out(product.Op(OpKind::kEwMul, {y1, y2}));
  }
  ProverOptions renewing;
  renewing.renew_above_mib = 1;
  auto fresh = Prover::Create(renewing);
  ProverOptions never;
  never.renew_above_mib = 0;
  auto kept = Prover::Create(never);
  ASSERT_TRUE(fresh.ok() && kept.ok());
  for (int round = 0; round < 3; ++round) {
    auto proved = (*fresh)->Prove(a.graph, b.graph, {{0, 0}});
    auto expected = (*kept)->Prove(a.graph, b.graph, {{0, 0}});
    ASSERT_TRUE(proved.ok() && expected.ok());
    EXPECT_EQ(proved->outcome, ProofOutcome::kProved) << proved->detail;
    EXPECT_EQ(proved->axioms_used, expected->axioms_used);
    EXPECT_EQ(DescribeConditions(proved->conditions.source), DescribeConditions(expected->conditions.source));
    auto claim = (*fresh)->CheckClaim(a.graph, b.graph, {{0, 0}}, OpenFacts::kNone, proved->axioms_used);
    ASSERT_TRUE(claim.ok());
    EXPECT_EQ(claim->outcome, ProofOutcome::kProved) << claim->detail;
    auto differ = (*fresh)->Prove(sum.graph, product.graph, {{0, 0}});
    ASSERT_TRUE(differ.ok());
    EXPECT_NE(differ->outcome, ProofOutcome::kProved);
  }
  EXPECT_EQ((*fresh)->renewals(), 9) << "three calls a round, each renewing; Z3 holds " << SolverMemoryMib() << " MiB";
  EXPECT_EQ((*kept)->renewals(), 0);
}

// A query past the process's Z3 memory cap is out of budget (a timeout
// naming memout), not an error or a stuck thread; the prover then starts
// over, and proves again once memory allows.
TEST(ProverMemoryCapTest, AQueryPastTheCapIsATimeoutAndTheProverStartsOver) {
  G a, b;
  Associativity(a, b);
  ProverOptions options;
  options.renew_above_mib = 0;  // only running out of memory renews
  auto prover = Prover::Create(options);
  ASSERT_TRUE(prover.ok()) << prover.status();
  // A cap just above what the new context holds: the query's own allocations pass it.
  SetSolverMemoryLimitMib(static_cast<uint64_t>(SolverMemoryMib()) + 1);
  auto capped = (*prover)->Prove(a.graph, b.graph, {{0, 0}});
  SetSolverMemoryLimitMib(0);
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ(capped->outcome, ProofOutcome::kTimeout) << capped->detail;
  EXPECT_THAT(capped->detail, HasSubstr("memout"));
  // It started over at once if the cap left room for a fresh context, else
  // at this proof: once either way.
  auto proved = (*prover)->Prove(a.graph, b.graph, {{0, 0}});
  ASSERT_TRUE(proved.ok()) << proved.status();
  EXPECT_EQ(proved->outcome, ProofOutcome::kProved) << proved->detail;
  EXPECT_EQ((*prover)->renewals(), 1);
}

// A cap that leaves Z3 no room for a fresh context is an error saying so,
// not a crash (z3++ would go on with the null context Z3 returns); a prover
// whose renewal found no room makes its context once the room is back.
TEST(ProverMemoryCapTest, NoRoomForAContextIsAnErrorAndTheProverRecovers) {
  G a, b;
  Associativity(a, b);
  ProverOptions options;
  options.renew_above_mib = 1;  // a fresh context after every proof
  auto prover = Prover::Create(options);
  ASSERT_TRUE(prover.ok()) << prover.status();
  SetSolverMemoryLimitMib(1);  // below what Z3 holds already: nothing new fits
  auto refused = Prover::Create(options);
  auto capped = (*prover)->Prove(a.graph, b.graph, {{0, 0}});  // then no room to renew
  auto without_context = (*prover)->Prove(a.graph, b.graph, {{0, 0}});
  SetSolverMemoryLimitMib(0);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("memout"));
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ(capped->outcome, ProofOutcome::kTimeout) << capped->detail;
  ASSERT_FALSE(without_context.ok());
  EXPECT_EQ(without_context.status().code(), absl::StatusCode::kResourceExhausted) << without_context.status();
  EXPECT_FALSE((*prover)->axiom_set_version().empty());
  auto proved = (*prover)->Prove(a.graph, b.graph, {{0, 0}});
  ASSERT_TRUE(proved.ok()) << proved.status();
  EXPECT_EQ(proved->outcome, ProofOutcome::kProved) << proved->detail;
}

TEST_F(ProverTest, ProvesConvReluFusion) {
  G a, b;
  {
    auto i = a.In("i1", {2, 4, 5, 5});
    auto w = a.W("w4", {4, 4, 3, 3});
    a.Out(a.Op(OpKind::kRelu, {a.Op(OpKind::kConv2D, {i, w}, OpParams{})}));
  }
  {
    auto i = b.In("i1", {2, 4, 5, 5});
    auto w = b.W("w4", {4, 4, 3, 3});
    b.Out(b.Op(OpKind::kConv2D, {i, w}, WithActivation(Activation::kRelu)));
  }
  ProofResult r = Prove(a, b);
  EXPECT_EQ(r.outcome, ProofOutcome::kProved) << r.detail;
  EXPECT_THAT(r.axioms_used, Contains("relu_conv"));
  // Fusion holds for any group count, the same one on both sides.
  EXPECT_EQ(DescribeConditions(r.conditions.source), "conv2d(1,1,0,0,?0) relu()");
  EXPECT_EQ(DescribeConditions(r.conditions.target), "conv2d(1,1,0,1,?0)");
}

TEST_F(ProverTest, ProvesAMultiOutputRuleThroughSplit) {
  // matmul(x, concat_1(w1, w2)) split on axis 1 == (matmul(x, w1), matmul(x, w2))
  G a, b;
  {
    auto x = a.In("x1", {2, 4});
    auto w1 = a.W("w1", {4, 4}), w2 = a.W("w2", {4, 4});
    auto parts = a.OpN(OpKind::kSplit, {a.Op(OpKind::kMatMul, {x, a.Op(OpKind::kConcat, {w1, w2}, Axis(1))})}, Axis(1));
    ASSERT_EQ(parts.size(), 2u);
    a.Out(parts[0]).Out(parts[1]);
  }
  {
    auto x = b.In("x1", {2, 4});
    auto w1 = b.W("w1", {4, 4}), w2 = b.W("w2", {4, 4});
    b.Out(b.Op(OpKind::kMatMul, {x, w1})).Out(b.Op(OpKind::kMatMul, {x, w2}));
  }
  ProofResult r = Prove(a, b, {{0, 0}, {1, 1}});
  EXPECT_EQ(r.outcome, ProofOutcome::kProved) << r.detail;
  EXPECT_THAT(r.axioms_used, Contains("matmul_concat_right"));
  // Proved at equal halves, the proof needs no such fact: the rule is
  // recorded for weights of any widths.
  EXPECT_EQ(DescribeConditions(r.conditions.source), "concat(1,?0) matmul(0) split_0(1) split_1(1)");
  EXPECT_EQ(DescribeConditions(r.conditions.target), "matmul(0) matmul(0)");
  // The outputs swapped are not equal.
  ProofResult swapped = Prove(a, b, {{0, 1}, {1, 0}});
  EXPECT_NE(swapped.outcome, ProofOutcome::kProved);
}

TEST_F(ProverTest, NonEquivalentPairIsNotProved) {
  G a, b;
  {
    auto x1 = a.In("x1", {2, 4}), x2 = a.In("x2", {2, 4});
    a.Out(a.Op(OpKind::kEwAdd, {x1, x2}));
  }
  {
    auto x1 = b.In("x1", {2, 4}), x2 = b.In("x2", {2, 4});
    b.Out(b.Op(OpKind::kEwMul, {x1, x2}));
  }
  ProofResult r = Prove(a, b);
  EXPECT_NE(r.outcome, ProofOutcome::kProved);
  EXPECT_FALSE(r.detail.empty());
  EXPECT_TRUE(r.axioms_used.empty());
}

TEST_F(ProverTest, ConcatAssociativityIsNotALaw) {
  // Equal values, different split trees: TASO's known-wrong axiom stays out.
  G a, b;
  {
    auto x1 = a.In("x1", {2, 4}), x2 = a.In("x2", {2, 4}), x3 = a.In("x3", {2, 4});
    a.Out(a.Op(OpKind::kConcat, {a.Op(OpKind::kConcat, {x1, x2}, Axis(0)), x3}, Axis(0)));
  }
  {
    auto x1 = b.In("x1", {2, 4}), x2 = b.In("x2", {2, 4}), x3 = b.In("x3", {2, 4});
    b.Out(b.Op(OpKind::kConcat, {x1, b.Op(OpKind::kConcat, {x2, x3}, Axis(0))}, Axis(0)));
  }
  EXPECT_NE(Prove(a, b).outcome, ProofOutcome::kProved);
}

TEST_F(ProverTest, ChannelConcatLawNeedsDenseConvolutions) {
  // conv(i1,w)+conv(i2,w) = conv(cat_1(i1,i2), cat_1(w,w)) holds for a dense
  // weight and fails for a depthwise one (the grouping changes).
  auto build = [](std::vector<int64_t> wdims, G& a, G& b) {
    auto i1 = a.In("i1", {2, 4, 5, 5}), i2 = a.In("i2", {2, 4, 5, 5});
    auto w = a.W("w", wdims);
    a.Out(a.Op(OpKind::kEwAdd, {a.Op(OpKind::kConv2D, {i1, w}, OpParams{}), a.Op(OpKind::kConv2D, {i2, w}, OpParams{})}));
    auto j1 = b.In("i1", {2, 4, 5, 5}), j2 = b.In("i2", {2, 4, 5, 5});
    auto v = b.W("w", wdims);
    b.Out(b.Op(OpKind::kConv2D, {b.Op(OpKind::kConcat, {j1, j2}, Axis(1)), b.Op(OpKind::kConcat, {v, v}, Axis(1))}, OpParams{}));
  };
  G dense_a, dense_b;
  build({4, 4, 3, 3}, dense_a, dense_b);
  ProofResult dense = Prove(dense_a, dense_b);
  EXPECT_EQ(dense.outcome, ProofOutcome::kProved);
  // The group count stays a condition, and so do the equal halves: with
  // halves of different widths the concats' split points need not align.
  EXPECT_EQ(DescribeConditions(dense.conditions.source), "conv2d(1,1,0,0,1) conv2d(1,1,0,0,1) ewadd()");
  EXPECT_EQ(DescribeConditions(dense.conditions.target), "concat(1,1) concat(1,1) conv2d(1,1,0,0,1)");
  G depthwise_a, depthwise_b;
  build({4, 1, 3, 3}, depthwise_a, depthwise_b);
  EXPECT_NE(Prove(depthwise_a, depthwise_b).outcome, ProofOutcome::kProved);
}

// Swapping the halves of both concats under a matmul holds when the halves
// align. Proved at equal halves, the rule must keep that fact: the fuzzer found
// it false at x1 [6,2], x2 [6,3], w1 [3,3], w2 [2,3] (each concat's halves
// differ, alike, but x1's columns meet w1's and w2's rows) when the sum law
// held for any halves.
TEST_F(ProverTest, SwappingConcatHalvesUnderAMatMulKeepsTheirEqualShapes) {
  G a, b;
  {
    auto x1 = a.In("x1", {2, 4}), x2 = a.In("x2", {2, 4}), w1 = a.W("w1", {4, 4}), w2 = a.W("w2", {4, 4});
    a.Out(a.Op(OpKind::kMatMul, {a.Op(OpKind::kConcat, {x1, x2}, Axis(1)), a.Op(OpKind::kConcat, {w1, w2}, Axis(0))}));
  }
  {
    auto x1 = b.In("x1", {2, 4}), x2 = b.In("x2", {2, 4}), w1 = b.W("w1", {4, 4}), w2 = b.W("w2", {4, 4});
    b.Out(b.Op(OpKind::kMatMul, {b.Op(OpKind::kConcat, {x2, x1}, Axis(1)), b.Op(OpKind::kConcat, {w2, w1}, Axis(0))}));
  }
  ProofResult r = Prove(a, b);
  ASSERT_EQ(r.outcome, ProofOutcome::kProved) << r.detail;
  EXPECT_THAT(r.axioms_used, Contains("matmul_concat_sum"));
  EXPECT_EQ(DescribeConditions(r.conditions.source), "concat(1,1) concat(0,1) matmul(0)");
}

TEST_F(ProverTest, TheConcatInterchangeLeavesTheConcatsWithUnequalHalvesOpen) {
  // The interchange is stated where the inner concats have equal halves; the
  // outer concats (2 rows on 4) may have any. Opening every concat fails, so
  // the proof opens just those whose halves differ.
  G a, b;
  {
    auto x1 = a.In("x1", {2, 4}), x2 = a.In("x2", {2, 4}), w2 = a.W("w2", {4, 4}), w3 = a.W("w3", {4, 4});
    a.Out(a.Op(OpKind::kConcat, {a.Op(OpKind::kConcat, {x1, x2}, Axis(1)), a.Op(OpKind::kConcat, {w2, w3}, Axis(1))},
               Axis(0)));
  }
  {
    auto x1 = b.In("x1", {2, 4}), x2 = b.In("x2", {2, 4}), w2 = b.W("w2", {4, 4}), w3 = b.W("w3", {4, 4});
    b.Out(b.Op(OpKind::kConcat, {b.Op(OpKind::kConcat, {x1, w2}, Axis(0)), b.Op(OpKind::kConcat, {x2, w3}, Axis(0))},
               Axis(1)));
  }
  ProofResult r = Prove(a, b);
  ASSERT_EQ(r.outcome, ProofOutcome::kProved) << r.detail;
  EXPECT_THAT(r.axioms_used, Contains("concat_interchange_even_cols"));
  EXPECT_EQ(DescribeConditions(r.conditions.source), "concat(1,1) concat(1,1) concat(0,?0)");
  EXPECT_EQ(DescribeConditions(r.conditions.target), "concat(0,?0) concat(0,?0) concat(1,1)");
}

TEST_F(ProverTest, AFactTheProofNeedsIsTriedOpenOnce) {
  // Average pooling is a depthwise convolution with the pooling kernel: the
  // law needs the group count, the convolution's only openable fact. Opening
  // every fact opens just that one, so it is one attempt, not two alike.
  G a, b;
  a.Out(a.Op(OpKind::kPoolAvg, {a.In("i1", {2, 4, 5, 5})}, Kernel(3, 3)));
  b.Out(b.Op(OpKind::kConv2D, {b.In("i1", {2, 4, 5, 5}), b.Op(OpKind::kConstPool, {}, ShapeParam({4, 1, 3, 3}))},
             OpParams{}));
  const int64_t before = prover_->queries();
  ProofResult r = Prove(a, b);
  EXPECT_EQ(r.outcome, ProofOutcome::kProved) << r.detail;
  EXPECT_EQ(DescribeConditions(r.conditions.target), "const_pool(4,1,3,3) conv2d(1,1,0,0,4)");
  // The proof (relevant axioms), then the groups opened: relevant axioms, all.
  EXPECT_EQ(prover_->queries() - before, 3);
}

TEST_F(ProverTest, WrongAxiomMakesAFalseRuleProvable) {
  // Why axioms are validated: with "relu is additive" added, relu(x+y) =
  // relu(x)+relu(y) goes through; without it, it does not.
  G a, b;
  {
    auto x1 = a.In("x1", {2, 4}), x2 = a.In("x2", {2, 4});
    a.Out(a.Op(OpKind::kRelu, {a.Op(OpKind::kEwAdd, {x1, x2})}));
  }
  {
    auto x1 = b.In("x1", {2, 4}), x2 = b.In("x2", {2, 4});
    b.Out(b.Op(OpKind::kEwAdd, {b.Op(OpKind::kRelu, {x1}), b.Op(OpKind::kRelu, {x2})}));
  }
  EXPECT_NE(Prove(a, b).outcome, ProofOutcome::kProved);
  ProverOptions options;
  options.extra_axioms_smt2 = {"(assert (forall ((x T) (y T)) (= (relu (ewadd x y)) (ewadd (relu x) (relu y)))))"};
  auto wrong = Prover::Create(options);
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  auto r = (*wrong)->Prove(a.graph, b.graph, {{0, 0}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, ProofOutcome::kProved);
  EXPECT_THAT(r->axioms_used, Contains("extra0"));
}

TEST_F(ProverTest, BadRequestsAreErrors) {
  G a, b;
  a.Out(a.Op(OpKind::kRelu, {a.In("x1", {2, 4})}));
  b.Out(b.Op(OpKind::kRelu, {b.In("x1", {2, 4})}));
  auto out_of_range = prover_->Prove(a.graph, b.graph, {{0, 3}});
  EXPECT_EQ(out_of_range.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out_of_range.status().message(), HasSubstr("out of range"));
  EXPECT_EQ(prover_->Prove(a.graph, b.graph, {}).status().code(), absl::StatusCode::kInvalidArgument);

  G t;
  t.Out(t.Op(OpKind::kMatMul, {t.In("x1", {2, 4}), t.W("w1", {4, 4})}, WithActivation(Activation::kTanh)));
  auto unmodelled = prover_->Prove(t.graph, t.graph, {{0, 0}});
  EXPECT_EQ(unmodelled.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(unmodelled.status().message(), HasSubstr("tanh"));

  G biased;
  biased.Out(biased.Op(OpKind::kConv2D, {biased.In("x1", {1, 4, 5, 5}), biased.W("w1", {4, 4, 3, 3}),
                                         biased.W("w2", {4})}));
  auto bias = prover_->Prove(biased.graph, biased.graph, {{0, 0}});
  EXPECT_EQ(bias.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(bias.status().message(), HasSubstr("bias"));
}

// The families issue 13 found unproved among the size-3 candidates, one
// representative each, with the axiom that now proves it.
TEST_F(ProverTest, ProvesIdentityMatrixLaws) {
  // I*(w+I) = I + w*I needs I*I = I.
  G a, b;
  {
    auto w = a.W("w1", {4, 4});
    auto i = a.Op(OpKind::kConstIMatMul, {}, ShapeParam({4, 4}));
    a.Out(a.Op(OpKind::kEwMul, {i, a.Op(OpKind::kEwAdd, {w, i})}));
  }
  {
    auto w = b.W("w1", {4, 4});
    auto i = b.Op(OpKind::kConstIMatMul, {}, ShapeParam({4, 4}));
    b.Out(b.Op(OpKind::kEwAdd, {i, b.Op(OpKind::kEwMul, {w, i})}));
  }
  ProofResult r = Prove(a, b);
  EXPECT_EQ(r.outcome, ProofOutcome::kProved) << r.detail;
  EXPECT_THAT(r.axioms_used, Contains("ewmul_imatmul_idempotent"));
  // T(w)*I = w*I: the diagonal of a matrix is its transpose's.
  G c, d;
  {
    OpParams t;
    t.perm = {1, 0};
    auto w = c.W("w1", {4, 4});
    c.Out(c.Op(OpKind::kEwMul, {c.Op(OpKind::kTranspose, {w}, t), c.Op(OpKind::kConstIMatMul, {}, ShapeParam({4, 4}))}));
  }
  d.Out(d.Op(OpKind::kEwMul, {d.W("w1", {4, 4}), d.Op(OpKind::kConstIMatMul, {}, ShapeParam({4, 4}))}));
  ProofResult diagonal = Prove(c, d);
  EXPECT_EQ(diagonal.outcome, ProofOutcome::kProved) << diagonal.detail;
  EXPECT_THAT(diagonal.axioms_used, Contains("transpose_diagonal"));
}

TEST_F(ProverTest, ProvesMaxPoolingOfConstants) {
  // concat(max(i), 1) = max(concat(i, 1)) needs max(1) = 1.
  G a, b;
  {
    auto i = a.In("i1", {2, 4, 5, 5});
    auto ones = a.Op(OpKind::kConstOnes, {}, ShapeParam({2, 4, 5, 5}));
    a.Out(a.Op(OpKind::kConcat, {a.Op(OpKind::kPoolMax, {i}, Kernel(3, 3)), ones}, Axis(1)));
  }
  {
    auto i = b.In("i1", {2, 4, 5, 5});
    auto ones = b.Op(OpKind::kConstOnes, {}, ShapeParam({2, 4, 5, 5}));
    b.Out(b.Op(OpKind::kPoolMax, {b.Op(OpKind::kConcat, {i, ones}, Axis(1))}, Kernel(3, 3)));
  }
  ProofResult r = Prove(a, b);
  EXPECT_EQ(r.outcome, ProofOutcome::kProved) << r.detail;
  EXPECT_THAT(r.axioms_used, Contains("pool_max_ones"));
  // max(w + Cp) = Cp + max(w): adding a constant commutes with the maximum.
  G c, d;
  {
    auto cp = c.Op(OpKind::kConstPool, {}, ShapeParam({4, 1, 3, 3}));
    c.Out(c.Op(OpKind::kPoolMax, {c.Op(OpKind::kEwAdd, {c.W("w13", {4, 1, 3, 3}), cp})}, Kernel(3, 3)));
  }
  {
    auto cp = d.Op(OpKind::kConstPool, {}, ShapeParam({4, 1, 3, 3}));
    d.Out(d.Op(OpKind::kEwAdd, {cp, d.Op(OpKind::kPoolMax, {d.W("w13", {4, 1, 3, 3})}, Kernel(3, 3))}));
  }
  ProofResult shifted = Prove(c, d);
  EXPECT_EQ(shifted.outcome, ProofOutcome::kProved) << shifted.detail;
  EXPECT_THAT(shifted.axioms_used, Contains("pool_max_ewadd_const_pool"));
}

TEST_F(ProverTest, ProvesReluThroughOnesTimesAScalar) {
  G a, b;
  a.Out(a.Op(OpKind::kRelu, {a.Op(OpKind::kScalarMul, {a.Op(OpKind::kConstOnes, {}, ShapeParam({2, 4, 5, 5})),
                                                       a.In("s0", {})})}));
  b.Out(b.Op(OpKind::kScalarMul, {b.Op(OpKind::kConstOnes, {}, ShapeParam({2, 4, 5, 5})),
                                  b.Op(OpKind::kRelu, {b.In("s0", {})})}));
  ProofResult r = Prove(a, b);
  EXPECT_EQ(r.outcome, ProofOutcome::kProved) << r.detail;
  EXPECT_THAT(r.axioms_used, Contains("relu_smul_ones"));
}

TEST_F(ProverTest, ProvesLawsOfTheIdentityKernelAsData) {
  // conv_relu(Ci, w) = conv(Ci, relu w): each output is one entry of w or 0.
  G a, b;
  {
    auto ci = a.Op(OpKind::kConstIConv, {}, ShapeParam({4, 4, 3, 3}));
    a.Out(a.Op(OpKind::kConv2D, {ci, a.W("w6", {4, 4, 3, 3})}, WithActivation(Activation::kRelu)));
  }
  {
    auto ci = b.Op(OpKind::kConstIConv, {}, ShapeParam({4, 4, 3, 3}));
    b.Out(b.Op(OpKind::kConv2D, {ci, b.Op(OpKind::kRelu, {b.W("w6", {4, 4, 3, 3})})}, OpParams{}));
  }
  ProofResult r = Prove(a, b);
  EXPECT_EQ(r.outcome, ProofOutcome::kProved) << r.detail;
  EXPECT_THAT(r.axioms_used, Contains("relu_conv_iconv_input"));
  // conv_relu(Ci, w*Ci) = relu(w*Ci): the centre diagonal stays in place.
  G c, d;
  {
    auto ci = c.Op(OpKind::kConstIConv, {}, ShapeParam({4, 4, 3, 3}));
    c.Out(c.Op(OpKind::kConv2D, {ci, c.Op(OpKind::kEwMul, {c.W("w6", {4, 4, 3, 3}), ci})}, WithActivation(Activation::kRelu)));
  }
  {
    auto ci = d.Op(OpKind::kConstIConv, {}, ShapeParam({4, 4, 3, 3}));
    d.Out(d.Op(OpKind::kRelu, {d.Op(OpKind::kEwMul, {d.W("w6", {4, 4, 3, 3}), ci})}));
  }
  ProofResult diagonal = Prove(c, d);
  EXPECT_EQ(diagonal.outcome, ProofOutcome::kProved) << diagonal.detail;
  EXPECT_THAT(diagonal.axioms_used, Contains("conv_diagonals"));
}

TEST_F(ProverTest, ConcatOfProductsIsAProductOfConcats) {
  // concat(a*b, c*d) = concat(a,c) * concat(b,d), with halves of equal and
  // of unequal shape and as a three-way concat; concat_ewmul covers them.
  auto build = [](std::vector<int64_t> second, int ways, G& a, G& b) {
    std::vector<TensorRef> products, lefts, rights;
    for (int k = 0; k < ways; ++k) {
      auto dims = k == 1 ? second : std::vector<int64_t>{2, 4};
      auto l = a.In("l" + std::to_string(k), dims), r = a.In("r" + std::to_string(k), dims);
      products.push_back(a.Op(OpKind::kEwMul, {l, r}));
      lefts.push_back(b.In("l" + std::to_string(k), dims));
      rights.push_back(b.In("r" + std::to_string(k), dims));
    }
    a.Out(a.Op(OpKind::kConcat, products, Axis(0)));
    b.Out(b.Op(OpKind::kEwMul, {b.Op(OpKind::kConcat, lefts, Axis(0)), b.Op(OpKind::kConcat, rights, Axis(0))}));
  };
  for (const auto& [second, ways] : std::vector<std::pair<std::vector<int64_t>, int>>{
           {{2, 4}, 2}, {{4, 4}, 2}, {{2, 4}, 3}, {{4, 4}, 3}}) {
    G a, b;
    build(second, ways, a, b);
    ProofResult r = Prove(a, b);
    EXPECT_EQ(r.outcome, ProofOutcome::kProved) << ways << "-way: " << r.detail;
    EXPECT_THAT(r.axioms_used, Contains("concat_ewmul"));
  }
  // With broadcasting it is true where both sides exist, but a law would
  // need which axes broadcast, and ewmul_bcast's signature does not say.
  G a, b;
  {
    auto x = a.In("x", {2, 1}), y = a.In("y", {2, 4}), z = a.In("z", {2, 1}), w = a.In("w", {2, 4});
    a.Out(a.Op(OpKind::kConcat, {a.Op(OpKind::kEwMul, {x, y}), a.Op(OpKind::kEwMul, {z, w})}, Axis(0)));
  }
  {
    auto x = b.In("x", {2, 1}), y = b.In("y", {2, 4}), z = b.In("z", {2, 1}), w = b.In("w", {2, 4});
    b.Out(b.Op(OpKind::kEwMul, {b.Op(OpKind::kConcat, {x, z}, Axis(0)), b.Op(OpKind::kConcat, {y, w}, Axis(0))}));
  }
  EXPECT_NE(Prove(a, b).outcome, ProofOutcome::kProved);
}

TEST(Axioms, NamesAreUniqueAndVersionIsStable) {
  std::set<std::string> names;
  for (const AxiomInfo& a : AxiomList()) EXPECT_TRUE(names.insert(a.name).second) << a.name;
  EXPECT_EQ(names.size(), 74u);
  // Pinned: proofs record this version, and a change to any axiom's name or
  // law must change it (stored proofs are then redone). Update it with the
  // axioms, deliberately.
  EXPECT_EQ(AxiomSetVersion(), "axioms-74-bfa82a845e1c");
  // Readers of rules trust proofs of the sets records/axiom_versions lists:
  // this one must be among them.
  EXPECT_TRUE(records::KnownAxiomSetVersion(AxiomSetVersion())) << records::KnownAxiomSetVersions();
  z3::context ctx;
  Symbols symbols(ctx);
  EXPECT_EQ(BuildAxioms(symbols, {"no_such_axiom"}).status().code(), absl::StatusCode::kInvalidArgument);
  auto some = BuildAxioms(symbols, {"ewadd_comm", "relu_conv"});
  ASSERT_TRUE(some.ok());
  ASSERT_EQ(some->size(), 2u);
  EXPECT_EQ((*some)[1].functions, (std::set<std::string>{"conv2d", "relu"}));
}

}  // namespace
}  // namespace taso::verifier
