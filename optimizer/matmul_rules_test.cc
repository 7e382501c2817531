// The matmul rewrites (matmul_rules.h) found by both searches, and CSE.
// Costs come from the profiler's analytic backend in-process: a real cost
// model, deterministic, so whether a merge pays does not depend on timing
// noise of this shared 2-core machine (bench/matmul_merge_bench measures
// the same graphs with the cpu backend).
#include "optimizer/passes/matmul_rules.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimizer/rewrite/apply.h"
#include "optimizer/backtrack/backtrack.h"
#include "optimizer/rewrite/match.h"
#include "optimizer/passes/cse.h"
#include "optimizer/eqsat/eqsat.h"
#include "optimizer/passes/numeric_check.h"
#include "optimizer/passes/passes.h"
#include "optimizer/passes/structural_rules.h"
#include "optimizer/rewrite/test_util.h"
#include "testing/graph_builder.h"

namespace taso::optimizer {
namespace {

using ::taso::testing::GraphBuilder;
using testing::ExpectEquivalent;

int Count(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == kind;
  return n;
}

// Q/K/V-like: three matmuls of one input, each with a bias add, then a
// product of the three (so all are used).
Graph ThreeProjections(int64_t rows = 16, int64_t width = 64) {
  GraphBuilder b;
  TensorRef x = b.In("x", {rows, width});
  std::vector<TensorRef> heads;
  for (const char* name : {"q", "k", "v"}) {
    TensorRef w = b.W(absl::StrCat("w", name), {width, width});
    TensorRef bias = b.W(absl::StrCat("b", name), {width});
    heads.push_back(b.Op(OpKind::kEwAdd, {b.Op(OpKind::kMatMul, {x, w}), bias}));
  }
  TensorRef qk = b.Op(OpKind::kEwMul, {heads[0], heads[1]});
  b.Out(b.Op(OpKind::kEwMul, {qk, heads[2]}));
  return std::move(b.graph);
}

// One LSTM step: four gates, each matmul(x, Wi) + matmul(h, Ui).
Graph LstmStep(int64_t rows = 1, int64_t width = 64) {
  GraphBuilder b;
  TensorRef x = b.In("x", {rows, width}), h = b.In("h", {rows, width}), c = b.In("c", {rows, width});
  std::vector<TensorRef> gates;
  for (int g = 0; g < 4; ++g) {
    TensorRef wx = b.W(absl::StrCat("wx", g), {width, width});
    TensorRef wh = b.W(absl::StrCat("wh", g), {width, width});
    gates.push_back(b.Op(OpKind::kEwAdd, {b.Op(OpKind::kMatMul, {x, wx}), b.Op(OpKind::kMatMul, {h, wh})}));
  }
  TensorRef i = b.Op(OpKind::kSigmoid, {gates[0]}), f = b.Op(OpKind::kSigmoid, {gates[1]});
  TensorRef o = b.Op(OpKind::kSigmoid, {gates[2]}), g = b.Op(OpKind::kTanh, {gates[3]});
  TensorRef c2 = b.Op(OpKind::kEwAdd, {b.Op(OpKind::kEwMul, {f, c}), b.Op(OpKind::kEwMul, {i, g})});
  b.Out(b.Op(OpKind::kEwMul, {o, b.Op(OpKind::kTanh, {c2})}));
  b.Out(c2);
  return std::move(b.graph);
}

class MatMulRulesTest : public testing::AnalyticProfilerTest {
 protected:
  Graph Backtrack(const Graph& g) {
    CostModel cost(client_.get());
    auto r = BacktrackSearch(g, StructuralRewrites(g), cost);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return g;
    EXPECT_LE(r->report.best_cost_ms, r->report.initial_cost_ms);
    return r->best;
  }
  Graph Eqsat(const Graph& g) {
    CostModel cost(client_.get());
    auto r = EqsatSearch(g, StructuralRewrites(g), cost);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return g;
    EXPECT_NE(r->report.stop_reason, SearchStop::kNodeLimit) << r->report.stop_detail;
    return r->best;
  }
  // The optimizer's own check, after constant folding as it runs it.
  void ExpectChecked(const Graph& original, const Graph& optimized) {
    ExpectEquivalent(original, optimized);
    auto folded = FoldConstants(optimized);
    ASSERT_TRUE(folded.ok()) << folded.status();
    NumericCheck check = CompareGraphs(original, folded->graph);
    EXPECT_TRUE(check.ran && check.equal) << check.reason;
  }
};

TEST_F(MatMulRulesTest, RulesAreMadeForSharedInputsOnly) {
  GraphBuilder b;
  TensorRef x = b.In("x", {4, 8}), z = b.In("z", {4, 8});
  b.Out(b.Op(OpKind::kMatMul, {x, b.W("w1", {8, 8})}));
  b.Out(b.Op(OpKind::kMatMul, {z, b.W("w2", {8, 8})}));
  EXPECT_TRUE(MatMulRewrites(b.graph).empty());
  b.Out(b.Op(OpKind::kMatMul, {x, b.W("w3", {8, 8})}));
  std::vector<RewriteRule> rules = MatMulRewrites(b.graph);
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].name, "merge:matmul2x2[act=none]");
  EXPECT_EQ(rules[0].lhs().outputs().size(), 2u);
  // Interchangeable outputs: x's three matmuls pair up in one order each.
  ASSERT_TRUE(rules[0].symmetric_outputs);
  EXPECT_EQ(FindMatches(rules[0], GraphIndex(b.graph)).size(), 1u);
  b.Out(b.Op(OpKind::kMatMul, {x, b.W("w4", {8, 8})}));
  EXPECT_EQ(FindMatches(rules[0], GraphIndex(b.graph)).size(), 3u);
  rules[0].symmetric_outputs = false;
  EXPECT_EQ(FindMatches(rules[0], GraphIndex(b.graph)).size(), 6u);
}

