#include "verifier/candidate.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph_proto.h"
#include "records/encoding.h"

namespace taso::verifier {

absl::StatusOr<CandidateGraphs> DecodeCandidate(const records::Spec& spec,
                                                const rules_db::CandidateClass& candidate_class,
                                                const rules_db::CandidatePair& pair) {
  const int members = candidate_class.members_size();
  if (pair.source_member() < 0 || pair.source_member() >= members || pair.target_member() < 0 ||
      pair.target_member() >= members) {
    return absl::InvalidArgumentError(absl::StrCat("pair (", pair.source_member(), ", ", pair.target_member(),
                                                   ") names a member outside the class of ", members));
  }
  auto decode = [&](int m) -> absl::StatusOr<Graph> {
    auto g = records::DecodeGraph(spec, candidate_class.members(m).canonical());
    if (!g.ok()) return absl::Status(g.status().code(), absl::StrCat("member ", m, ": ", g.status().message()));
    return g;
  };
  auto source = decode(pair.source_member());
  if (!source.ok()) return source.status();
  auto target = decode(pair.target_member());
  if (!target.ok()) return target.status();
  CandidateGraphs out{std::move(*source), std::move(*target), {}};
  const int n = static_cast<int>(out.source.outputs().size());
  if (pair.rejected() && pair.output_mapping_size() == 0) return out;  // no mapping: the re-check failed
  if (pair.output_mapping_size() != n || static_cast<int>(out.target.outputs().size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat("output mapping has ", pair.output_mapping_size(),
                                                   " entries for graphs with ", n, " and ",
                                                   out.target.outputs().size(), " outputs"));
  }
  for (int i = 0; i < n; ++i) out.outputs.emplace_back(i, pair.output_mapping(i));
  return out;
}

rules::Rule RuleFromGraphs(const CandidateGraphs& graphs) {
  rules::Rule rule;
  std::map<std::string, const Node*> variables;
  for (const Graph* g : {&graphs.source, &graphs.target}) {
    for (const Node& node : g->nodes()) {
      if (node.kind == OpKind::kInput || node.kind == OpKind::kWeight) variables.emplace(node.name, &node);
    }
  }
  for (const auto& [name, node] : variables) {
    rules::Variable* v = rule.add_variables();
    v->set_name(name);
    *v->mutable_type() = TensorTypeToProto(node->output_types[0]);
    v->set_kind(node->kind == OpKind::kWeight ? ir::OP_WEIGHT : ir::OP_INPUT);
  }
  *rule.mutable_source() = GraphToProto(graphs.source);
  *rule.mutable_target() = GraphToProto(graphs.target);
  for (const auto& [s, t] : graphs.outputs) {
    rules::OutputPair* p = rule.add_outputs();
    p->set_source_output(s);
    p->set_target_output(t);
  }
  rule.set_status(rules::RULE_STATUS_CANDIDATE);
  // Only a hint for the search's order (costs decide): fewer operators.
  const int s = graphs.source.num_ops(), t = graphs.target.num_ops();
  rule.set_direction(t < s ? rules::DIRECTION_HINT_FORWARD
                           : s < t ? rules::DIRECTION_HINT_BACKWARD : rules::DIRECTION_HINT_NONE);
  return rule;
}

absl::StatusOr<rules::Rule> RuleOfPair(const records::Spec& spec, const rules_db::CandidateClass& candidate_class,
                                       const rules_db::CandidatePair& pair) {
  auto graphs = DecodeCandidate(spec, candidate_class, pair);
  if (!graphs.ok()) return graphs.status();
  return RuleFromGraphs(*graphs);
}

void ApplyProofResult(const ProofResult& result, const std::string& solver, const std::string& axiom_set_version,
                      rules::Rule& rule) {
  switch (result.outcome) {
    case ProofOutcome::kProved: rule.set_status(rules::RULE_STATUS_PROVED); break;
    case ProofOutcome::kRefuted: rule.set_status(rules::RULE_STATUS_REFUTED); break;
    case ProofOutcome::kTimeout: rule.set_status(rules::RULE_STATUS_TIMEOUT); break;
    case ProofOutcome::kUnknown: rule.set_status(rules::RULE_STATUS_UNKNOWN); break;
  }
  rule.set_status_detail(result.detail);
  rules::ProofInfo* proof = rule.mutable_proof();
  proof->clear_axioms_used();
  for (const std::string& a : result.axioms_used) proof->add_axioms_used(a);
  proof->set_proof_time_ms(static_cast<int64_t>(result.seconds * 1000 + 0.5));
  proof->set_solver(solver);
  proof->set_axiom_set_version(axiom_set_version);
  // What the proof assumed travels with it; an unproved rule assumes nothing.
  if (result.outcome == ProofOutcome::kProved) {
    *rule.mutable_conditions() = ConditionsToProto(result.conditions);
  } else {
    rule.clear_conditions();
  }
}

}  // namespace taso::verifier
