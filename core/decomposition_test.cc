#include "core/decomposition.h"

#include "core/graph_proto.h"
#include "core/interpreter.h"
#include "core/op_registry.h"
#include "core/proof_signature.h"
#include "core/random_inputs.h"
#include "core/rule_sexpr.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/graph_builder.h"
#include "testing/op_params.h"

namespace taso {
namespace {

using ::taso::testing::WithActivation;
using ::testing::HasSubstr;
using G = ::taso::testing::GraphBuilder;

TensorType F32(std::vector<int64_t> dims) { return TensorType::RowMajor(DType::kFloat32, std::move(dims)); }

TEST(DecompositionTest, FusedGemmIsAProductPlusABiasThenItsActivation) {
  auto g = DecompositionOf(OpKind::kFusedGemm, WithActivation(Activation::kTanh), {F32({2, 4}), F32({4, 3}), F32({3})});
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<std::string> ops;
  for (const Node& n : g->nodes()) ops.push_back(OpLabel(n.kind, n.params));
  EXPECT_THAT(ops, ::testing::ElementsAre("input", "input", "input", "matmul[act=none]", "ewadd", "tanh"));
  // Operand i is node i, named for it.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(g->node(i).name, DecompositionInputName(i));
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->type(g->outputs()[0].tensor).dims, (std::vector<int64_t>{2, 3}));
  // No activation: no activation node.
  auto plain = DecompositionOf(OpKind::kFusedGemm, OpParams{}, {F32({2, 4}), F32({4, 3}), F32({2, 3})});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->num_nodes(), 5);
}

TEST(DecompositionTest, ShapeInferenceIsTheDecompositionsAndRefusesWhatGemmCannotTake) {
  auto out = InferOutputTypes(OpKind::kFusedGemm, OpParams{}, {F32({2, 4}), F32({4, 3}), F32({1, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{2, 3}));
  // The bias must not widen the product (Gemm's unidirectional broadcast).
  auto wide = InferOutputTypes(OpKind::kFusedGemm, OpParams{}, {F32({1, 4}), F32({4, 3}), F32({2, 3})});
  ASSERT_FALSE(wide.ok());
  EXPECT_THAT(wide.status().message(), HasSubstr("fused_gemm: c does not broadcast"));
  auto batched = InferOutputTypes(OpKind::kFusedGemm, OpParams{}, {F32({5, 2, 4}), F32({4, 3}), F32({3})});
  ASSERT_FALSE(batched.ok());
  EXPECT_THAT(batched.status().message(), HasSubstr("a and b must be matrices"));
  auto inner = InferOutputTypes(OpKind::kFusedGemm, OpParams{}, {F32({2, 5}), F32({4, 3}), F32({3})});
  ASSERT_FALSE(inner.ok());
  EXPECT_THAT(inner.status().message(), HasSubstr("inner dimensions differ"));
  EXPECT_FALSE(InferOutputTypes(OpKind::kFusedGemm, OpParams{}, {F32({2, 4}), F32({4, 3})}).ok());
  EXPECT_FALSE(IsComposite(OpKind::kMatMul));
  EXPECT_FALSE(DecompositionOf(OpKind::kMatMul, OpParams{}, {F32({2, 4}), F32({4, 3})}).ok());
}

// The interpreters compute a composite as its decomposition; checked here
// against the sum written out by hand.
TEST(DecompositionTest, InterpretersComputeActOfProductPlusBias) {
  G fused;
  fused.Out(fused.Op(OpKind::kFusedGemm, {fused.In("x", {2, 4}), fused.W("w", {4, 3}), fused.W("b", {3})},
                     WithActivation(Activation::kRelu)));
  const auto feeds = DeterministicFloatFeeds(fused.graph, 5);
  auto out = EvaluateFloat(fused.graph, feeds);
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& x = feeds.at("x").data;
  const auto& w = feeds.at("w").data;
  const auto& b = feeds.at("b").data;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      float sum = b[j];
      for (int k = 0; k < 4; ++k) sum += x[i * 4 + k] * w[k * 3 + j];
      EXPECT_FLOAT_EQ((*out)[0].data[i * 3 + j], std::max(sum, 0.f)) << i << "," << j;
    }
  }
  // int32, as the generator fingerprints: equal to the primitives' graph.
  G parts;
  parts.Out(parts.Op(OpKind::kRelu, {parts.Op(OpKind::kEwAdd, {parts.Op(OpKind::kMatMul, {parts.In("x", {2, 4}),
                                                                                           parts.W("w", {4, 3})}),
                                                                parts.W("b", {3})})}));
  IntOptions polynomial;
  polynomial.relu_as_polynomial = true;
  const auto int_feeds = DeterministicIntFeeds(fused.graph, 9);
  auto a = EvaluateInt(fused.graph, int_feeds, polynomial);
  auto c = EvaluateInt(parts.graph, int_feeds, polynomial);
  ASSERT_TRUE(a.ok() && c.ok());
  EXPECT_EQ((*a)[0].data, (*c)[0].data);
}

TEST(DecompositionTest, ProofSignaturesAreTheDecompositionsInOrder) {
  auto sigs = NodeSignatures(OpKind::kFusedGemm, WithActivation(Activation::kRelu),
                             {F32({2, 4}), F32({4, 3}), F32({3})}, 1);
  ASSERT_TRUE(sigs.ok()) << sigs.status();
  std::vector<std::string> names;
  for (const ProofSignature& s : *sigs) names.push_back(s.ToString());
  EXPECT_THAT(names, ::testing::ElementsAre("matmul(0)", "ewadd_bcast()", "relu()"));
}

TEST(DecompositionTest, FusedGemmSurvivesTheProtoAndTheRuleSyntax) {
  G g;
  g.Out(g.Op(OpKind::kFusedGemm, {g.In("x", {2, 4}), g.W("w", {4, 3}), g.W("b", {3})},
             WithActivation(Activation::kSigmoid)));
  auto back = GraphFromProto(GraphToProto(g.graph));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->node(3).kind, OpKind::kFusedGemm);
  EXPECT_EQ(back->node(3).params.activation, Activation::kSigmoid);
  const std::string text = "(fused_gemm 2 ?x@2_4 ?w@4_3 ?b@3)=>(relu (ewadd (matmul 0 ?x@2_4 ?w@4_3) ?b@3))";
  auto rules = RulesFromSexpr(text);
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 1u);
  auto again = RuleToSexpr((*rules)[0]);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, text);
}

}  // namespace
}  // namespace taso
