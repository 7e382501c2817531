// The facts a rule's proof assumed, kept with the rule: for every operator
// node of both sides, the proof signatures it stood for (proof_signature.h).
// A rule proved on the generator's shapes holds on host tensors exactly where
// every operator keeps those signatures, so a search checks them on the host
// graph, for the matched side and for the replacement it builds.
#ifndef TASO_CORE_SIDE_CONDITIONS_H_
#define TASO_CORE_SIDE_CONDITIONS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/proof_signature.h"
#include "proto/rules.pb.h"

namespace taso {

// Per node id, the signatures the node stands for; empty for variables.
using GraphConditions = std::vector<std::vector<ProofSignature>>;

struct RuleConditions {
  GraphConditions source;
  GraphConditions target;
};

// The signatures one operator node of `graph` stands for, on its inputs'
// types there (NodeSignatures); Unimplemented for an unmodeled operator.
absl::StatusOr<std::vector<ProofSignature>> NodeSignaturesIn(const Graph& graph, const Node& node);

// The recorded form of one operator node's signatures on its own shapes.
absl::StatusOr<rules::NodeCondition> OwnNodeCondition(const Graph& graph, int node);

// The conditions of a graph as its own shapes give them. Unimplemented for an
// operator the axioms do not model.
absl::StatusOr<GraphConditions> ConditionsOf(const Graph& graph);

rules::SideConditions ConditionsToProto(const RuleConditions& conditions);

// The conditions recorded with a rule, checked against its sides: recorded
// under this vocabulary, naming every operator node and only those, leaving
// open only the facts a proof may leave open (OpenFactIndex), and admitting
// what the sides' own shapes give (a rule whose shapes contradict its proof's
// facts is not trusted). FailedPrecondition with the reason; InvalidArgument
// for a fact left open that no proof leaves open (the conditions were edited).
absl::StatusOr<RuleConditions> RecordedConditions(const rules::Rule& rule, const Graph& source, const Graph& target);

// Whether an operator node, with these parameters on inputs of these types,
// stands for the signatures `recorded`; fact variables bind in `binding`
// (ProofSignature::Admits), so checking every node of a match with one
// binding checks that facts the proof assumed equal are equal.
bool ConditionsHold(const std::vector<ProofSignature>& recorded, OpKind kind, const OpParams& params,
                    const std::vector<TensorType>& inputs, int num_outputs, FactBinding* binding = nullptr);
// Whether `actual` (ConditionsOf an instance of a side) is admitted node by
// node by `recorded`, fact variables bound in `binding`: pass one binding
// for both sides of a rule.
bool ConditionsAdmit(const GraphConditions& recorded, const GraphConditions& actual, FactBinding& binding);

// "conv2d(1,1,0,0,1) concat(1,1)", in node order: for people reading a rule.
std::string DescribeConditions(const GraphConditions& conditions);

}  // namespace taso

#endif  // TASO_CORE_SIDE_CONDITIONS_H_
