// The ONNX importer's state, shared by onnx_import.cc (model-level work:
// parsing, sorting, checking, types, opaque nodes) and onnx_import_ops.cc
// (lowering the operators the IR models). Not part of the public API.
#ifndef TASO_ONNX_IO_ONNX_IMPORT_INTERNAL_H_
#define TASO_ONNX_IO_ONNX_IMPORT_INTERNAL_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "onnx_io/onnx_import.h"
#include "onnx_io/onnx_shape_folding.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/onnx_pb.h"

namespace taso::onnx_internal {

// What an ONNX value name stands for while importing.
struct ImportedValue {
  enum class Kind {
    kTensor,        // an IR tensor
    kConstant,      // constant data the IR can hold; becomes a weight when an IR node reads it
    kSideConstant,  // constant data the IR cannot hold; only opaque nodes read it, by name
  };
  Kind kind = Kind::kTensor;
  TensorRef tensor;                             // kTensor
  const onnx::TensorProto* constant = nullptr;  // kConstant, kSideConstant
};

// A value's type as ONNX shape inference found it.
struct InferredType {
  bool is_tensor = false;
  int32_t elem_type = 0;
  bool has_shape = false;
  std::vector<int64_t> dims;  // -1 where unknown

  // A tensor of an IR element type with every dimension known.
  bool FullyKnown() const;
  // The IR's view: unknown element types are kUnspecified, unknown
  // dimensions -1, and an unknown rank a single unknown dimension.
  TensorType ToIr() const;
};

class Importer {
 public:
  explicit Importer(const OnnxImportOptions& options) : options_(options) {}
  // `model` must be topologically sorted and checked. `bridged` is its copy
  // in the linked ONNX library's versions (onnx_versions.h) when it is newer.
  absl::StatusOr<OnnxModel> Run(onnx::ModelProto model, std::optional<onnx::ModelProto> bridged);

 private:
  // --- onnx_import.cc ---
  absl::Status InferTypes();
  // Gives `model`'s graph inputs the shapes of options_.input_shapes, and
  // their other symbolic dimensions default_dim (noted in the report).
  // Returns whether any dimension was not the model's own.
  absl::StatusOr<bool> BindInputShapes(onnx::ModelProto& model, const std::set<std::string>& initializers);
  // Shape inference on `model` with `options`, alternating with folding the
  // integer shape arithmetic (onnx_shape_folding.h) until nothing more folds.
  // Fails only if the first inference does; `folded` gets the folded values.
  absl::Status InferWithFolding(const onnx::ModelProto& model, const onnx::ShapeInferenceOptions& options,
                                onnx::ModelProto& inferred, std::map<std::string, FoldedInts>& folded);
  absl::Status AddGraphInputsAndConstants();
  absl::Status ImportNode(const onnx::NodeProto& node, int index);
  absl::Status AddOpaque(const onnx::NodeProto& node, int index);
  // Where the IR's inputs and outputs sit among the node's (OpaqueInfo's
  // input_slots and output_slots): the gaps of omitted optional operands and
  // of constants the IR cannot hold.
  void SetOpaqueSlots(const onnx::NodeProto& node, OpaqueInfo& info) const;
  absl::StatusOr<std::vector<TensorRef>> AddOp(OpKind kind, const OpParams& params,
                                               const std::vector<TensorRef>& inputs);
  absl::StatusOr<TensorRef> AddOp1(OpKind kind, const OpParams& params, const std::vector<TensorRef>& inputs);
  TensorRef AddWeight(const std::string& name, TensorType type, std::shared_ptr<const std::string> data);
  // The IR tensor for a value, turning constants into weights on first use.
  absl::StatusOr<TensorRef> Materialize(const std::string& name);
  const TensorType& TypeOf(TensorRef ref) const { return nodes_[ref.node].output_types[ref.index]; }
  // `hint` if no value has that name yet, else hint_1, hint_2, ...
  std::string FreshName(const std::string& hint);
  // Forgets IR nodes from `mark` on (a lowering that did not fit).
  void Rollback(size_t mark);

  // --- onnx_import_ops.cc ---
  // Lowers a node the IR models into IR operators and returns what each of
  // its outputs stands for (outputs past the end are unused), or nullopt when
  // the node must stay opaque: an unsupported attribute value, inputs that
  // are not float32 or of unknown shape, shapes the registry rejects.
  std::optional<std::vector<ImportedValue>> Lower(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerConv(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerPool(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerGlobalPool(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerMatMul(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerGemm(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerElementwise(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerConcat(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerSplit(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerTranspose(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerReshape(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerFlatten(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerBatchNorm(const onnx::NodeProto& node);
  std::optional<std::vector<ImportedValue>> LowerPassThrough(const onnx::NodeProto& node);
  // Input `i` as a float32 IR tensor of known shape, if it is one.
  std::optional<TensorRef> FloatInput(const onnx::NodeProto& node, int i);
  // Input `i` as constant integers (shape and size operands), if it is one.
  std::optional<std::vector<int64_t>> ConstantIntsInput(const onnx::NodeProto& node, int i);
  std::optional<TensorRef> Reshape(TensorRef x, const std::vector<int64_t>& dims);
  TensorRef ScalarWeight(const std::string& hint, float value);

  OnnxImportOptions options_;
  onnx::ModelProto model_;
  // What shape inference reads: model_ itself, or its bridged copy.
  std::optional<onnx::ModelProto> bridged_;
  int64_t opset_ = 0;
  std::vector<Node> nodes_;
  std::map<std::string, ImportedValue> values_;
  // Inference on the model with symbolic input dimensions set to default_dim.
  std::map<std::string, InferredType> types_;
  // Serialized types from inference on the model as declared (for export).
  std::map<std::string, std::string> declared_types_;
  std::deque<onnx::TensorProto> constant_nodes_;  // values of Constant nodes (stable addresses)
  std::map<const onnx::TensorProto*, TensorRef> weights_;  // constants already turned into weights
  std::set<std::string> taken_names_;  // every value name in the model, and generated ones
  std::set<std::string> consumed_;     // values some node or graph output reads
  std::set<std::string> opaque_ops_;
  OnnxModel result_;
};

}  // namespace taso::onnx_internal

#endif  // TASO_ONNX_IO_ONNX_IMPORT_INTERNAL_H_
