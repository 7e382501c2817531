#include "optimizer/rewrite/rule_index.h"

#include <algorithm>

namespace taso::optimizer {

RuleIndex::RuleIndex(const std::vector<RewriteRule>& rules) : rules_(rules), anchor_(rules.size(), -1) {
  for (size_t r = 0; r < rules.size(); ++r) {
    const int anchor = PatternAnchor(rules[r].lhs());
    if (anchor < 0) continue;
    anchor_[r] = anchor;
    const Node& n = rules[r].lhs().node(anchor);
    by_anchor_[{n.kind, static_cast<int>(n.inputs.size()), static_cast<int>(n.output_types.size())}].push_back(
        static_cast<int>(r));
  }
}

std::vector<int> RuleIndex::Candidates(const GraphIndex& graph) const {
  std::vector<int> out;
  // Host nodes by shape, so each bucket is looked up once.
  std::map<Shape, std::vector<const Node*>> hosts;
  for (const Node& n : graph.graph().nodes()) {
    if (IsInputOrWeight(n.kind)) continue;
    hosts[{n.kind, static_cast<int>(n.inputs.size()), static_cast<int>(n.output_types.size())}].push_back(&n);
  }
  for (const auto& [shape, nodes] : hosts) {
    auto it = by_anchor_.find(shape);
    if (it == by_anchor_.end()) continue;
    for (int r : it->second) {
      const Node& anchor = rules_[r].lhs().node(anchor_[r]);
      const bool fits = std::any_of(nodes.begin(), nodes.end(), [&](const Node* host) {
        return ParamsEqual(anchor.kind, anchor.params, host->params);
      });
      if (fits) out.push_back(r);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace taso::optimizer