TEST_F(MatMulRulesTest, BacktrackingMergesThreeProjectionsWithTheirBiases) {
  const Graph g = ThreeProjections();
  const Graph best = Backtrack(g);
  EXPECT_EQ(Count(best, OpKind::kMatMul), 1);
  EXPECT_EQ(Count(best, OpKind::kEwAdd), 1) << "the bias adds follow the split";
  ExpectChecked(g, best);
}

TEST_F(MatMulRulesTest, EqsatMergesThreeProjectionsWithTheirBiases) {
  const Graph g = ThreeProjections();
  const Graph best = Eqsat(g);
  EXPECT_EQ(Count(best, OpKind::kMatMul), 1);
  EXPECT_EQ(Count(best, OpKind::kEwAdd), 1);
  ExpectChecked(g, best);
}

TEST_F(MatMulRulesTest, BacktrackingMergesAnLstmStepToTwoMatMuls) {
  const Graph g = LstmStep();
  ASSERT_EQ(Count(g, OpKind::kMatMul), 8);
  const Graph best = Backtrack(g);
  EXPECT_EQ(Count(best, OpKind::kMatMul), 2);
  ExpectChecked(g, best);
}

TEST_F(MatMulRulesTest, EqsatMergesAnLstmStepToTwoMatMuls) {
  const Graph g = LstmStep();
  const Graph best = Eqsat(g);
  EXPECT_EQ(Count(best, OpKind::kMatMul), 2);
  ExpectChecked(g, best);
}

// NAS-RNN-like: eight matmuls of x, their results summed.
Graph EightBranches() {
  GraphBuilder b;
  TensorRef x = b.In("x", {1, 64});
  TensorRef sum;
  for (int k = 0; k < 8; ++k) {
    TensorRef m = b.Op(OpKind::kTanh, {b.Op(OpKind::kMatMul, {x, b.W(absl::StrCat("w", k), {64, 64})})});
    sum = k == 0 ? m : b.Op(OpKind::kEwAdd, {sum, m});
  }
  b.Out(sum);
  return std::move(b.graph);
}

TEST_F(MatMulRulesTest, EightMatMulsOfOneInputMergeInBothSearches) {
  const Graph g = EightBranches();
  std::vector<RewriteRule> rules = MatMulRewrites(g);
  int all_at_once = 0;
  for (const RewriteRule& r : rules) {
    if (r.lhs().outputs().size() != 8) continue;
    ++all_at_once;
    // One order of the eight roots; the fused form matches once fused.
    const bool fused = r.name.find("act=tanh") != std::string::npos;
    EXPECT_EQ(FindMatches(r, GraphIndex(g)).size(), fused ? 0u : 1u) << r.name;
  }
  EXPECT_EQ(all_at_once, 4);  // as the graph has them and with the tanh fused; each as a chain of splits and sized
  for (const Graph& best : {Backtrack(g), Eqsat(g)}) {
    EXPECT_EQ(Count(best, OpKind::kMatMul), 1);
    ExpectChecked(g, best);
  }
}

