#include "verifier/renaming_proof.h"

#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/rule_form.h"
#include "core/side_conditions.h"
#include "records/rule_id.h"
#include "verifier/candidate.h"

namespace taso::verifier {
namespace {

using records::RenamingOutcome;
using records::RenamingVerdict;

RenamingVerdict NotDerived(rules::Rule rule, std::string why) {
  return RenamingVerdict{std::move(rule), RenamingOutcome::kNotDerived, std::move(why)};
}

std::map<int, const rules::NodeCondition*> ByNode(
    const google::protobuf::RepeatedPtrField<rules::NodeCondition>& conditions) {
  std::map<int, const rules::NodeCondition*> out;
  for (const rules::NodeCondition& c : conditions) out[c.node()] = &c;
  return out;
}

// Carries `from`'s conditions of the nodes `from_nodes` to `to_nodes` (the
// same positions in one form); false if one is missing.
bool CarryOver(const std::map<int, const rules::NodeCondition*>& from, const std::vector<int>& from_nodes,
               const std::vector<int>& to_nodes, std::map<int, rules::NodeCondition>& to) {
  if (from_nodes.size() != to_nodes.size()) return false;
  for (size_t i = 0; i < from_nodes.size(); ++i) {
    auto it = from.find(from_nodes[i]);
    if (it == from.end()) return false;
    rules::NodeCondition c = *it->second;
    c.set_node(to_nodes[i]);
    to[to_nodes[i]] = std::move(c);
  }
  return true;
}

// Fact variables numbered as a proof of the rule itself numbers them: in
// order of first use, source nodes then target nodes.
void RenumberFacts(rules::SideConditions& conditions) {
  std::map<int64_t, int64_t> renumbered;
  for (auto* side : {conditions.mutable_source(), conditions.mutable_target()}) {
    for (rules::NodeCondition& node : *side) {
      for (rules::ProofSignature& sig : *node.mutable_signatures()) {
        for (int i = 0; i < sig.params_size(); ++i) {
          if (!IsFactVariable(sig.params(i))) continue;
          auto [it, inserted] =
              renumbered.try_emplace(sig.params(i), FactVariable(static_cast<int>(renumbered.size())));
          sig.set_params(i, it->second);
        }
      }
    }
  }
}

// What a proof as a renaming needs of the other rule's graphs: its form.
struct OtherForm {
  bool decodes = false;
  Form form;
  std::string key;  // FormKey(form)
};

OtherForm FormOf(const rules::Rule& other) {
  OtherForm out;
  const auto theirs = DecodeRule(other);
  if (!theirs) return out;
  out.decodes = true;
  out.form = MakeForm(theirs->View());
  out.key = FormKey(out.form);
  return out;
}

// How `rule` may stand to `other`.
enum class Relation {
  kRenaming,  // the same form, or an instance of other's (read either way)
  kFromSmaller,  // a smaller pair it follows from has other's form, or an instance of it
};

// ProveRuleAsRenaming (or, kFromSmaller, ProveRuleFromSmaller) with
// `rule`'s graphs decoded already (`mine`) and `other`'s form made.
RenamingVerdict ProveDecodedAsRenaming(rules::Rule rule, const std::optional<DecodedRule>& mine,
                                       const rules::Rule& other, const OtherForm& theirs, Relation relation) {
  if (!mine || !theirs.decodes) return NotDerived(std::move(rule), "a rule's graphs do not decode");
  const Form& other_form = theirs.form;
  const std::string& other_key = theirs.key;
  const bool from_smaller = relation == Relation::kFromSmaller;
  // The pairs whose form may be other's: the rule, or each smaller one it follows from.
  const std::vector<PairView> bases =
      from_smaller ? SmallerRulesImplying(mine->View()) : std::vector<PairView>{mine->View()};
  // Each read left to right or right to left: pruning's renamings include
  // both. The same form first; else an instance of `other`'s form (the same
  // skeleton with some of its variables merged). Most rules are renamings
  // read left to right, so the reversed reading is made only when asked for.
  std::vector<std::optional<Form>> readings(2 * bases.size());
  auto reading = [&](size_t r) -> const Form& {
    if (!readings[r]) readings[r] = MakeForm(r % 2 == 0 ? bases[r / 2] : bases[r / 2].Reversed());
    return *readings[r];
  };
  auto first_reading = [&](auto matches) -> int {
    for (size_t r = 0; r < readings.size(); ++r) {
      if (matches(reading(r))) return static_cast<int>(r);
    }
    return -1;
  };
  int r = first_reading([&](const Form& f) { return FormKey(f) == other_key; });
  const bool instance = r < 0;
  if (instance) r = first_reading([&](const Form& f) { return IsInstanceOf(f, other_form); });
  if (r < 0) {
    const char* what = from_smaller ? "no smaller pair it follows from has" : "its form is";
    return NotDerived(std::move(rule),
                      absl::StrCat(what, " neither the form of ", other.id(), " nor an instance of it"));
  }
  const Form& form = reading(static_cast<size_t>(r));
  const bool reversed = r % 2 == 1;
  const std::string from = absl::StrCat(reversed ? "read right to left, " : "",
                                        from_smaller ? "following from the smaller "
                                                     : (instance ? "an instance of " : "a renaming of "),
                                        other.id());
  switch (other.status()) {
    case rules::RULE_STATUS_PROVED:
    case rules::RULE_STATUS_PRUNED:
      break;
    case rules::RULE_STATUS_REFUTED:
    case rules::RULE_STATUS_TIMEOUT:
    case rules::RULE_STATUS_UNKNOWN:
    case rules::RULE_STATUS_REJECTED_PRECHECK: {
      // A special case may hold where the general law does not, or be
      // proved where its proof ran out: an instance, or a rule the smaller
      // one would imply, is then proved alone.
      if (instance || from_smaller) {
        return NotDerived(std::move(rule), absl::StrCat("the ", from_smaller ? "smaller" : "general", " rule ",
                                                        other.id(), " is not proved"));
      }
      rule.set_status(other.status());
      rule.set_status_detail(absl::StrCat("as ", from, ": ", other.status_detail()));
      rules::ProofInfo* proof = rule.mutable_proof();
      proof->set_solver(other.proof().solver());
      proof->set_axiom_set_version(other.proof().axiom_set_version());
      rule.clear_conditions();
      return RenamingVerdict{std::move(rule), RenamingOutcome::kSameVerdict, ""};
    }
    default:
      return NotDerived(std::move(rule), absl::StrCat(other.id(), " has no verdict"));
  }
  // The form's a side is this rule's source unless it was read reversed.
  std::map<int, rules::NodeCondition> a_side, b_side;
  if (!CarryOver(ByNode(other.conditions().source()), other_form.emitted_a, form.emitted_a, a_side) ||
      !CarryOver(ByNode(other.conditions().target()), other_form.emitted_b, form.emitted_b, b_side)) {
    return NotDerived(std::move(rule), absl::StrCat(other.id(), "'s conditions do not name every operator"));
  }
  std::map<int, rules::NodeCondition>& source_side = reversed ? b_side : a_side;
  std::map<int, rules::NodeCondition>& target_side = reversed ? a_side : b_side;
  // The operators the smaller rule does not write (the one made its
  // variable, those of outputs both sides compute alike, the one both sides
  // end in) hold on the shapes they have here.
  if (from_smaller) {
    for (const auto& [side, graph] : {std::tie(source_side, mine->source), std::tie(target_side, mine->target)}) {
      for (const Node& node : graph.nodes()) {
        if (IsInputOrWeight(node.kind) || side.count(node.id) > 0) continue;
        auto own = OwnNodeCondition(graph, node.id);
        if (!own.ok()) return NotDerived(std::move(rule), absl::StrCat("its own operator: ", own.status().message()));
        side[node.id] = *std::move(own);
      }
    }
  }
  rules::SideConditions* conditions = rule.mutable_conditions();
  conditions->Clear();
  conditions->set_vocabulary_version(other.conditions().vocabulary_version());
  for (auto& [node, c] : source_side) *conditions->add_source() = std::move(c);
  for (auto& [node, c] : target_side) *conditions->add_target() = std::move(c);
  RenumberFacts(*conditions);
  // The check a proof's own conditions pass: every operator named, only the
  // facts a proof may leave open left open, and this rule's shapes admitted.
  if (auto checked = RecordedConditions(rule, mine->source, mine->target); !checked.ok()) {
    rule.clear_conditions();
    return NotDerived(std::move(rule), absl::StrCat("the conditions of ", other.id(), " do not carry over: ",
                                                    checked.status().message()));
  }
  rule.set_status(rules::RULE_STATUS_PROVED);
  rule.set_status_detail(absl::StrCat("proved as ", from,
                                      from_smaller ? " (what both sides compute alike set aside: one proof)"
                                      : instance   ? " (its variables merged: one proof)"
                                                   : " (one form, one proof)"));
  rules::ProofInfo* proof = rule.mutable_proof();
  *proof = other.proof();
  proof->set_proof_time_ms(0);
  proof->clear_counterexample();
  return RenamingVerdict{std::move(rule), RenamingOutcome::kProved, ""};
}

}  // namespace

RenamingVerdict ProveRuleAsRenaming(rules::Rule rule, const rules::Rule& other) {
  const auto mine = DecodeRule(rule);
  return ProveDecodedAsRenaming(std::move(rule), mine, other, FormOf(other), Relation::kRenaming);
}

RenamingVerdict ProveRuleFromSmaller(rules::Rule rule, const rules::Rule& smaller) {
  const auto mine = DecodeRule(rule);
  return ProveDecodedAsRenaming(std::move(rule), mine, smaller, FormOf(smaller), Relation::kFromSmaller);
}

records::PairProver RenamingProverFor(const rules::Rule& other) {
  // Shared, so that copies of the prover (std::function copies) share it.
  auto theirs = std::make_shared<const std::pair<rules::Rule, OtherForm>>(other, FormOf(other));
  return [theirs](const records::Spec& spec, const rules_db::CandidateClass& candidate_class,
                  const rules_db::CandidatePair& pair) -> absl::StatusOr<RenamingVerdict> {
    auto graphs = DecodeCandidate(spec, candidate_class, pair);
    if (!graphs.ok()) return graphs.status();
    // The graphs at hand serve the proof, and the id the store's re-check
    // gave the pair (or, without one, the graphs): writing the canonical
    // texts again was a fifth of the store's time deriving a job's verdicts.
    rules::Rule rule = RuleFromGraphs(*graphs);
    if (!pair.rule_id().empty()) {
      rule.set_id(pair.rule_id());
    } else {
      auto id = records::RuleIdOf(graphs->source, graphs->target, graphs->outputs);
      if (!id.ok()) return id.status();
      rule.set_id(*id);
    }
    const auto mine = DecodedFromGraphs(std::move(graphs->source), std::move(graphs->target), graphs->outputs);
    const Relation relation = pair.derivation() == rules_db::DERIVATION_FROM_SMALLER_RULE ? Relation::kFromSmaller
                                                                                           : Relation::kRenaming;
    return ProveDecodedAsRenaming(std::move(rule), mine, theirs->first, theirs->second, relation);
  };
}

}  // namespace taso::verifier
