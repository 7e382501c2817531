// Matching time with many rules: every rule tried (a linear scan) against
// only the rules the index says can match, in backtracking's matcher and in
// e-matching, on a small graph (optimizer/rewrite/synthetic_rules.h).
//
//   bazel run -c opt //bench:rule_index_bench
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "optimizer/rewrite/match.h"
#include "optimizer/rewrite/rule_index.h"
#include "optimizer/eqsat/egraph.h"
#include "optimizer/eqsat/ematch.h"
#include "optimizer/rewrite/synthetic_rules.h"

namespace taso::optimizer {
namespace {

// Mean milliseconds of `run` over `repetitions` runs; `matches` is what the last run found.
double TimeMs(int repetitions, const std::function<size_t()>& run, size_t* matches) {
  const absl::Time start = absl::Now();
  for (int i = 0; i < repetitions; ++i) *matches = run();
  return absl::ToDoubleMilliseconds(absl::Now() - start) / repetitions;
}

void Measure(int num_rules) {
  const std::vector<RewriteRule> rules = SyntheticRules(num_rules);
  const Graph host = SyntheticRulesHost();
  const int repetitions = 20;

  const GraphIndex graph_index(host);
  const RuleIndex rule_index(rules);
  size_t scan_found = 0, indexed_found = 0, visited = 0;
  const double scan_ms = TimeMs(repetitions, [&] {
    size_t n = 0;
    for (const RewriteRule& r : rules) n += FindMatches(r, graph_index).size();
    return n;
  }, &scan_found);
  const double indexed_ms = TimeMs(repetitions, [&] {
    size_t n = 0;
    const std::vector<int> candidates = rule_index.Candidates(graph_index);
    visited = candidates.size();
    for (int r : candidates) n += FindMatches(rules[r], graph_index).size();
    return n;
  }, &indexed_found);
  std::printf("backtrack %6d rules: scan %8.3f ms, index %8.3f ms (%zu rules tried), matches %zu / %zu\n",
              num_rules, scan_ms, indexed_ms, visited, scan_found, indexed_found);

  auto built = EGraphFromGraph(host);
  if (!built.ok()) {
    std::printf("e-graph: %s\n", std::string(built.status().message()).c_str());
    return;
  }
  std::vector<std::unique_ptr<CompiledPattern>> compiled;
  std::vector<const CompiledPattern*> patterns;
  for (const RewriteRule& r : rules) {
    compiled.push_back(std::make_unique<CompiledPattern>(r, built->egraph));
    patterns.push_back(compiled.back().get());
  }
  const EMatchIndex ematch_index(built->egraph);
  const PatternIndex pattern_index(patterns);
  const double escan_ms = TimeMs(repetitions, [&] {
    size_t n = 0;
    for (const CompiledPattern* p : patterns) n += FindEMatches(*p, ematch_index, 1000).size();
    return n;
  }, &scan_found);
  const double eindexed_ms = TimeMs(repetitions, [&] {
    size_t n = 0;
    const std::vector<int> candidates = pattern_index.Candidates(ematch_index);
    visited = candidates.size();
    for (int i : candidates) n += FindEMatches(*patterns[i], ematch_index, 1000).size();
    return n;
  }, &indexed_found);
  std::printf("e-match   %6d rules: scan %8.3f ms, index %8.3f ms (%zu rules tried), matches %zu / %zu\n",
              num_rules, escan_ms, eindexed_ms, visited, scan_found, indexed_found);
}

}  // namespace
}  // namespace taso::optimizer

int main() {
  for (int n : {1000, 10000}) taso::optimizer::Measure(n);
  return 0;
}
