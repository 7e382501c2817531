#include "rules_db/form_instances.h"

#include "core/rule_form.h"
#include "gtest/gtest.h"
#include "testing/graph_builder.h"

namespace taso::rules_db {
namespace {

using ::taso::testing::GraphBuilder;

// (a + b) + c as a graph of one output; inputs of one name are one input.
GraphBuilder Sum(const std::string& a, const std::string& b, const std::string& c) {
  GraphBuilder g;
  std::map<std::string, TensorRef> in;
  auto var = [&](const std::string& n) {
    auto it = in.find(n);
    return it != in.end() ? it->second : (in[n] = g.In(n, {2, 4}));
  };
  const TensorRef ab = g.Op(OpKind::kEwAdd, {var(a), var(b)});
  g.Out(g.Op(OpKind::kEwAdd, {ab, var(c)}));
  return g;
}

struct Keys {
  FormInstances::FormHash hash;
  std::string key, reversed;
};

// The keys of the rule source => target, as finalizing computes them.
Keys KeysOf(const GraphBuilder& source, const GraphBuilder& target) {
  const PairView view{&source.graph, {source.graph.outputs()[0].tensor}, {}, &target.graph,
                      {target.graph.outputs()[0].tensor}, {}};
  std::string forward = FormKey(MakeForm(view)), backward = FormKey(MakeForm(view.Reversed()));
  if (backward < forward) std::swap(forward, backward);
  Hasher hasher;
  hasher.AddString(forward);
  const Hash128 h = hasher.Finish();
  return Keys{{h.hi, h.lo}, forward, backward};
}

TEST(FormInstancesTest, AnInstanceFormsPairsNameTheMostGeneralFormsRule) {
  FormInstances forms;
  // (x + y) + z => (z + y) + x, and the same with variables merged.
  const Keys general = KeysOf(Sum("x", "y", "z"), Sum("z", "y", "x"));
  const Keys merged_once = KeysOf(Sum("x", "x", "z"), Sum("z", "x", "x"));
  const Keys merged_all = KeysOf(Sum("x", "x", "x"), Sum("x", "x", "x"));
  // Another law on the same skeleton: not a generalization of the others.
  const Keys other = KeysOf(Sum("x", "y", "z"), Sum("x", "y", "z"));
  // Read right to left, a general form still generalizes.
  const Keys merged_reversed = KeysOf(Sum("z", "y", "y"), Sum("y", "y", "z"));
  ASSERT_TRUE(forms.AddForm(merged_all.hash, merged_all.key, merged_all.reversed, "r-all"));
  ASSERT_TRUE(forms.AddForm(merged_once.hash, merged_once.key, merged_once.reversed, "r-once"));
  ASSERT_TRUE(forms.AddForm(general.hash, general.key, general.reversed, "r-general"));
  ASSERT_TRUE(forms.AddForm(other.hash, other.key, other.reversed, "r-other"));
  ASSERT_TRUE(forms.AddForm(merged_reversed.hash, merged_reversed.key, merged_reversed.reversed, "r-reversed"));
  forms.AddPair(merged_all.hash, "c1", 0);
  forms.AddPair(merged_all.hash, "c2", 3);  // a renaming of the first
  forms.AddPair(merged_once.hash, "c1", 1);
  forms.AddPair(general.hash, "c3", 0);
  forms.AddPair(other.hash, "c3", 1);
  forms.AddPair(merged_reversed.hash, "c4", 0);
  const auto rewrites = forms.Resolve();
  using Rewrites = std::vector<std::pair<int, std::string>>;
  EXPECT_EQ(rewrites.at("c1"), (Rewrites{{0, "r-general"}, {1, "r-general"}}));
  EXPECT_EQ(rewrites.at("c2"), (Rewrites{{3, "r-general"}}));
  EXPECT_EQ(rewrites.at("c4"), (Rewrites{{0, "r-general"}}));
  EXPECT_EQ(rewrites.count("c3"), 0u) << "the general form and the other law are proved as they are";
}

// A smaller pair a rule follows from need not be any pair's form in the job:
// it is matched to a general form of the job it is an instance of, read
// either way, never to an instance form, and only where the caller can use it.
TEST(FormInstancesTest, AKeyOutsideTheJobFindsTheGeneralFormItIsAnInstanceOf) {
  FormInstances forms;
  const Keys general = KeysOf(Sum("x", "y", "z"), Sum("z", "y", "x"));
  const Keys merged_once = KeysOf(Sum("x", "x", "z"), Sum("z", "x", "x"));
  const Keys other = KeysOf(Sum("x", "y", "z"), Sum("x", "y", "z"));
  ASSERT_TRUE(forms.AddForm(general.hash, general.key, general.reversed, "r-general"));
  ASSERT_TRUE(forms.AddForm(merged_once.hash, merged_once.key, merged_once.reversed, "r-once"));
  ASSERT_TRUE(forms.AddForm(other.hash, other.key, other.reversed, "r-other"));
  forms.AddPair(general.hash, "c1", 0);
  forms.AddPair(merged_once.hash, "c1", 1);
  forms.AddPair(other.hash, "c2", 0);
  forms.Resolve();
  auto anything = [](const FormInstances::FormHash&) { return true; };
  // Not a form of the job: every variable merged, keyed as read and read backwards.
  const Keys merged_all = KeysOf(Sum("x", "x", "x"), Sum("x", "x", "x"));
  const Keys merged_reversed = KeysOf(Sum("z", "y", "y"), Sum("y", "y", "z"));
  for (const std::string& key : {merged_reversed.key, merged_reversed.reversed}) {
    auto reading = FormInstances::ReadingOf(key);
    ASSERT_TRUE(reading.has_value());
    EXPECT_EQ(forms.GeneralOf(*reading, anything), general.hash) << key;
  }
  // Every merge is an instance of both laws: the more general wins a tie by rule id.
  auto all = FormInstances::ReadingOf(merged_all.key);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(forms.GeneralOf(*all, anything), general.hash);
  // merged_once is an instance form (its pairs name r-general): never a target.
  auto but_general = [&](const FormInstances::FormHash& f) { return f != general.hash; };
  EXPECT_EQ(forms.GeneralOf(*all, but_general), other.hash);
  auto none = [](const FormInstances::FormHash&) { return false; };
  EXPECT_FALSE(forms.GeneralOf(*all, none).has_value());
  // A skeleton the job does not have.
  GraphBuilder one;
  one.Out(one.Op(OpKind::kEwAdd, {one.In("x", {2, 4}), one.In("y", {2, 4})}));
  auto unrelated = FormInstances::ReadingOf(KeysOf(one, one).key);
  ASSERT_TRUE(unrelated.has_value());
  EXPECT_FALSE(forms.GeneralOf(*unrelated, anything).has_value());
  EXPECT_FALSE(FormInstances::ReadingOf("not a key").has_value());
}

TEST(FormInstancesTest, NoGeneralFormNoRewrite) {
  FormInstances forms;
  const Keys merged = KeysOf(Sum("x", "x", "z"), Sum("z", "x", "x"));
  ASSERT_TRUE(forms.AddForm(merged.hash, merged.key, merged.reversed, "r"));
  forms.AddPair(merged.hash, "c", 0);
  EXPECT_TRUE(forms.Resolve().empty());
  EXPECT_FALSE(forms.AddForm({1, 2}, "not a key", "either", "r2"));
}

}  // namespace
}  // namespace taso::rules_db
