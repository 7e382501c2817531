// The whole-graph runner computes what the float reference interpreter
// computes (so the graph it times is the graph asked for), skips opaque
// operators saying so, and refuses what it cannot run with a clear status.
#include "profiler/cpu/graph_runner.h"

#include <cmath>

#include "core/interpreter.h"
#include "core/random_inputs.h"
#include "gtest/gtest.h"
#include "testing/graph_builder.h"
#include "testing/op_params.h"
#include "testing/tensor_types.h"

namespace taso::profiler {
namespace {

using ::taso::testing::Axis;
using ::taso::testing::ConvParams;
using ::taso::testing::F32;
using ::taso::testing::GraphBuilder;
using ::taso::testing::Kernel;
using ::taso::testing::Perm;
using ::taso::testing::ShapeParam;
using ::taso::testing::Window;
using ::taso::testing::WithActivation;

void ExpectClose(const FloatTensor& got, const FloatTensor& want, const std::string& what) {
  ASSERT_EQ(got.type.dims, want.type.dims) << what;
  ASSERT_EQ(got.data.size(), want.data.size()) << what;
  int mismatches = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    if (std::abs(got.data[i] - want.data[i]) > 1e-4f * (1 + std::abs(want.data[i]))) {
      if (++mismatches <= 3) ADD_FAILURE() << what << " element " << i << ": " << got.data[i] << " vs " << want.data[i];
    }
  }
  EXPECT_EQ(mismatches, 0) << what;
}

class GraphRunnerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto backend = CpuBackend::Create({.threads = 2});
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = backend->release();
  }
  static void TearDownTestSuite() { delete backend_; }

  void ExpectMatchesInterpreter(const Graph& graph, ViewPolicy views = ViewPolicy::kAlias) {
    auto want = EvaluateFloat(graph, DeterministicFloatFeeds(graph, 1));
    ASSERT_TRUE(want.ok()) << want.status();
    auto got = ExecuteGraphOnCpu(*backend_, graph, 1, views);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i) ExpectClose((*got)[i], (*want)[i], graph.outputs()[i].name);
  }

  static CpuBackend* backend_;
};
CpuBackend* GraphRunnerTest::backend_ = nullptr;

// Convolutions in oneDNN's blocked layouts one after another (no reorder),
// a fused bias and relu, a residual add of two blocked tensors, pooling.
Graph ConvReluChain() {
  GraphBuilder b;
  TensorRef x = b.In("x", {1, 3, 12, 12});
  TensorRef c1 = b.Op(OpKind::kConv2D, {x, b.W("w1", {16, 3, 3, 3}), b.W("b1", {16})},
                      ConvParams(1, Padding::kSame, Activation::kRelu));
  TensorRef c2 = b.Op(OpKind::kConv2D, {c1, b.W("w2", {16, 16, 3, 3})}, ConvParams(2, Padding::kSame, Activation::kRelu));
  TensorRef c3 = b.Op(OpKind::kConv2D, {c2, b.W("w3", {16, 16, 1, 1})}, ConvParams(1, Padding::kSame));
  TensorRef sum = b.Op(OpKind::kEwAdd, {c2, c3});
  TensorRef r = b.Op(OpKind::kRelu, {sum});
  TensorRef pool = b.Op(OpKind::kPoolMax, {r}, Window(2, 2, 2, Padding::kValid));
  b.Out(r).Out(pool);
  return b.graph;
}

TEST_F(GraphRunnerTest, ConvReluChainMatchesInterpreter) { ExpectMatchesInterpreter(ConvReluChain()); }

// Matmul with a fused activation, its output split (views) and concatenated
// back in another order, a transpose that only permutes strides, and a
// matmul reading that transposed view.
TEST_F(GraphRunnerTest, MatmulSplitConcatMatchesInterpreter) {
  GraphBuilder b;
  TensorRef x = b.In("x", {4, 16});
  TensorRef mm = b.Op(OpKind::kMatMul, {x, b.W("w", {16, 32})}, WithActivation(Activation::kRelu));
  OpParams split = Axis(1);
  split.sizes = {12, 20};
  std::vector<TensorRef> parts = b.OpN(OpKind::kSplit, {mm}, split);
  ASSERT_EQ(parts.size(), 2u);
  TensorRef t = b.Op(OpKind::kTanh, {parts[0]});
  TensorRef cat = b.Op(OpKind::kConcat, {parts[1], t}, Axis(1));
  TensorRef out = b.Op(OpKind::kMatMul, {cat, b.W("w2", {32, 8})});
  TensorRef tr = b.Op(OpKind::kTranspose, {mm}, Perm({1, 0}, /*shuffle=*/false));
  TensorRef back = b.Op(OpKind::kMatMul, {tr, b.W("w3", {4, 6})});
  b.Out(out).Out(back).Out(parts[1]);
  ExpectMatchesInterpreter(b.graph);
}

