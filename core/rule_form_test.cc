#include "core/rule_form.h"

#include "gtest/gtest.h"
#include "testing/graph_builder.h"

namespace taso {
namespace {

using ::taso::testing::GraphBuilder;

// add(a, b) as a graph of one output; variables of one name are one variable.
struct Add {
  GraphBuilder g;
  Add(const std::string& a, const std::string& b, std::vector<int64_t> dims = {2, 4}) {
    const TensorRef ta = g.In(a, dims);
    const TensorRef tb = a == b ? ta : g.In(b, dims);
    g.Out(g.Op(OpKind::kEwAdd, {ta, tb}));
  }
  std::vector<TensorRef> Roots() const { return {g.graph.outputs()[0].tensor}; }
};

Form FormOf(const Add& source, const Add& target) {
  return MakeForm(PairView{&source.g.graph, source.Roots(), {}, &target.g.graph, target.Roots(), {}});
}

// VariableGroups is MakeForm's groups: the variables reached from the
// roots (not an input no output reads), each once, substitutions by their
// name, shared operators walked once.
TEST(RuleFormTest, VariableGroupsAreTheFormsGroups) {
  GraphBuilder a, b;
  const TensorRef x = a.In("x", {2, 4}), y = a.In("y", {2, 4});
  a.In("unread", {3, 3});
  const TensorRef shared = a.Op(OpKind::kEwAdd, {x, y});
  a.Out(a.Op(OpKind::kEwMul, {shared, shared}));
  const TensorRef w = b.W("w", {4, 4});
  const TensorRef z = b.In("x", {2, 4});
  const TensorRef product = b.Op(OpKind::kMatMul, {z, w});
  b.Out(b.Op(OpKind::kRelu, {product}));
  const std::vector<TensorRef> ra = {a.graph.outputs()[0].tensor}, rb = {b.graph.outputs()[0].tensor};
  for (const FormSubstitution& sb : {FormSubstitution{}, FormSubstitution{{product.node, "$common"}}}) {
    const PairView p{&a.graph, ra, {}, &b.graph, rb, sb};
    const auto groups = VariableGroups(p);
    EXPECT_EQ(groups, MakeForm(p).groups);
    EXPECT_EQ(groups.count("unread"), 0u);
    EXPECT_EQ(groups.count("w"), sb.empty() ? 1u : 0u);
    EXPECT_EQ(groups.count("$common"), sb.empty() ? 0u : 1u);
  }
}

// The renaming key and its reading right to left are the two forms'
// keys, the lesser first, however the sides share variables.
TEST(RuleFormTest, RenamingKeyAndReversedAreTheFormsOfBothReadings) {
  GraphBuilder a, b;
  const TensorRef x = a.In("x", {2, 4}), y = a.In("y", {2, 4});
  const TensorRef shared = a.Op(OpKind::kEwAdd, {x, y});
  a.Out(a.Op(OpKind::kEwMul, {shared, x}));
  a.Out(shared);
  const TensorRef w = b.W("w", {4, 4});
  const TensorRef z = b.In("y", {2, 4});
  const TensorRef product = b.Op(OpKind::kMatMul, {z, w});
  b.Out(b.Op(OpKind::kRelu, {product}));
  b.Out(b.Op(OpKind::kEwAdd, {b.In("x", {2, 4}), z}));
  const std::vector<TensorRef> ra = {a.graph.outputs()[0].tensor, a.graph.outputs()[1].tensor};
  const std::vector<TensorRef> rb = {b.graph.outputs()[0].tensor, b.graph.outputs()[1].tensor};
  for (const FormSubstitution& sb : {FormSubstitution{}, FormSubstitution{{product.node, "$common"}}}) {
    const PairView p{&a.graph, ra, {}, &b.graph, rb, sb};
    std::string forward = FormKey(MakeForm(p)), backward = FormKey(MakeForm(p.Reversed()));
    ASSERT_NE(forward, backward);
    if (backward < forward) std::swap(forward, backward);
    EXPECT_EQ(RenamingKeyAndReversed(p), std::make_pair(forward, backward));
    EXPECT_EQ(RenamingKeyAndReversed(p.Reversed()), std::make_pair(forward, backward));
  }
}

TEST(RuleFormTest, MergingVariablesMakesAnInstance) {
  const Form general = FormOf(Add("x", "y"), Add("y", "x"));  // x + y => y + x
  const Form merged = FormOf(Add("z", "z"), Add("z", "z"));   // z + z => z + z
  EXPECT_TRUE(IsInstanceOf(merged, general));
  EXPECT_FALSE(IsInstanceOf(general, merged));
  EXPECT_TRUE(IsInstanceOf(general, general));
  // A renaming is an instance both ways.
  const Form renamed = FormOf(Add("p", "q"), Add("q", "p"));
  EXPECT_TRUE(IsInstanceOf(renamed, general));
  EXPECT_TRUE(IsInstanceOf(general, renamed));
}

TEST(RuleFormTest, AnotherPatternIsNotAnInstance) {
  const Form commute = FormOf(Add("x", "y"), Add("y", "x"));  // x + y => y + x
  const Form same = FormOf(Add("x", "y"), Add("x", "y"));     // x + y => x + y
  EXPECT_FALSE(IsInstanceOf(same, commute));
  EXPECT_FALSE(IsInstanceOf(commute, same));
}

TEST(RuleFormTest, ShapesCountOnlyThroughTheSignatures) {
  const Form general = FormOf(Add("x", "y"), Add("y", "x"));
  // add's signature carries no shape: another shape is the same law.
  const Form other_shape = FormOf(Add("z", "z", {4, 4}), Add("z", "z", {4, 4}));
  ASSERT_EQ(other_shape.skeleton, general.skeleton);
  EXPECT_TRUE(IsInstanceOf(other_shape, general));
}

TEST(RuleFormTest, AKeySplitsIntoItsSkeletonAndPattern) {
  const Form general = FormOf(Add("x", "y"), Add("y", "x"));
  std::string skeleton;
  std::vector<int> pattern;
  ASSERT_TRUE(SplitFormKey(FormKey(general), &skeleton, &pattern));
  EXPECT_EQ(skeleton, general.skeleton);
  EXPECT_EQ(pattern, general.pattern);
  EXPECT_TRUE(PatternIsInstanceOf(std::vector<int>{0, 0, 0, 0}, pattern));
  EXPECT_FALSE(PatternIsInstanceOf(pattern, std::vector<int>{0, 0, 0, 0}));
  EXPECT_FALSE(SplitFormKey("no bar", &skeleton, &pattern));
  EXPECT_FALSE(SplitFormKey("s|0,,1", &skeleton, &pattern));
}

}  // namespace
}  // namespace taso
