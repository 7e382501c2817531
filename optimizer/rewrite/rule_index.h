// Rules by the operator their pattern search starts from, so that matching
// thousands of rules against a graph only tries the rules that can match it.
//
// A match maps the pattern's anchor (the operator producing its first
// output, where the search starts) to a host node of the same kind, arity,
// output count and parameters. A rule whose anchor fits no host node has no
// match, so only the others are candidates; multi-output patterns included.
#ifndef TASO_OPTIMIZER_REWRITE_RULE_INDEX_H_
#define TASO_OPTIMIZER_REWRITE_RULE_INDEX_H_

#include <map>
#include <tuple>
#include <vector>

#include "optimizer/rewrite/match.h"
#include "optimizer/rewrite/rewrite_rule.h"

namespace taso::optimizer {

class RuleIndex {
 public:
  // Keeps a reference to `rules`, which must outlive the index.
  explicit RuleIndex(const std::vector<RewriteRule>& rules);

  // Indices of the rules that can match the indexed graph, ascending.
  std::vector<int> Candidates(const GraphIndex& graph) const;

 private:
  // Operator kind, input count, output count.
  using Shape = std::tuple<OpKind, int, int>;
  const std::vector<RewriteRule>& rules_;
  std::map<Shape, std::vector<int>> by_anchor_;
  std::vector<int> anchor_;  // per rule: its pattern's anchor node (-1: no operator, never matches)
};

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_REWRITE_RULE_INDEX_H_
