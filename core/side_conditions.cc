#include "core/side_conditions.h"

#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph_proto.h"

namespace taso {
namespace {

void WriteNodeCondition(int node, const std::vector<ProofSignature>& signatures, rules::NodeCondition* c) {
  c->set_node(node);
  for (const ProofSignature& s : signatures) {
    rules::ProofSignature* p = c->add_signatures();
    p->set_function(s.name);
    for (int64_t v : s.params) p->add_params(v);
  }
}

void AddSide(const GraphConditions& side, google::protobuf::RepeatedPtrField<rules::NodeCondition>* out) {
  for (size_t id = 0; id < side.size(); ++id) {
    if (!side[id].empty()) WriteNodeCondition(static_cast<int>(id), side[id], out->Add());
  }
}

absl::StatusOr<GraphConditions> ReadSide(const google::protobuf::RepeatedPtrField<rules::NodeCondition>& recorded,
                                         const Graph& graph, const char* side) {
  GraphConditions out(graph.num_nodes());
  for (const rules::NodeCondition& c : recorded) {
    if (c.node() < 0 || c.node() >= graph.num_nodes() || IsInputOrWeight(graph.node(c.node()).kind)) {
      return absl::FailedPreconditionError(absl::StrCat("the ", side, "'s conditions name node ", c.node(),
                                                        ", which is not an operator"));
    }
    if (!out[c.node()].empty()) {
      return absl::FailedPreconditionError(absl::StrCat("the ", side, "'s conditions name node ", c.node(), " twice"));
    }
    for (const rules::ProofSignature& p : c.signatures()) {
      // A proof leaves open only the facts the verifier opens (a concat's
      // equal halves, a convolution's groups): a fact variable anywhere else
      // would widen the rule past what any proof here showed.
      for (int k = 0; k < p.params_size(); ++k) {
        if (IsFactVariable(p.params(k)) && k != OpenFactIndex(p.function(), OpenFacts::kAll)) {
          return absl::InvalidArgumentError(absl::StrCat("the ", side, "'s node ", c.node(), " leaves parameter ", k,
                                                            " of ", p.function(),
                                                            " open, which no proof here leaves open"));
        }
      }
      out[c.node()].push_back(ProofSignature{p.function(), {p.params().begin(), p.params().end()}});
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<ProofSignature>> NodeSignaturesIn(const Graph& graph, const Node& node) {
  std::vector<TensorType> inputs;
  for (const TensorRef& in : node.inputs) inputs.push_back(graph.type(in));
  return NodeSignatures(node.kind, node.params, inputs, static_cast<int>(node.output_types.size()));
}

absl::StatusOr<rules::NodeCondition> OwnNodeCondition(const Graph& graph, int node) {
  auto sigs = NodeSignaturesIn(graph, graph.node(node));
  if (!sigs.ok()) return sigs.status();
  rules::NodeCondition out;
  WriteNodeCondition(node, *sigs, &out);
  return out;
}

absl::StatusOr<GraphConditions> ConditionsOf(const Graph& graph) {
  GraphConditions out(graph.num_nodes());
  for (const Node& node : graph.nodes()) {
    if (IsInputOrWeight(node.kind)) continue;
    auto sigs = NodeSignaturesIn(graph, node);
    if (!sigs.ok()) {
      return absl::Status(sigs.status().code(), absl::StrCat(DescribeNode(node), ": ", sigs.status().message()));
    }
    out[node.id] = std::move(*sigs);
  }
  return out;
}

rules::SideConditions ConditionsToProto(const RuleConditions& conditions) {
  rules::SideConditions out;
  out.set_vocabulary_version(kProofSignatureVersion);
  AddSide(conditions.source, out.mutable_source());
  AddSide(conditions.target, out.mutable_target());
  return out;
}

absl::StatusOr<RuleConditions> RecordedConditions(const rules::Rule& rule, const Graph& source, const Graph& target) {
  if (!rule.has_conditions()) {
    return absl::FailedPreconditionError("no side conditions recorded with the proof (it predates them: prove it again)");
  }
  if (rule.conditions().vocabulary_version() != kProofSignatureVersion) {
    return absl::FailedPreconditionError(absl::StrCat("side conditions recorded under signature vocabulary ",
                                                      rule.conditions().vocabulary_version(), ", this build speaks ",
                                                      kProofSignatureVersion, " (prove it again)"));
  }
  RuleConditions out;
  auto s = ReadSide(rule.conditions().source(), source, "source");
  if (!s.ok()) return s.status();
  auto t = ReadSide(rule.conditions().target(), target, "target");
  if (!t.ok()) return t.status();
  out.source = std::move(*s);
  out.target = std::move(*t);
  FactBinding binding;  // one for both sides: a fact variable is one value in the rule
  for (const auto& [graph, recorded, side] :
       {std::tuple{&source, &out.source, "source"}, std::tuple{&target, &out.target, "target"}}) {
    auto own = ConditionsOf(*graph);
    if (!own.ok()) return absl::FailedPreconditionError(std::string(own.status().message()));
    for (int id = 0; id < graph->num_nodes(); ++id) {
      if (!SignaturesAdmit((*recorded)[id], (*own)[id], &binding)) {
        return absl::FailedPreconditionError(
            absl::StrCat("the ", side, "'s node ", id, " was proved as [", DescribeConditions({(*recorded)[id]}),
                         "] but its shapes give [", DescribeConditions({(*own)[id]}), "]"));
      }
    }
  }
  return out;
}

bool ConditionsHold(const std::vector<ProofSignature>& recorded, OpKind kind, const OpParams& params,
                    const std::vector<TensorType>& inputs, int num_outputs, FactBinding* binding) {
  auto sigs = NodeSignatures(kind, params, inputs, num_outputs);
  return sigs.ok() && SignaturesAdmit(recorded, *sigs, binding);
}

bool ConditionsAdmit(const GraphConditions& recorded, const GraphConditions& actual, FactBinding& binding) {
  if (recorded.size() != actual.size()) return false;
  for (size_t id = 0; id < recorded.size(); ++id) {
    if (!SignaturesAdmit(recorded[id], actual[id], &binding)) return false;
  }
  return true;
}

std::string DescribeConditions(const GraphConditions& conditions) {
  std::vector<std::string> parts;
  for (const auto& node : conditions) {
    for (const ProofSignature& s : node) parts.push_back(s.ToString());
  }
  return absl::StrJoin(parts, " ");
}

}  // namespace taso