// The self-attention of models/build_structures.py transformer_layer as the
// ONNX import gives it (--small sizes): Q/K/V are MatMul + bias Add of one
// 2-D input, each reshaped to heads and transposed (K to [heads, dh, seq]),
// then the scores and context matmuls and the output projection.
Graph AttentionLayer(int64_t seq = 16, int64_t hidden = 64, int64_t heads = 4) {
  GraphBuilder b;
  const int64_t dh = hidden / heads;
  TensorRef x = b.In("x", {seq, hidden});
  auto linear = [&](TensorRef in, const std::string& name) {
    return b.Op(OpKind::kEwAdd, {b.Op(OpKind::kMatMul, {in, b.W("w" + name, {hidden, hidden})}),
                                 b.W("b" + name, {hidden})});
  };
  auto to_heads = [&](TensorRef t, std::vector<int> perm) {
    OpParams reshape, transpose;
    reshape.shape = {seq, heads, dh};
    transpose.perm = std::move(perm);
    return b.Op(OpKind::kTranspose, {b.Op(OpKind::kReshape, {t}, reshape)}, transpose);
  };
  TensorRef q = to_heads(linear(x, "q"), {1, 0, 2});
  TensorRef k = to_heads(linear(x, "k"), {1, 2, 0});
  TensorRef v = to_heads(linear(x, "v"), {1, 0, 2});
  TensorRef scores = b.Op(OpKind::kEwMul, {b.Op(OpKind::kMatMul, {q, k}), b.W("scale", {})});
  OpParams back, flat;
  back.perm = {1, 0, 2};
  flat.shape = {seq, hidden};
  TensorRef ctx = b.Op(OpKind::kTranspose, {b.Op(OpKind::kMatMul, {scores, v})}, back);
  b.Out(linear(b.Op(OpKind::kReshape, {ctx}, flat), "o"));
  return std::move(b.graph);
}

// Matmuls whose left operand is graph input `name`.
int MatMulsOf(const Graph& g, const std::string& name) {
  int n = 0;
  for (const Node& node : g.nodes()) {
    if (node.kind != OpKind::kMatMul) continue;
    const Node& in = g.node(node.inputs[0].node);
    n += in.kind == OpKind::kInput && in.name == name;
  }
  return n;
}

TEST_F(MatMulRulesTest, BothSearchesMergeTheAttentionLayersQkvProjections) {
  const Graph g = AttentionLayer();
  ASSERT_EQ(MatMulsOf(g, "x"), 3);
  for (const Graph& best : {Backtrack(g), Eqsat(g)}) {
    EXPECT_EQ(MatMulsOf(best, "x"), 1) << "Q, K and V in one matmul";
    EXPECT_EQ(Count(best, OpKind::kMatMul), 4);  // + scores, context, output projection
    ExpectChecked(g, best);
  }
}

// models/build_structures.py rnn_cell (--small --steps 3): an LSTM unrolled
// over steps, one weight per gate shared by every step, each gate
// (matmul(x_t, Wx) + matmul(h, Wh)) + bias.
Graph UnrolledLstm(int steps = 3, int64_t width = 32) {
  GraphBuilder b;
  std::vector<TensorRef> wx, wh, bias;
  for (int g = 0; g < 4; ++g) {
    wx.push_back(b.W(absl::StrCat("wx", g), {width, width}));
    wh.push_back(b.W(absl::StrCat("wh", g), {width, width}));
    bias.push_back(b.W(absl::StrCat("b", g), {width}));
  }
  TensorRef h = b.In("h0", {1, width}), c = b.In("c0", {1, width});
  for (int t = 0; t < steps; ++t) {
    TensorRef x = b.In(absl::StrCat("x", t), {1, width});
    std::vector<TensorRef> pre;
    for (int g = 0; g < 4; ++g) {
      TensorRef sum = b.Op(OpKind::kEwAdd, {b.Op(OpKind::kMatMul, {x, wx[g]}), b.Op(OpKind::kMatMul, {h, wh[g]})});
      pre.push_back(b.Op(OpKind::kEwAdd, {sum, bias[g]}));
    }
    TensorRef i = b.Op(OpKind::kSigmoid, {pre[0]}), f = b.Op(OpKind::kSigmoid, {pre[1]});
    TensorRef gg = b.Op(OpKind::kTanh, {pre[2]}), o = b.Op(OpKind::kSigmoid, {pre[3]});
    c = b.Op(OpKind::kEwAdd, {b.Op(OpKind::kEwMul, {f, c}), b.Op(OpKind::kEwMul, {i, gg})});
    h = b.Op(OpKind::kEwMul, {o, b.Op(OpKind::kTanh, {c})});
  }
  b.Out(h);
  b.Out(c);
  return std::move(b.graph);
}