// Views of activations as a merged matmul's search result has them: a split
// read by an element-wise op and a concat, a strided transpose read by a
// relu, one read through a reshape, one read only by a matmul (which ONNX
// Runtime folds into the matmul), and views of weights only.
Graph ViewsOfActivations() {
  GraphBuilder b;
  TensorRef x = b.In("x", {4, 16});
  TensorRef mm = b.Op(OpKind::kMatMul, {x, b.W("w", {16, 32})}, WithActivation(Activation::kRelu));
  OpParams split = Axis(1);
  split.sizes = {12, 20};
  std::vector<TensorRef> parts = b.OpN(OpKind::kSplit, {mm}, split);  // copied
  TensorRef t = b.Op(OpKind::kTanh, {parts[0]});
  TensorRef cat = b.Op(OpKind::kConcat, {parts[1], t}, Axis(1));
  TensorRef out = b.Op(OpKind::kMatMul, {cat, b.W("w2", {32, 8})});
  TensorRef to_relu = b.Op(OpKind::kTranspose, {mm}, Perm({1, 0}, /*shuffle=*/false));  // copied
  TensorRef r = b.Op(OpKind::kRelu, {to_relu});
  TensorRef to_reshape = b.Op(OpKind::kTranspose, {mm}, Perm({1, 0}, /*shuffle=*/false));  // copied
  TensorRef flat = b.Op(OpKind::kReshape, {to_reshape}, ShapeParam({128}));  // an alias of the copy
  TensorRef to_matmul = b.Op(OpKind::kTranspose, {mm}, Perm({1, 0}, /*shuffle=*/false));  // folded by ORT
  TensorRef back = b.Op(OpKind::kMatMul, {to_matmul, b.W("w3", {4, 6})});
  // Weight-only views: computed at load under either policy.
  TensorRef wt = b.Op(OpKind::kTranspose, {b.W("wt", {6, 16})}, Perm({1, 0}, /*shuffle=*/false));
  OpParams wsplit = Axis(1);
  wsplit.sizes = {4, 6};
  std::vector<TensorRef> wparts = b.OpN(OpKind::kSplit, {b.W("ws", {16, 10})}, wsplit);
  TensorRef sum = b.Op(OpKind::kEwAdd, {b.Op(OpKind::kMatMul, {x, wt}), b.Op(OpKind::kMatMul, {x, wparts[1]})});
  b.Out(out).Out(r).Out(flat).Out(back).Out(sum).Out(parts[1]);
  return b.graph;
}

TEST_F(GraphRunnerTest, ViewsOfActivationsMatchInterpreterUnderBothPolicies) {
  const Graph g = ViewsOfActivations();
  ExpectMatchesInterpreter(g, ViewPolicy::kAlias);
  ExpectMatchesInterpreter(g, ViewPolicy::kMaterialize);
}

TEST_F(GraphRunnerTest, MaterializedViewsAreCountedAndWeightViewsAreNot) {
  const Graph g = ViewsOfActivations();
  GraphTimingOptions options{.warmup = 0, .runs = 2, .min_timed_ms = 0};
  auto alias = MeasureGraphsOnCpu(*backend_, {&g}, options);
  options.views = ViewPolicy::kMaterialize;
  auto copy = MeasureGraphsOnCpu(*backend_, {&g}, options);
  ASSERT_TRUE(alias.ok()) << alias.status();
  ASSERT_TRUE(copy.ok()) << copy.status();
  ASSERT_TRUE((*alias)[0].ok()) << (*alias)[0].status();
  ASSERT_TRUE((*copy)[0].ok()) << (*copy)[0].status();
  EXPECT_EQ((*alias)[0]->views_materialized, 0);
  // The split and the transposes read by the relu and the reshape; not the
  // one only a matmul reads, nor the weights' transpose and split.
  EXPECT_EQ((*copy)[0]->views_materialized, 3);
  EXPECT_EQ((*alias)[0]->load_time_nodes, 2);
  EXPECT_EQ((*copy)[0]->load_time_nodes, 2);
  // The copies run as kernels; under alias the split and two transposes run
  // none, and the reshape of a strided view copies (it aliases the copy).
  EXPECT_EQ((*copy)[0]->kernels, (*alias)[0]->kernels + 3 - 1);
}

