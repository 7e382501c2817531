#include "core/graph_proto.h"

#include "core/canonical.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/tensor_types.h"

namespace taso {
namespace {

using ::testing::HasSubstr;

using ::taso::testing::F32;

// Uses every parameterised operator kind at least once.
Graph Everything() {
  Graph g;
  TensorType split_x = F32({1, 4, 5, 5});
  split_x.split[1] = MakeSplit(2, nullptr, MakeSplit(1, nullptr, nullptr));
  const TensorRef x = g.AddInput("x", split_x);
  const TensorRef w = g.AddWeight("w", F32({4, 1, 1, 3}), std::make_shared<const std::string>(48, '\1'));
  const TensorRef a = g.AddInput("a", F32({2, 4}));
  const TensorRef s = g.AddInput("s", F32({}));
  OpParams p;
  p.stride_h = 2;
  p.padding = Padding::kValid;
  p.activation = Activation::kTanh;
  OpParams e;
  e.kernel_h = e.kernel_w = 3;
  const TensorRef w3 = *g.AddOp1(OpKind::kEnlarge, e, {w});
  g.AddOutput("conv", *g.AddOp1(OpKind::kConv2D, p, {x, w3}));
  OpParams pool;
  pool.kernel_h = 3;
  pool.kernel_w = 2;
  pool.count_include_pad = false;
  g.AddOutput("pool", *g.AddOp1(OpKind::kPoolAvg, pool, {x}));
  g.AddOutput("max", *g.AddOp1(OpKind::kPoolMax, pool, {x}));
  OpParams t;
  t.perm = {1, 0};
  t.shuffle = false;
  const TensorRef at = *g.AddOp1(OpKind::kTranspose, t, {a});
  OpParams mm;
  mm.activation = Activation::kRelu;
  g.AddOutput("mm", *g.AddOp1(OpKind::kMatMul, mm, {at, a}));
  OpParams axis1;
  axis1.axis = 1;
  const TensorRef cat = *g.AddOp1(OpKind::kConcat, axis1, {a, a, a});
  auto parts = *g.AddOp(OpKind::kSplit, axis1, {cat});
  g.AddOutput("part", parts[1]);
  OpParams sizes = axis1;
  sizes.sizes = {2, 1, 1};
  g.AddOutput("x_part", (*g.AddOp(OpKind::kSplit, sizes, {x}))[2]);
  OpParams r;
  r.shape = {4, 2};
  g.AddOutput("reshape", *g.AddOp1(OpKind::kReshape, r, {a}));
  OpParams merge;
  merge.groups = 4;
  merge.count = 2;
  g.AddOutput("merged", *g.AddOp1(OpKind::kMergeGConv, merge, {w}));
  OpParams c;
  c.shape = {4, 1, 3, 3};
  g.AddOutput("cpool", *g.AddOp1(OpKind::kConstPool, c, {}));
  c.shape = {4, 4, 3, 3};
  g.AddOutput("ciconv", *g.AddOp1(OpKind::kConstIConv, c, {}));
  c.shape = {4, 4};
  g.AddOutput("cimm", *g.AddOp1(OpKind::kConstIMatMul, c, {}));
  g.AddOutput("ones", *g.AddOp1(OpKind::kConstOnes, c, {}));
  g.AddOutput("smul", *g.AddOp1(OpKind::kScalarMul, OpParams{}, {a, s}));
  OpParams bn;
  bn.epsilon = 1e-3f;
  const TensorRef v = g.AddInput("v", F32({4}));
  g.AddOutput("bn", *g.AddOp1(OpKind::kBatchNorm, bn, {x, v, v, v, v}));
  OpParams op;
  op.opaque.op_type = "Softmax";
  op.opaque.domain = "";
  op.opaque.attributes = {{"axis", std::string("\x08\x01", 2)}};
  op.opaque.output_types = {F32({2, 4})};
  g.AddOutput("softmax", *g.AddOp1(OpKind::kOpaque, op, {a}));
  OpParams gap;  // Clip(a, "", max): the opset and the omitted min survive
  gap.opaque.op_type = "Clip";
  gap.opaque.output_types = {F32({2, 4})};
  gap.opaque.opset = 13;
  gap.opaque.input_slots = {0, OpaqueInfo::kOmitted, 1};
  g.AddOutput("clip", *g.AddOp1(OpKind::kOpaque, gap, {a, s}));
  return g;
}

TEST(GraphProto, RoundTripKeepsEverything) {
  const Graph g = Everything();
  ASSERT_TRUE(g.Validate().ok());
  auto back = GraphFromProto(GraphToProto(g));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*CanonicalText(*back), *CanonicalText(g));
  for (int i = 0; i < g.num_nodes(); ++i) {
    EXPECT_EQ(back->node(i).output_types, g.node(i).output_types) << DescribeNode(g.node(i));
    EXPECT_TRUE(ParamsEqual(g.node(i).kind, back->node(i).params, g.node(i).params)) << DescribeNode(g.node(i));
  }
  ASSERT_TRUE(back->node(1).data);
  EXPECT_EQ(*back->node(1).data, *g.node(1).data);
  // Through text format as well.
  auto text = GraphFromText(GraphToText(g));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*StructuralHash(*text), *StructuralHash(g));
}