// Whether a matmul reads a concat of `count` of the graph's inputs (a batch).
bool HasBatchOfInputs(const Graph& g, size_t count) {
  for (const Node& n : g.nodes()) {
    if (n.kind != OpKind::kMatMul) continue;
    const Node& stacked = g.node(n.inputs[0].node);
    if (stacked.kind != OpKind::kConcat || stacked.inputs.size() != count) continue;
    bool inputs = true;
    for (const TensorRef& in : stacked.inputs) inputs &= g.node(in.node).kind == OpKind::kInput;
    if (inputs) return true;
  }
  return false;
}

TEST_F(MatMulRulesTest, BothSearchesMergeTheGatesOfAnUnrolledLstmAsFarAsAHandMerge) {
  const Graph g = UnrolledLstm();
  ASSERT_EQ(Count(g, OpKind::kMatMul), 24);
  ASSERT_EQ(Count(g, OpKind::kEwAdd), 27);
  for (const bool eqsat : {false, true}) {
    auto flat = FlattenSplits(eqsat ? Eqsat(g) : Backtrack(g));
    ASSERT_TRUE(flat.ok()) << flat.status();
    const Graph& best = flat->graph;
    EXPECT_EQ(Count(best, OpKind::kEwAdd), 3 * 3) << "x+h, bias and the cell's add per step";
    if (!eqsat) {
      // As models/build_structures.py rnn_cell --merged writes it, per step:
      // matmul(x_t, Wx) + matmul(h, Wh), one bias add, one split in four.
      for (int t = 0; t < 3; ++t) EXPECT_EQ(MatMulsOf(best, absl::StrCat("x", t)), 1) << "step " << t;
      EXPECT_EQ(Count(best, OpKind::kMatMul), 6);
      EXPECT_EQ(Count(best, OpKind::kSplit), 3);
    } else {
      // Further: two steps' x_t stacked into one product with the merged
      // Wx (SharedWeightBatch), the third step's x_t as the hand merge has it.
      EXPECT_TRUE(HasBatchOfInputs(best, 2));
      EXPECT_EQ(MatMulsOf(best, "x0") + MatMulsOf(best, "x1") + MatMulsOf(best, "x2"), 1);
      EXPECT_EQ(Count(best, OpKind::kMatMul), 5);
      EXPECT_EQ(Count(best, OpKind::kSplit), 4);
    }
    ExpectChecked(g, best);
  }
}

// An Elman RNN unrolled over `steps`: h_t = tanh(x_t W + h_{t-1} U). The
// x_t W products are independent of one another; the h U products are not.
Graph UnrolledRnn(int steps = 4, int64_t width = 64) {
  GraphBuilder b;
  TensorRef w = b.W("w", {width, width}), u = b.W("u", {width, width});
  TensorRef h = b.In("h0", {1, width});
  for (int t = 0; t < steps; ++t) {
    TensorRef x = b.In(absl::StrCat("x", t), {1, width});
    h = b.Op(OpKind::kTanh, {b.Op(OpKind::kEwAdd, {b.Op(OpKind::kMatMul, {x, w}), b.Op(OpKind::kMatMul, {h, u})})});
  }
  b.Out(h);
  return std::move(b.graph);
}

TEST_F(MatMulRulesTest, BatchRulesAreMadeForIndependentProductsOfOneWeight) {
  const Graph g = UnrolledRnn();
  std::vector<std::string> batches;
  for (const RewriteRule& r : MatMulRewrites(g)) {
    if (r.name.rfind("batch:", 0) == 0) batches.push_back(r.name);
  }
  // w has four independent readers (pairs, all four, all four sized); u's
  // readers each depend on the one before, so u alone would make none.
  EXPECT_THAT(batches, ::testing::UnorderedElementsAre("batch:matmul2x2[act=none]", "batch:matmul2x2*4[act=none]",
                                                     "batch:matmul2x2*4[sizes,x=1x64,w=64x64][act=none]"));
  // The pair rule matches u's readers too (it is shape-generic), and each
  // such match is refused as cyclic.
  const RewriteRule* pair = nullptr;
  std::vector<RewriteRule> rules = MatMulRewrites(g);
  for (const RewriteRule& r : rules) {
    if (r.name == "batch:matmul2x2[act=none]") pair = &r;
  }
  ASSERT_NE(pair, nullptr);
  int applied = 0, cyclic = 0;
  for (const Match& m : FindMatches(*pair, GraphIndex(g))) {
    auto r = ApplyRewrite(g, *pair, m);
    if (r.ok()) {
      ++applied;
      ExpectEquivalent(g, *r);
    } else {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
      ++cyclic;
    }
  }
  EXPECT_EQ(applied, 6) << "every pair of the four x_t W products";
  EXPECT_EQ(cyclic, 6) << "every pair of the h U products";
}

