// Indexing patterns by their root operation: a round only searches the
// patterns whose root the e-graph holds, and they find every match a search
// of all patterns finds.
#include <algorithm>
#include <memory>
#include <set>
#include <tuple>

#include "gtest/gtest.h"
#include "optimizer/eqsat/egraph.h"
#include "optimizer/eqsat/ematch.h"
#include "optimizer/rewrite/synthetic_rules.h"

namespace taso::optimizer {
namespace {

using Found = std::tuple<int, std::vector<EClassId>, std::map<std::string, EClassId>>;

TEST(PatternIndexTest, SearchesOnlyPatternsWhoseRootTheEGraphHoldsAndFindsWhatAScanFinds) {
  const std::vector<RewriteRule> rules = SyntheticRules(10000);
  auto built = EGraphFromGraph(SyntheticRulesHost());
  ASSERT_TRUE(built.ok()) << built.status();
  EGraph& eg = built->egraph;
  std::vector<std::unique_ptr<CompiledPattern>> compiled;
  std::vector<const CompiledPattern*> patterns;
  for (const RewriteRule& r : rules) {
    compiled.push_back(std::make_unique<CompiledPattern>(r, eg));
    patterns.push_back(compiled.back().get());
  }
  const EMatchIndex index(eg);
  const std::vector<int> visited = PatternIndex(patterns).Candidates(index);
  int rooted_in_egraph = 0;
  for (const CompiledPattern* p : patterns) rooted_in_egraph += !index.classes_with(p->root_op()).empty();
  EXPECT_EQ(static_cast<int>(visited.size()), rooted_in_egraph);
  EXPECT_LT(visited.size(), rules.size() * 3 / 4);  // tanh, sigmoid and mul roots are skipped
  EXPECT_TRUE(std::is_sorted(visited.begin(), visited.end()));

  std::set<Found> scanned, indexed;
  auto collect = [&](int i, std::set<Found>* out) {
    for (const EMatch& m : FindEMatches(*patterns[i], index, 1000)) out->insert({i, m.outputs, m.binding});
  };
  for (size_t i = 0; i < patterns.size(); ++i) collect(static_cast<int>(i), &scanned);
  for (int i : visited) collect(i, &indexed);
  EXPECT_EQ(indexed, scanned);
  EXPECT_GT(scanned.size(), 10u);
  EXPECT_TRUE(std::any_of(scanned.begin(), scanned.end(), [](const Found& f) { return std::get<1>(f).size() == 2; }))
      << "two-output patterns match too";
}

}  // namespace
}  // namespace taso::optimizer
