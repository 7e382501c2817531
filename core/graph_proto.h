// Conversion between the in-memory IR and proto/ir.proto (the wire format all
// services share). FromProto validates: a malformed graph is an error, never
// a crash.
#ifndef TASO_CORE_GRAPH_PROTO_H_
#define TASO_CORE_GRAPH_PROTO_H_

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "proto/ir.pb.h"

namespace taso {

ir::TensorType TensorTypeToProto(const TensorType& type);
absl::StatusOr<TensorType> TensorTypeFromProto(const ir::TensorType& proto);

ir::OpParams OpParamsToProto(OpKind kind, const OpParams& params);
absl::StatusOr<OpParams> OpParamsFromProto(OpKind kind, const ir::OpParams& proto);

// `weight_data` false leaves weights' values out (what a timing needs: it
// does not depend on them, and a model's weights can be 100 MB).
ir::Graph GraphToProto(const Graph& graph, bool weight_data = true);
absl::StatusOr<Graph> GraphFromProto(const ir::Graph& proto);

// Text-format helpers for files users write by hand.
absl::StatusOr<Graph> GraphFromText(const std::string& text);
std::string GraphToText(const Graph& graph);

}  // namespace taso

#endif  // TASO_CORE_GRAPH_PROTO_H_
