#include "models/resnet50.h"

#include "gtest/gtest.h"

namespace taso::models {
namespace {

int CountOps(const Graph& graph, OpKind kind) {
  int count = 0;
  for (const Node& node : graph.nodes()) count += node.kind == kind ? 1 : 0;
  return count;
}

TEST(ResNet50Test, BuildsTheStandardNetwork) {
  auto graph = BuildResNet50();
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_TRUE(graph->Validate().ok()) << graph->Validate();

  ASSERT_EQ(graph->outputs().size(), 1u);
  EXPECT_EQ(graph->outputs()[0].name, "logits");
  const TensorType& logits = graph->type(graph->outputs()[0].tensor);
  EXPECT_EQ(logits.dims, (std::vector<int64_t>{1, 1000}));
  EXPECT_EQ(logits.dtype, DType::kFloat32);

  EXPECT_EQ(CountOps(*graph, OpKind::kConv2D), 53);
  EXPECT_EQ(CountOps(*graph, OpKind::kEwAdd), 16 + 1);  // residuals and the fc bias
  EXPECT_EQ(CountOps(*graph, OpKind::kRelu), 16);       // the rest are fused into convs
  EXPECT_EQ(CountOps(*graph, OpKind::kPoolMax), 1);
  EXPECT_EQ(CountOps(*graph, OpKind::kPoolAvg), 1);
  EXPECT_EQ(CountOps(*graph, OpKind::kMatMul), 1);
  EXPECT_EQ(CountOps(*graph, OpKind::kInput), 1);
  EXPECT_EQ(CountOps(*graph, OpKind::kWeight), 53 + 2);

  // About 25.5 million parameters, as published for ResNet-50.
  int64_t parameters = 0;
  for (const Node& node : graph->nodes()) {
    if (node.kind == OpKind::kWeight) parameters += node.output_types[0].num_elements();
  }
  EXPECT_GT(parameters, 25'000'000);
  EXPECT_LT(parameters, 26'000'000);
}

TEST(ResNet50Test, ShapesFollowTheStrides) {
  auto graph = BuildResNet50(2, 224);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const Node* global_pool = nullptr;
  for (const Node& node : graph->nodes()) {
    if (node.kind == OpKind::kConv2D && node.id < 3) {
      EXPECT_EQ(node.output_types[0].dims, (std::vector<int64_t>{2, 64, 112, 112}));
    }
    if (node.kind == OpKind::kPoolMax) {
      EXPECT_EQ(node.output_types[0].dims, (std::vector<int64_t>{2, 64, 56, 56}));
    }
    if (node.kind == OpKind::kPoolAvg) global_pool = &node;
  }
  ASSERT_NE(global_pool, nullptr);
  EXPECT_EQ(global_pool->params.kernel_h, 7);
  EXPECT_EQ(graph->type(global_pool->inputs[0]).dims, (std::vector<int64_t>{2, 2048, 7, 7}));
  EXPECT_EQ(global_pool->output_types[0].dims, (std::vector<int64_t>{2, 2048, 1, 1}));
  EXPECT_EQ(graph->type(graph->outputs()[0].tensor).dims, (std::vector<int64_t>{2, 1000}));
}

TEST(ResNet50Test, SmallerImagesBuild) {
  auto graph = BuildResNet50(1, 64);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_TRUE(graph->Validate().ok()) << graph->Validate();
  EXPECT_EQ(CountOps(*graph, OpKind::kConv2D), 53);
  EXPECT_EQ(graph->type(graph->outputs()[0].tensor).dims, (std::vector<int64_t>{1, 1000}));
}

TEST(ResNet50Test, RejectsEmptyShapes) {
  EXPECT_EQ(BuildResNet50(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BuildResNet50(1, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace taso::models
