// The bridge from newer ONNX versions to the linked library's (see the
// header). Each operator that is new or changed its inputs or attributes
// after opset 17 has a form here; every other operator is read by the
// library's opset-17 schema, which holds for operators whose later versions
// only admitted more element types.
#include "onnx_io/onnx_versions.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx_io/onnx_common.h"
#include "onnx/defs/schema.h"

namespace taso::onnx_internal {
namespace {

// How a newer operator is written for the library.
enum class BridgeForm {
  kReduceAxesInput,      // Reduce*-18: the constant axes input becomes the attribute
  kPadWithAxes,          // Pad-18/19: an axes input, mode "wrap"
  kResizeNewer,          // Resize-18/19: axes, aspect-ratio policy, half_pixel_symmetric
  kPoolWithDilations,    // AveragePool-19, LpPool-18: a max pool has the same output shape
  kScatterMinMax,        // ScatterElements/ScatterND-18: reductions max and min
  kGridSampleModes,      // GridSample-20: renamed modes
  kSameAsFirstInput,     // output shaped and typed as input 0: Identity
  kBroadcastBinary,      // numpy-broadcast binary: Add
  kUnknownShape,         // no opset-17 equivalent: outputs left unknown
};

struct NewerOperator {
  const char* op_type;
  int since;  // the opset the form applies from
  BridgeForm form;
};

constexpr NewerOperator kNewerOperators[] = {
    {"ReduceL1", 18, BridgeForm::kReduceAxesInput},
    {"ReduceL2", 18, BridgeForm::kReduceAxesInput},
    {"ReduceLogSum", 18, BridgeForm::kReduceAxesInput},
    {"ReduceLogSumExp", 18, BridgeForm::kReduceAxesInput},
    {"ReduceMax", 18, BridgeForm::kReduceAxesInput},
    {"ReduceMean", 18, BridgeForm::kReduceAxesInput},
    {"ReduceMin", 18, BridgeForm::kReduceAxesInput},
    {"ReduceProd", 18, BridgeForm::kReduceAxesInput},
    {"ReduceSumSquare", 18, BridgeForm::kReduceAxesInput},
    {"Pad", 18, BridgeForm::kPadWithAxes},
    {"Resize", 18, BridgeForm::kResizeNewer},
    {"AveragePool", 19, BridgeForm::kPoolWithDilations},
    {"LpPool", 18, BridgeForm::kPoolWithDilations},
    {"ScatterElements", 18, BridgeForm::kScatterMinMax},
    {"ScatterND", 18, BridgeForm::kScatterMinMax},
    {"GridSample", 20, BridgeForm::kGridSampleModes},
    {"Mish", 18, BridgeForm::kSameAsFirstInput},
    {"GroupNormalization", 18, BridgeForm::kSameAsFirstInput},
    {"BitwiseNot", 18, BridgeForm::kSameAsFirstInput},
    {"Gelu", 20, BridgeForm::kSameAsFirstInput},
    {"RMSNormalization", 23, BridgeForm::kSameAsFirstInput},
    {"RotaryEmbedding", 23, BridgeForm::kSameAsFirstInput},
    {"Swish", 24, BridgeForm::kSameAsFirstInput},
    {"BitwiseAnd", 18, BridgeForm::kBroadcastBinary},
    {"BitwiseOr", 18, BridgeForm::kBroadcastBinary},
    {"BitwiseXor", 18, BridgeForm::kBroadcastBinary},
    {"CenterCropPad", 18, BridgeForm::kUnknownShape},
    {"Col2Im", 18, BridgeForm::kUnknownShape},
    {"DeformConv", 19, BridgeForm::kUnknownShape},
    {"AffineGrid", 20, BridgeForm::kUnknownShape},
    {"DFT", 20, BridgeForm::kUnknownShape},
    {"ImageDecoder", 20, BridgeForm::kUnknownShape},
    {"RegexFullMatch", 20, BridgeForm::kUnknownShape},
    {"StringConcat", 20, BridgeForm::kUnknownShape},
    {"StringSplit", 20, BridgeForm::kUnknownShape},
    {"Attention", 23, BridgeForm::kUnknownShape},
    {"TensorScatter", 24, BridgeForm::kUnknownShape},
};

const NewerOperator* FindNewerOperator(const std::string& op_type, int64_t opset) {
  for (const NewerOperator& op : kNewerOperators) {
    if (op_type == op.op_type && opset >= op.since) return &op;
  }
  return nullptr;
}

std::string NewerOperatorNames() {
  std::vector<std::string> names;
  for (const NewerOperator& op : kNewerOperators) {
    if (names.empty() || names.back() != op.op_type) names.push_back(op.op_type);
  }
  return absl::StrJoin(names, ", ");
}

void SetStringAttribute(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  for (auto& a : *node.mutable_attribute()) {
    if (a.name() == name) a.set_s(value);
  }
}

// Constants a node of `graph` may read as an operand: initializers and
// Constant nodes' values.
std::map<std::string, onnx::TensorProto> GraphConstants(const onnx::GraphProto& graph) {
  std::map<std::string, onnx::TensorProto> constants;
  for (const auto& t : graph.initializer()) constants[t.name()] = t;
  for (const auto& n : graph.node()) {
    if (!IsDefaultDomain(n.domain()) || n.op_type() != "Constant" || n.output_size() != 1) continue;
    if (std::optional<onnx::TensorProto> value = ConstantNodeValue(n)) constants[n.output(0)] = *std::move(value);
  }
  return constants;
}

void KeepFirst(google::protobuf::RepeatedPtrField<std::string>& names, int n) {
  if (names.size() > n) names.DeleteSubrange(n, names.size() - n);
}

bool HasNonEmptyInput(const onnx::NodeProto& node, int i) {
  return node.input_size() > i && !node.input(i).empty();
}

class Bridge {
 public:
  Bridge(int64_t opset, bool ml_newer) : opset_(opset), ml_newer_(ml_newer) {}