TEST_F(MatMulRulesTest, BothSearchesBatchTheStepsOfAnUnrolledRnn) {
  const Graph g = UnrolledRnn();
  ASSERT_EQ(Count(g, OpKind::kMatMul), 8);
  for (const Graph& best : {Backtrack(g), Eqsat(g)}) {
    EXPECT_TRUE(HasBatchOfInputs(best, 4)) << "x_0..x_3 stacked, one product with w";
    EXPECT_EQ(Count(best, OpKind::kMatMul), 5) << "the batch and the four h U products";
    ExpectChecked(g, best);
  }
}

// matmul(transpose(a), w) and matmul(x, transpose(v)), v a weight.
Graph TransposedOperands() {
  GraphBuilder b;
  OpParams swap;
  swap.perm = {1, 0};
  TensorRef a = b.In("a", {64, 16});
  TensorRef left = b.Op(OpKind::kMatMul, {b.Op(OpKind::kTranspose, {a}, swap), b.W("w", {64, 32})});
  TensorRef v = b.W("v", {48, 32});
  b.Out(b.Op(OpKind::kMatMul, {left, b.Op(OpKind::kTranspose, {v}, swap)}));
  return std::move(b.graph);
}

// Copies of a non-constant operand with its axes moved.
int CopiesOfInputs(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes()) {
    n += node.kind == OpKind::kTranspose && node.params.shuffle &&
         g.node(node.inputs[0].node).kind == OpKind::kInput;
  }
  return n;
}

TEST_F(MatMulRulesTest, TransposesFoldIntoMatMulLayouts) {
  const Graph g = TransposedOperands();
  ASSERT_EQ(CopiesOfInputs(g), 1);
  EXPECT_EQ(MatMulRewrites(g).size(), 2u);  // left and right operand
  for (const Graph& best : {Backtrack(g), Eqsat(g)}) {
    // The input's transpose is a view the matmul reads column-major. The
    // weight's is free either way (computed from weights only): constant
    // folding materialises it where weights carry values.
    EXPECT_EQ(CopiesOfInputs(best), 0);
    EXPECT_EQ(Count(best, OpKind::kMatMul), 2);
    ExpectChecked(g, best);
  }
}

TEST(CseTest, MergesDuplicatedSubgraphsAndKeepsDistinctOnes) {
  GraphBuilder b;
  TensorRef x = b.In("x", {4, 8});
  TensorRef w = b.W("w", {8, 8});
  // Two copies of relu(matmul(x, w)) + x: three operators each.
  auto branch = [&] { return b.Op(OpKind::kEwAdd, {b.Op(OpKind::kRelu, {b.Op(OpKind::kMatMul, {x, w})}), x}); };
  TensorRef first = branch(), second = branch();
  // Distinct: another activation, and the same operator on other operands.
  TensorRef other = b.Op(OpKind::kTanh, {b.Op(OpKind::kMatMul, {x, w})});
  TensorRef swapped = b.Op(OpKind::kEwAdd, {x, first});
  b.Out(b.Op(OpKind::kEwMul, {first, second}));
  b.Out(other);
  b.Out(swapped);
  const Graph& g = b.graph;
  auto r = EliminateCommonSubexpressions(g);
  ASSERT_TRUE(r.ok()) << r.status();
  // The second branch (3) and the tanh branch's matmul (1).
  EXPECT_EQ(r->changed, 4);
  EXPECT_EQ(r->graph.num_ops(), g.num_ops() - 4);
  EXPECT_EQ(Count(r->graph, OpKind::kMatMul), 1);
  EXPECT_EQ(Count(r->graph, OpKind::kTanh), 1);
  EXPECT_EQ(Count(r->graph, OpKind::kEwAdd), 2);  // x + relu(..) and x + first differ in operand order
  ExpectEquivalent(g, r->graph);
  auto again = EliminateCommonSubexpressions(r->graph);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->changed, 0);
}

TEST(CseTest, OpaqueOperatorsAreNotMerged) {
  GraphBuilder b;
  TensorRef x = b.In("x", {4});
  OpParams random;
  random.opaque.op_type = "RandomNormalLike";
  random.opaque.output_types = {testing::F32({4})};
  TensorRef a = b.Op(OpKind::kOpaque, {x}, random), c = b.Op(OpKind::kOpaque, {x}, random);
  b.Out(b.Op(OpKind::kEwAdd, {a, c}));
  auto r = EliminateCommonSubexpressions(b.graph);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->changed, 0);
}

}  // namespace
}  // namespace taso::optimizer