TEST(GraphProto, HandWrittenDefaultsMeanTasoSemantics) {
  auto g = GraphFromText(R"pb(
    nodes { id: 0 kind: OP_INPUT name: "x" type { dtype: DTYPE_FLOAT32 dims: 1 dims: 2 dims: 4 dims: 4 } }
    nodes { id: 1 kind: OP_POOL_AVG inputs { node: 0 } params { pool { kernel_h: 3 kernel_w: 3 } } }
    nodes { id: 2 kind: OP_TRANSPOSE inputs { node: 1 } params { transpose { perm: [ 0, 1, 3, 2 ] } } }
    outputs { name: "y" tensor { node: 2 } }
  )pb");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->node(1).params.stride_h, 1);  // unset stride means 1
  EXPECT_TRUE(g->node(1).params.count_include_pad);
  EXPECT_TRUE(g->node(2).params.shuffle);
  EXPECT_TRUE(g->type({2, 0}).is_row_major());
}

TEST(GraphProto, MalformedGraphsAreErrors) {
  const char* cases[][2] = {
      {R"pb(nodes { id: 0 kind: OP_UNSPECIFIED })pb", "no valid operator kind"},
      {R"pb(nodes { id: 0 kind: OP_INPUT type { dtype: DTYPE_FLOAT32 dims: 2 } })pb", "without a name"},
      {R"pb(nodes { id: 0 kind: OP_INPUT name: "x" type { dims: 2 } })pb", "valid dtype"},
      {R"pb(nodes { id: 0 kind: OP_INPUT name: "x" type { dtype: DTYPE_FLOAT32 dims: 4294967296 dims: 4294967296 } })pb",
       "elements"},
      {R"pb(nodes { id: 0 kind: OP_INPUT name: "x" type { dtype: DTYPE_FLOAT32 dims: 2 strides: 1 strides: 1 } })pb",
       "2 strides for rank 1"},
      {R"pb(nodes { id: 0 kind: OP_INPUT name: "x" type { dtype: DTYPE_FLOAT32 dims: 2 split { left_size: 5 } } })pb",
       "split point 5 outside"},
      {R"pb(nodes { id: 0 kind: OP_INPUT name: "x" type { dtype: DTYPE_FLOAT32 dims: 2 } }
            nodes { id: 1 kind: OP_CONV2D inputs { node: 0 } inputs { node: 0 } })pb",
       "conv2d needs its parameters"},
      {R"pb(nodes { id: 0 kind: OP_INPUT name: "x" type { dtype: DTYPE_FLOAT32 dims: 2 } }
            nodes { id: 1 kind: OP_RELU inputs { node: 2 } }
            nodes { id: 2 kind: OP_RELU inputs { node: 1 } })pb",
       "cycle"},
      {R"pb(nodes { id: 0 kind: OP_INPUT name: "x" type { dtype: DTYPE_FLOAT32 dims: 2 } }
            outputs { name: "y" tensor { node: 9 } })pb",
       "graph output 'y'"},
  };
  for (const auto& c : cases) {
    auto g = GraphFromText(c[0]);
    ASSERT_FALSE(g.ok()) << c[0];
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << c[0];
    EXPECT_THAT(g.status().message(), HasSubstr(c[1])) << c[0];
  }
}

}  // namespace
}  // namespace taso
