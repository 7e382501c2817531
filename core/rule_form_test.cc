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
