#include "records/spec.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taso::records {
namespace {

using ::testing::HasSubstr;

TEST(DefaultSpec, ReproducesTasosInputsAndTemplates) {
  const Spec spec = DefaultSpec();
  EXPECT_EQ(spec.max_ops, 3);
  ASSERT_EQ(spec.variables.size(), 20u);
  int weights = 0;
  for (const Variable& v : spec.variables) weights += v.is_weight;
  EXPECT_EQ(weights, 13);
  // TASO's 26 templates: its 6 kernel-specific convs fold to 2 (the kernel
  // comes from the weight) and its 4 rank-specific concats to 2 (per axis).
  EXPECT_EQ(spec.templates.size(), 20u);
  std::vector<std::string> labels;
  for (const Template& t : spec.templates) labels.push_back(t.label);
  EXPECT_THAT(labels, ::testing::Contains("conv2d[stride=1x1,pad=same,act=relu]"));
  EXPECT_THAT(labels, ::testing::Contains("transpose[perm=1,0,shuffle=0]"));
  EXPECT_THAT(labels, ::testing::Contains("const_pool[shape=4,1,3,3]"));
}

absl::Status Parse(const std::string& text) { return ParseSpecText(text, "my.spec").status(); }

constexpr char kMinimal[] = R"pb(inputs { name: "x" dims: [2, 2] } operators { kind: OP_RELU })pb";

TEST(SpecErrors, MinimalIsValid) { EXPECT_TRUE(Parse(kMinimal).ok()); }

TEST(SpecErrors, SyntaxErrorsNameTheLine) {
  absl::Status s = Parse("inputs { name: \"x\" dims: [2] }\nopertors { kind: OP_RELU }\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("my.spec: not a valid taso.generator.GenerationSpec: line 2"));
  EXPECT_THAT(s.message(), HasSubstr("opertors"));
}

TEST(SpecErrors, ContentErrorsNameTheEntry) {
  const std::pair<std::string, std::string> cases[] = {
      {"version: 2 inputs { name: \"x\" dims: 2 } operators { kind: OP_RELU }", "version 2 is newer"},
      {"max_ops: 9 inputs { name: \"x\" dims: 2 } operators { kind: OP_RELU }", "max_ops 9 is outside 1..8"},
      {"operators { kind: OP_RELU }", "no inputs or constants"},
      {"inputs { name: \"x\" dims: 2 }", "lists no operators"},
      {"inputs { name: \"x\" dims: 2 } inputs { name: \"x\" dims: 3 } operators { kind: OP_RELU }",
       "inputs[1] 'x': name used twice"},
      {"inputs { name: \"2x\" dims: 2 } operators { kind: OP_RELU }", "name '2x'"},
      {"inputs { name: \"x\" dims: 0 } operators { kind: OP_RELU }", "dimension 0"},
      {"inputs { name: \"x\" dims: [1000, 1000] } operators { kind: OP_RELU }", "exceeds 65536 elements"},
      {"inputs { name: \"x\" dims: 2 dtype: DTYPE_INT64 } operators { kind: OP_RELU }", "only DTYPE_FLOAT32"},
      {"inputs { name: \"x\" dims: 2 } operators { kind: OP_CONV2D }", "operators[0] (conv2d): conv2d needs its parameters"},
      {"inputs { name: \"x\" dims: 2 } operators { kind: OP_RELU params { concat { axis: 1 } } }",
       "operators[0] (relu): takes no parameters"},
      {"inputs { name: \"x\" dims: 2 } operators { kind: OP_TANH }", "no integer semantics"},
      {"inputs { name: \"x\" dims: 2 } operators { kind: OP_MATMUL params { matmul { activation: ACTIVATION_SIGMOID } } }",
       "activation sigmoid"},
      {"inputs { name: \"x\" dims: 2 } operators { kind: OP_CONST_POOL params { constant { shape: [4, 4, 3, 3] } } }",
       "shape must be (C,1,KH,KW)"},
      {"inputs { name: \"x\" dims: 2 } operators { kind: OP_CONCAT params { concat { axis: 0 } } params { concat { axis: 0 } } }",
       "params[1]: concat[axis=0] is listed twice"},
      {"inputs { name: \"x\" dims: 2 } operators { kind: OP_OPAQUE }", "opaque"},
      {"inputs { name: \"x\" dims: 2 } operators { }", "operators[0]: no valid kind"},
  };
  for (const auto& [text, expected] : cases) {
    absl::Status s = Parse(text);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(s.message(), HasSubstr(expected)) << text;
    EXPECT_THAT(s.message(), HasSubstr("my.spec: ")) << text;
  }
}

TEST(SpecErrors, MissingFile) {
  auto spec = LoadSpecFile("/nonexistent/spec.textproto");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(spec.status().message(), HasSubstr("/nonexistent/spec.textproto"));
}

}  // namespace
}  // namespace taso::records
