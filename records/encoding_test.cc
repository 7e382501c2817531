#include "records/encoding.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taso::records {
namespace {

using ::testing::HasSubstr;

Spec TinySpec() {
  auto spec = ParseSpecText(R"pb(
    inputs { name: "x" dims: [2, 4] }
    constants { name: "w" dims: [4, 4] }
    operators { kind: OP_MATMUL }
    operators { kind: OP_RELU }
  )pb",
                            "tiny.spec");
  EXPECT_TRUE(spec.ok());
  return *spec;
}

TEST(Encoding, RoundTripsAndDecodes) {
  const Spec spec = TinySpec();
  std::string encoding;
  int mm[2] = {0, 1};
  AppendEncodedOp(0, mm, 2, encoding);
  int relu[1] = {2};
  AppendEncodedOp(1, relu, 1, encoding);
  EXPECT_EQ(encoding.size(), 7u);
  auto ops = ParseEncoding(encoding);
  ASSERT_TRUE(ops.ok());
  ASSERT_EQ(ops->size(), 2u);
  EXPECT_EQ((*ops)[0].inputs, std::vector<int>({0, 1}));
  EXPECT_EQ((*ops)[1].template_index, 1);

  auto graph = DecodeGraph(spec, encoding);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->num_ops(), 2);
  ASSERT_EQ(graph->outputs().size(), 1u);  // the matmul is consumed
  EXPECT_EQ(graph->node(graph->outputs()[0].tensor.node).kind, OpKind::kRelu);
  EXPECT_EQ(graph->node(0).kind, OpKind::kInput);
  EXPECT_EQ(graph->node(1).kind, OpKind::kWeight);
  EXPECT_EQ(DescribeEncoding(spec, encoding), "%0 = matmul[act=none](x, w); %1 = relu(%0)");
}

TEST(Encoding, MalformedInputIsAnError) {
  const Spec spec = TinySpec();
  EXPECT_THAT(ParseEncoding(std::string("\x01\x02\x00", 3)).status().message(), HasSubstr("truncated"));
  EXPECT_THAT(DecodeGraph(spec, std::string("\x07\x01\x00", 3)).status().message(),
              HasSubstr("names template 7"));
  EXPECT_THAT(DecodeGraph(spec, std::string("\x01\x01\x05", 3)).status().message(),
              HasSubstr("before it exists"));
  // matmul(w, x): shapes do not fit.
  EXPECT_EQ(DecodeGraph(spec, std::string("\x00\x02\x01\x00", 4)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace taso::records
