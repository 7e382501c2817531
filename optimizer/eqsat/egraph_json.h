// E-graphs in the JSON format the e-graph community exchanges them in
// (egraph-serialize, read by extraction-gym and egglog's tools):
//
//   {"nodes": {"<node id>": {"op": "...", "children": ["<node id>", ...],
//                            "eclass": "<class id>", "cost": 1.5}, ...},
//    "root_eclasses": ["<class id>", ...],
//    "class_data": {"<class id>": {"type": "..."}, ...}}
//
// A child names an e-node; the operand is that e-node's class. Nodes marked
// "subsumed": true stay as operands' names but are never chosen. Read into
// an ExtractionProblem (extract.h), so every extractor runs on other
// people's e-graphs as on ours, and ours are written for theirs.
#ifndef TASO_OPTIMIZER_EQSAT_EGRAPH_JSON_H_
#define TASO_OPTIMIZER_EQSAT_EGRAPH_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "optimizer/eqsat/extract.h"

namespace taso::optimizer {

struct SerializedEGraph {
  // node_label holds each e-node's op; class_label its class's "type".
  ExtractionProblem problem;
  std::vector<std::string> class_name;  // per class: its id in the file
  std::vector<std::string> node_name;   // per e-node: its id in the file
  // Per e-node, parallel to problem.node_children: how often it reads each
  // class (TreeCost counts repeated operands with it).
  std::vector<std::vector<int>> child_uses;
  int subsumed = 0;  // e-nodes in the file never chosen ("subsumed": true)
};

// Bounds on what a file may ask of memory before it is read.
struct EGraphJsonLimits {
  int64_t max_bytes = int64_t{2} << 30;
  int64_t max_nodes = 20'000'000;
};

// InvalidArgument, naming the node or field, when the text is not such an
// e-graph: not JSON, a missing or mistyped field, a child that names no
// e-node, a cost that is negative or not finite, no roots or a root that
// names no class; ResourceExhausted past `limits`.
absl::StatusOr<SerializedEGraph> ParseEGraphJson(std::string_view text, const EGraphJsonLimits& limits = {});
// NotFound when the file cannot be read.
absl::StatusOr<SerializedEGraph> ReadEGraphJson(const std::string& path, const EGraphJsonLimits& limits = {});

// The problem as JSON: nodes and classes named by their e-graph ids (the
// problem's node_id and class_id), ops from node_label (else "node<n>"),
// each distinct operand once, naming its class's first e-node. E-nodes
// that can never be chosen (an operand class with no e-node, transitively)
// are left out. FailedPrecondition when a root class has no e-node left.
absl::StatusOr<std::string> EGraphJson(const ExtractionProblem& problem);
absl::Status WriteEGraphJson(const ExtractionProblem& problem, const std::string& path);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_EQSAT_EGRAPH_JSON_H_
