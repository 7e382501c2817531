// ONNX models to the IR. Operators the IR models (Conv, MatMul, Gemm, pools,
// ...) become IR operators; every other node becomes an opaque node that the
// optimizer leaves alone and ExportOnnx writes back verbatim, so no node is
// ever dropped. Whatever the model, ImportOnnx returns a status and never
// crashes: malformed models are InvalidArgument with a message naming the
// node or value at fault.
#ifndef TASO_ONNX_IO_ONNX_IMPORT_H_
#define TASO_ONNX_IO_ONNX_IMPORT_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "onnx_io/onnx_external_data.h"

namespace taso {

struct OnnxImportOptions {
  // Shapes of graph inputs by name (--input-shape), replacing their
  // symbolic dimensions; the rank and the fixed dimensions must match.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Value for the other symbolic or unknown dimensions of graph inputs
  // (e.g. batch "N"); the report notes each one bound.
  int64_t default_dim = 1;
  // Larger models are InvalidArgument (the message names this option); the
  // external data read counts.
  int64_t max_model_bytes = 2LL << 30;
  // Where the files the model's external tensors name are read from (the
  // model's directory, or an export's data in memory). Empty: such tensors
  // stay opaque side constants, written back as the references they are.
  ExternalData external_data;
};

// What ExportOnnx needs to reproduce an opaque node exactly.
struct OnnxOpaqueNode {
  std::string node_proto;  // serialized onnx.NodeProto as in the model
  // Values the node's subgraphs (If/Loop/Scan bodies) read from the
  // enclosing graph by name. They are the IR node's inputs after the node's
  // own, in this order, so the IR sees the dependency.
  std::vector<std::string> outer_scope_inputs;
  // Serialized onnx.TypeProto of each non-empty output as shape inference saw
  // it on the model as declared (symbolic dimensions kept); "" if unknown.
  std::vector<std::string> output_types;
};

struct OnnxModel {
  Graph graph;
  // The model minus its graph's nodes, initializers and value_info: metadata,
  // opset imports, functions, graph name, inputs and outputs (serialized
  // onnx.ModelProto).
  std::string model_template;
  // Opaque nodes by the IR node's Node::name (unique; the ONNX node name when
  // it has a unique one).
  std::map<std::string, OnnxOpaqueNode> opaque_nodes;
  // Initializers the IR cannot hold (element types such as double or string,
  // zero-sized or external data) by name, serialized onnx.TensorProto. Only
  // opaque nodes read them; export writes them back unchanged.
  std::map<std::string, std::string> side_constants;
  // Graph inputs that were also initializers (imported as weights).
  std::set<std::string> initializer_inputs;
  // "domain::OpType" of the opaque nodes, sorted and unique, for reports.
  std::vector<std::string> opaque_ops_seen;
  // The ONNX node each IR operator came from, by IR node id: its name, or
  // "OpType#index" when it has none; "" for inputs and weights. For tools
  // that say where in the model something is (`taso rules match`).
  std::vector<std::string> node_origins;
  // The same nodes' ONNX operator types ("Conv"; "domain::Type" outside the
  // default domain), "" for inputs and weights: node_origins and this name a
  // node as the user's model does ("conv1 (Conv)", OnnxNodeLabels).
  std::vector<std::string> node_op_types;
  // What import could not do but worked around (e.g. shape inference that
  // failed after folding shape arithmetic, leaving some shapes unknown).
  std::vector<std::string> import_notes;
  // Bytes of tensor data read from external files (0: none), which export
  // then writes the same way.
  int64_t external_data_bytes = 0;
};

absl::StatusOr<OnnxModel> ImportOnnx(const std::string& model_bytes, const OnnxImportOptions& options = {});

// ImportOnnx on the file at `path`, its external data read from beside it
// (unless `options` names other files). InvalidArgument "cannot read PATH"
// when the file cannot be read.
absl::StatusOr<OnnxModel> ImportOnnxFile(const std::string& path, OnnxImportOptions options = {});

// "x=1x3x224x224" per input (--input-shape, repeatable) as input_shapes;
// InvalidArgument naming the bad spec.
absl::StatusOr<std::map<std::string, std::vector<int64_t>>> ParseInputShapes(const std::vector<std::string>& specs);
// One input's shape in that form: FormatInputShape("x", {1, 3}) is "x=1x3".
std::string FormatInputShape(const std::string& name, const std::vector<int64_t>& dims);

// Per IR node id, "ONNX conv1 (Conv)": the ONNX node an operator came from,
// as pictures label it; "" for inputs and weights.
std::vector<std::string> OnnxNodeLabels(const OnnxModel& model);

// The main graph's nodes by operator type ("Conv"; "domain::Type" outside
// the default domain): what a report compares before and after, in the
// model's own vocabulary. InvalidArgument when the bytes are not a model.
absl::StatusOr<std::map<std::string, int>> CountOnnxOperators(const std::string& model_bytes);

}  // namespace taso

#endif  // TASO_ONNX_IO_ONNX_IMPORT_H_