  absl::Status BridgeGraph(onnx::GraphProto& graph) {
    const std::map<std::string, onnx::TensorProto> constants = GraphConstants(graph);
    for (int i = 0; i < graph.node_size(); ++i) {
      onnx::NodeProto& node = *graph.mutable_node(i);
      for (auto& a : *node.mutable_attribute()) {
        if (a.has_g()) {
          if (absl::Status s = BridgeGraph(*a.mutable_g()); !s.ok()) return s;
        }
        for (auto& g : *a.mutable_graphs()) {
          if (absl::Status s = BridgeGraph(g); !s.ok()) return s;
        }
      }
      if (node.domain() == "ai.onnx.ml" && ml_newer_) {
        MakeUnknownShape(node);
      } else if (IsDefaultDomain(node.domain())) {
        if (absl::Status s = BridgeNode(node, i, constants); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

  bool used_unknown_shape() const { return used_unknown_shape_; }

 private:
  void MakeUnknownShape(onnx::NodeProto& node) {
    node.set_domain(kUnknownShapeDomain);
    used_unknown_shape_ = true;
  }

  absl::Status BridgeNode(onnx::NodeProto& node, int index, const std::map<std::string, onnx::TensorProto>& constants) {
    if (const NewerOperator* newer = FindNewerOperator(node.op_type(), opset_)) {
      ApplyForm(newer->form, node, constants);
      if (!IsDefaultDomain(node.domain())) return absl::OkStatus();
    }
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(std::min(opset_, kLibraryOpset)));
    if (schema == nullptr || schema->Deprecated()) {
      return absl::InvalidArgumentError(absl::StrCat(
          DescribeOnnxNode(node, index), ": operator '", node.op_type(), "' at ai.onnx opset ", opset_,
          " is not supported: TASO reads the ai.onnx operators of opsets 1-", kLibraryOpset,
          " and these newer ones: ", NewerOperatorNames()));
    }
    // Attributes later versions added (Cast's saturate, Resize's antialias)
    // do not change output shapes once the forms above are applied.
    for (int i = node.attribute_size() - 1; i >= 0; --i) {
      if (!schema->attributes().count(node.attribute(i).name())) node.mutable_attribute()->DeleteSubrange(i, 1);
    }
    // An input later versions added that no form above handles: the library
    // cannot say what it does to the shapes.
    if (node.input_size() > schema->max_input()) MakeUnknownShape(node);
    return absl::OkStatus();
  }

  void ApplyForm(BridgeForm form, onnx::NodeProto& node, const std::map<std::string, onnx::TensorProto>& constants) {
    switch (form) {
      case BridgeForm::kReduceAxesInput: {
        const bool noop_if_empty = IntAttribute(node, "noop_with_empty_axes", 0) != 0;
        EraseAttribute(node, "noop_with_empty_axes");
        if (!HasNonEmptyInput(node, 1)) {
          if (noop_if_empty) MakeSameAsFirstInput(node);
          KeepFirst(*node.mutable_input(), 1);
          return;
        }
        auto it = constants.find(node.input(1));
        absl::StatusOr<std::vector<int64_t>> axes =
            it == constants.end() ? absl::InvalidArgumentError("not constant") : TensorInts(it->second);
        if (!axes.ok()) return MakeUnknownShape(node);
        KeepFirst(*node.mutable_input(), 1);
        if (axes->empty()) {
          if (noop_if_empty) MakeSameAsFirstInput(node);
          return;
        }
        *node.add_attribute() = MakeIntsAttribute("axes", *axes);
        return;
      }
      case BridgeForm::kPadWithAxes:
        if (HasNonEmptyInput(node, 3)) return MakeUnknownShape(node);
        KeepFirst(*node.mutable_input(), 3);
        if (StringAttribute(node, "mode", "constant") == "wrap") SetStringAttribute(node, "mode", "constant");
        return;
      case BridgeForm::kResizeNewer: {
        const std::string policy = StringAttribute(node, "keep_aspect_ratio_policy", "stretch");
        if (FindAttribute(node, "axes") != nullptr || policy != "stretch") return MakeUnknownShape(node);
        if (StringAttribute(node, "coordinate_transformation_mode", "") == "half_pixel_symmetric") {
          SetStringAttribute(node, "coordinate_transformation_mode", "half_pixel");
        }
        return;
      }
      case BridgeForm::kPoolWithDilations:
        node.set_op_type("MaxPool");
        EraseAttribute(node, "count_include_pad");
        EraseAttribute(node, "p");
        return;
      case BridgeForm::kScatterMinMax: {
        const std::string reduction = StringAttribute(node, "reduction", "none");
        if (reduction == "max" || reduction == "min") SetStringAttribute(node, "reduction", "add");
        return;
      }
      case BridgeForm::kGridSampleModes: {
        const std::string mode = StringAttribute(node, "mode", "bilinear");
        if (mode == "linear") SetStringAttribute(node, "mode", "bilinear");
        if (mode == "cubic") SetStringAttribute(node, "mode", "bicubic");
        return;
      }
      case BridgeForm::kSameAsFirstInput:
        return MakeSameAsFirstInput(node);
      case BridgeForm::kBroadcastBinary:
        node.set_op_type("Add");
        node.clear_attribute();
        return;
      case BridgeForm::kUnknownShape:
        return MakeUnknownShape(node);
    }
  }

  static void MakeSameAsFirstInput(onnx::NodeProto& node) {
    node.set_op_type("Identity");
    node.clear_attribute();
    KeepFirst(*node.mutable_input(), 1);
    KeepFirst(*node.mutable_output(), 1);
  }

  int64_t opset_;
  bool ml_newer_;
  bool used_unknown_shape_ = false;
};

}  // namespace

absl::Status CheckVersionsSupported(const onnx::ModelProto& model) {
  if (model.ir_version() > kNewestIrVersion) {
    return absl::InvalidArgumentError(absl::StrCat("the model has IR version ", model.ir_version(),
                                                   "; TASO reads IR versions up to ", kNewestIrVersion,
                                                   " (what ONNX Runtime 1.30 loads)"));
  }
  if (const int64_t opset = DefaultOpset(model); opset > kNewestOpset) {
    return absl::InvalidArgumentError(absl::StrCat("the model imports ai.onnx opset ", opset,
                                                   "; TASO reads opsets up to ", kNewestOpset,
                                                   " (what ONNX Runtime 1.30 runs)"));
  }
  return absl::OkStatus();
}

bool NeedsBridge(const onnx::ModelProto& model) {
  return model.ir_version() > kLibraryIrVersion || DefaultOpset(model) > kLibraryOpset ||
         DomainOpset(model, "ai.onnx.ml") > kLibraryMlOpset;
}

absl::StatusOr<onnx::ModelProto> BridgeToLibraryVersions(const onnx::ModelProto& model) {
  if (absl::Status s = CheckVersionsSupported(model); !s.ok()) return s;
  onnx::ModelProto bridged = model;
  const int64_t opset = DefaultOpset(model);
  const bool ml_newer = DomainOpset(model, "ai.onnx.ml") > kLibraryMlOpset;
  bridged.set_ir_version(std::min<int64_t>(model.ir_version(), kLibraryIrVersion));
  for (auto& o : *bridged.mutable_opset_import()) {
    if (IsDefaultDomain(o.domain())) o.set_version(std::min(o.version(), kLibraryOpset));
    if (o.domain() == "ai.onnx.ml") o.set_version(std::min(o.version(), kLibraryMlOpset));
  }
  Bridge bridge(opset, ml_newer);
  if (opset > 0 || ml_newer) {
    if (absl::Status s = bridge.BridgeGraph(*bridged.mutable_graph()); !s.ok()) return s;
  }
  if (bridge.used_unknown_shape()) {
    auto* import = bridged.add_opset_import();
    import->set_domain(kUnknownShapeDomain);
    import->set_version(1);
  }
  return bridged;
}

absl::Status CheckModelAnyVersion(const onnx::ModelProto& model) {
  if (absl::Status s = CheckVersionsSupported(model); !s.ok()) return s;
  if (!NeedsBridge(model)) return RunOnnxChecker(model);
  auto bridged = BridgeToLibraryVersions(model);
  if (!bridged.ok()) return bridged.status();
  return RunOnnxChecker(*bridged);
}

}  // namespace taso::onnx_internal
