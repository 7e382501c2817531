#include "optimizer/rewrite/rule_matches.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/graph_proto.h"
#include "optimizer/rewrite/match.h"
#include "optimizer/rewrite/rule_index.h"

namespace taso::optimizer {

std::vector<rules_db::RuleMatch> MatchRewrites(const Graph& graph, const std::vector<RewriteRule>& rewrites,
                                               int max_sites) {
  const GraphIndex index(graph);
  const RuleIndex rules(rewrites);
  std::vector<rules_db::RuleMatch> out;
  for (int r : rules.Candidates(index)) {
    const RewriteRule& rewrite = rewrites[r];
    const std::vector<Match> matches = FindMatches(rewrite, index, kMaxCountedMatches);
    if (matches.empty()) continue;
    rules_db::RuleMatch m;
    const bool backward = !rewrite.name.empty() && rewrite.name.back() == '~';
    m.set_rule_id(backward ? rewrite.name.substr(0, rewrite.name.size() - 1) : rewrite.name);
    m.set_backward(backward);
    m.set_count(static_cast<int>(matches.size()));
    m.set_count_capped(matches.size() >= static_cast<size_t>(kMaxCountedMatches));
    for (size_t i = 0; i < matches.size() && static_cast<int>(i) < max_sites; ++i) {
      rules_db::MatchSite* site = m.add_sites();
      for (int node : matches[i].nodes) {
        if (node >= 0) site->add_nodes(node);
      }
    }
    out.push_back(std::move(m));
  }
  auto key = [](const rules_db::RuleMatch& m) { return std::make_pair(m.rule_id(), m.backward()); };
  std::stable_sort(out.begin(), out.end(),
                   [&](const rules_db::RuleMatch& a, const rules_db::RuleMatch& b) { return key(a) < key(b); });
  // Rewrites of one name (structural ones instantiated at several shapes)
  // report as one.
  std::vector<rules_db::RuleMatch> merged;
  for (rules_db::RuleMatch& m : out) {
    if (merged.empty() || key(merged.back()) != key(m)) {
      merged.push_back(std::move(m));
      continue;
    }
    rules_db::RuleMatch& into = merged.back();
    into.set_count(into.count() + m.count());
    into.set_count_capped(into.count_capped() || m.count_capped());
    for (const rules_db::MatchSite& site : m.sites()) {
      if (into.sites_size() < max_sites) *into.add_sites() = site;
    }
  }
  return merged;
}

absl::StatusOr<rules_db::MatchRulesResponse> MatchProvedRules(const ir::Graph& graph_proto,
                                                              const std::vector<rules::Rule>& rules, int max_sites) {
  auto graph = GraphFromProto(graph_proto);
  if (!graph.ok()) return absl::InvalidArgumentError(absl::StrCat("the graph to match in: ", graph.status().message()));
  rules_db::MatchRulesResponse response;
  std::vector<RewriteRule> rewrites;
  std::map<std::string, const rules::Rule*> by_id;
  for (const rules::Rule& rule : rules) {
    if (rule.status() != rules::RULE_STATUS_PROVED) continue;
    auto both = RewritesFromRule(rule);
    if (!both.ok()) {
      // As the searches load rules: a rule without trustworthy conditions is
      // skipped and counted; one that does not decode is an error.
      if (both.status().code() != absl::StatusCode::kFailedPrecondition) {
        return both.status();  // names the rule
      }
      if (response.rules_unusable() == 0) response.set_first_unusable(std::string(both.status().message()));
      response.set_rules_unusable(response.rules_unusable() + 1);
      continue;
    }
    response.set_rules_matched(response.rules_matched() + 1);
    by_id[rule.id()] = &rule;
    for (RewriteRule& r : *both) rewrites.push_back(std::move(r));
  }
  for (rules_db::RuleMatch& m : MatchRewrites(*graph, rewrites, max_sites)) {
    if (auto it = by_id.find(m.rule_id()); it != by_id.end()) *m.mutable_rule() = *it->second;
    *response.add_matches() = std::move(m);
  }
  return response;
}

}  // namespace taso::optimizer