// A split without sizes undoes a concat: the concat point recorded in the
// types must survive the runner's own layout bookkeeping, also after a
// materialized transpose.
TEST_F(GraphRunnerTest, SplitAtRecordedConcatPointRunsUnderBothPolicies) {
  GraphBuilder b;
  TensorRef x = b.In("x", {4, 6});
  TensorRef cat = b.Op(OpKind::kConcat, {b.Op(OpKind::kTanh, {x}), b.Op(OpKind::kSigmoid, {x})}, Axis(1));
  TensorRef r = b.Op(OpKind::kRelu, {cat});
  TensorRef t = b.Op(OpKind::kTranspose, {r}, Perm({1, 0}, /*shuffle=*/false));
  std::vector<TensorRef> parts = b.OpN(OpKind::kSplit, {t}, Axis(0));
  ASSERT_EQ(parts.size(), 2u);
  b.Out(parts[0]).Out(b.Op(OpKind::kRelu, {parts[1]}));
  ExpectMatchesInterpreter(b.graph, ViewPolicy::kAlias);
  ExpectMatchesInterpreter(b.graph, ViewPolicy::kMaterialize);
}

// What is computed from weights only runs once at load: it is still right,
// and it is not counted as a timed kernel.
TEST_F(GraphRunnerTest, WeightOnlyValuesAreFoldedAtLoad) {
  GraphBuilder b;
  TensorRef x = b.In("x", {1, 4, 6, 6});
  TensorRef big = b.Op(OpKind::kEnlarge, {b.W("w", {4, 4, 1, 1})}, Kernel(3, 3));
  TensorRef y = b.Op(OpKind::kConv2D, {x, big}, ConvParams(1, Padding::kSame));
  b.Out(y);
  ExpectMatchesInterpreter(b.graph);
  auto timed = MeasureGraphsOnCpu(*backend_, {&b.graph}, {.warmup = 1, .runs = 3, .min_timed_ms = 0});
  ASSERT_TRUE(timed.ok()) << timed.status();
  ASSERT_TRUE((*timed)[0].ok()) << (*timed)[0].status();
  EXPECT_EQ((*timed)[0]->kernels, 1);
  EXPECT_EQ((*timed)[0]->load_time_nodes, 1);
}

// An opaque operator is not run: its output holds OpaqueOutputValues, what
// reads it is computed from those, and the timing counts it as skipped.
TEST_F(GraphRunnerTest, OpaqueOperatorIsSkippedAndCounted) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({2, 8}));
  TensorRef w = g.AddWeight("w", F32({8, 4}));
  TensorRef r = *g.AddOp1(OpKind::kRelu, {}, {x});
  OpParams op;
  op.opaque.op_type = "LayerNormalization";
  op.opaque.output_types = {F32({2, 8})};
  TensorRef ln = *g.AddOp1(OpKind::kOpaque, op, {r});
  TensorRef y = *g.AddOp1(OpKind::kMatMul, {}, {ln, w});
  g.AddOutput("y", y);

  const FloatTensor stand_in = OpaqueOutputValues(F32({2, 8}), ln.node, 0, 1);
  const FloatTensor weight = DeterministicFloatFeeds(g, 1).at("w");
  auto want = EvalOpFloat(OpKind::kMatMul, {}, {&stand_in, &weight});
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = ExecuteGraphOnCpu(*backend_, g, 1);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectClose((*got)[0], (*want)[0], "y");

  auto timed = MeasureGraphsOnCpu(*backend_, {&g}, {.warmup = 1, .runs = 3, .min_timed_ms = 0});
  ASSERT_TRUE(timed.ok()) << timed.status();
  ASSERT_TRUE((*timed)[0].ok()) << (*timed)[0].status();
  EXPECT_EQ((*timed)[0]->opaque_skipped, 1);
  EXPECT_EQ((*timed)[0]->kernels, 2);  // relu and matmul
}

