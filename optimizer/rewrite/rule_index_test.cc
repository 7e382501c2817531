// Indexing rules by their pattern's anchor: only rules that can match are
// tried, and they find every match a scan of all rules finds.
#include "optimizer/rewrite/rule_index.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "gtest/gtest.h"
#include "optimizer/rewrite/match.h"
#include "optimizer/rewrite/synthetic_rules.h"

namespace taso::optimizer {
namespace {

// Matches as comparable values: rule, host nodes, outputs.
using Found = std::tuple<int, std::vector<int>, std::vector<std::pair<int, int>>>;

void Collect(int r, const std::vector<Match>& matches, std::set<Found>* out) {
  for (const Match& m : matches) {
    std::vector<std::pair<int, int>> outputs;
    for (TensorRef t : m.outputs) outputs.push_back({t.node, t.index});
    out->insert({r, m.nodes, outputs});
  }
}

TEST(RuleIndexTest, TriesOnlyRulesWhoseAnchorIsInTheGraphAndFindsWhatAScanFinds) {
  const std::vector<RewriteRule> rules = SyntheticRules(10000);
  const Graph host = SyntheticRulesHost();
  const GraphIndex index(host);
  const RuleIndex rule_index(rules);

  const std::vector<int> visited = rule_index.Candidates(index);
  std::set<OpKind> host_kinds;
  for (const Node& n : host.nodes()) host_kinds.insert(n.kind);
  int anchored_in_host = 0;
  for (const RewriteRule& r : rules) anchored_in_host += host_kinds.count(r.lhs().node(PatternAnchor(r.lhs())).kind);
  EXPECT_EQ(static_cast<int>(visited.size()), anchored_in_host);
  EXPECT_LT(visited.size(), rules.size() * 3 / 4);  // tanh, sigmoid and mul anchors are skipped
  EXPECT_TRUE(std::is_sorted(visited.begin(), visited.end()));

  std::set<Found> scanned, indexed;
  for (size_t r = 0; r < rules.size(); ++r) Collect(static_cast<int>(r), FindMatches(rules[r], index), &scanned);
  for (int r : visited) Collect(r, FindMatches(rules[r], index), &indexed);
  EXPECT_EQ(indexed, scanned);
  EXPECT_GT(scanned.size(), 10u);
  // Two-output patterns are among the matches.
  EXPECT_TRUE(std::any_of(scanned.begin(), scanned.end(), [](const Found& f) { return std::get<2>(f).size() == 2; }));
}

TEST(RuleIndexTest, ParametersOfTheAnchorMustFit) {
  RewriteRule concat0, concat1;
  for (auto [rule, axis] : {std::pair{&concat0, 0}, std::pair{&concat1, 1}}) {
    const TensorType t = TensorType::RowMajor(DType::kFloat32, {4, 4});
    Graph lhs;
    TensorRef a = lhs.AddInput("a", t), b = lhs.AddInput("b", t);
    OpParams p;
    p.axis = axis;
    lhs.AddOutput("c", *lhs.AddOp1(OpKind::kConcat, p, {a, b}));
    rule->SetSides(lhs, lhs);
  }
  const std::vector<RewriteRule> rules = {concat0, concat1};
  Graph host;
  const TensorType t = TensorType::RowMajor(DType::kFloat32, {4, 4});
  TensorRef x = host.AddInput("x", t);
  OpParams axis1;
  axis1.axis = 1;
  host.AddOutput("y", *host.AddOp1(OpKind::kConcat, axis1, {x, x}));
  const GraphIndex index(host);
  EXPECT_EQ(RuleIndex(rules).Candidates(index), std::vector<int>{1});
  EXPECT_EQ(FindMatches(rules[1], index).size(), 1u);
  EXPECT_TRUE(FindMatches(rules[0], index).empty());
}

}  // namespace
}  // namespace taso::optimizer