TEST_F(GraphRunnerTest, InterleavedTimingGivesEachGraphItsOwnFigures) {
  const Graph a = ConvReluChain();
  GraphBuilder small;
  small.Out(small.Op(OpKind::kRelu, {small.In("x", {1, 3, 12, 12})}));
  auto timed = MeasureGraphsOnCpu(*backend_, {&a, &small.graph}, {.warmup = 1, .runs = 6, .min_timed_ms = 0});
  ASSERT_TRUE(timed.ok()) << timed.status();
  ASSERT_EQ(timed->size(), 2u);
  for (const auto& t : *timed) {
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_GT(t->median_ms, 0);
    EXPECT_GT(t->min_ms, 0);
    EXPECT_LE(t->min_ms, t->median_ms);
    EXPECT_EQ(t->runs, 8);  // 6 asked: 2 per pass (rounded up), four passes in alternating order
  }
  EXPECT_EQ((*timed)[0]->kernels, 6);
  EXPECT_EQ((*timed)[1]->kernels, 1);
}

TEST_F(GraphRunnerTest, InvalidGraphIsInvalidArgument) {
  Graph g;
  g.AddInput("x", F32({2, 2}));
  g.AddOutput("y", TensorRef{5, 0});
  auto got = ExecuteGraphOnCpu(*backend_, g, 1);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
  EXPECT_NE(got.status().message().find("invalid graph"), std::string::npos) << got.status();
}

TEST_F(GraphRunnerTest, UnsupportedTensorIsUnimplementedAndFailsAlone) {
  Graph ints;
  TensorType t = F32({2, 2});
  t.dtype = DType::kInt32;
  ints.AddOutput("y", *ints.AddOp1(OpKind::kRelu, {}, {ints.AddInput("x", t)}));
  GraphBuilder fine;
  fine.Out(fine.Op(OpKind::kRelu, {fine.In("x", {2, 2})}));
  auto timed = MeasureGraphsOnCpu(*backend_, {&ints, &fine.graph}, {.warmup = 0, .runs = 2, .min_timed_ms = 0});
  ASSERT_TRUE(timed.ok()) << timed.status();
  ASSERT_FALSE((*timed)[0].ok());
  EXPECT_EQ((*timed)[0].status().code(), absl::StatusCode::kUnimplemented) << (*timed)[0].status();
  EXPECT_NE((*timed)[0].status().message().find("float32"), std::string::npos) << (*timed)[0].status();
  EXPECT_TRUE((*timed)[1].ok()) << (*timed)[1].status();
}

// Integer tensors that only opaque operators read (token ids, shapes) do
// not stop the graph from running.
TEST_F(GraphRunnerTest, IntegerTensorsReadOnlyByOpaqueOperatorsAreFine) {
  Graph g;
  TensorType ids = F32({2, 8});
  ids.dtype = DType::kInt64;
  OpParams gather;
  gather.opaque.op_type = "Gather";
  gather.opaque.output_types = {F32({2, 8, 4})};
  TensorRef embedded = *g.AddOp1(OpKind::kOpaque, gather, {g.AddInput("ids", ids)});
  g.AddOutput("y", *g.AddOp1(OpKind::kRelu, {}, {embedded}));
  auto got = ExecuteGraphOnCpu(*backend_, g, 1);
  ASSERT_TRUE(got.ok()) << got.status();
  FloatTensor want = OpaqueOutputValues(F32({2, 8, 4}), embedded.node, 0, 1);
  for (float& v : want.data) v = std::max(v, 0.0f);
  ExpectClose((*got)[0], want, "y");
}

TEST_F(GraphRunnerTest, CancelledMeasurementSaysSo) {
  const Graph a = ConvReluChain();
  auto timed = MeasureGraphsOnCpu(*backend_, {&a}, {}, [] { return true; });
  ASSERT_FALSE(timed.ok());
  EXPECT_EQ(timed.status().code(), absl::StatusCode::kCancelled) << timed.status();
}

}  // namespace
}  // namespace taso::profiler
