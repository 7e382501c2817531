// Model-level import: parse (size-limited), sort nodes topologically (any
// order in the file loads), run the ONNX checker and strict shape inference,
// then walk the nodes: constants, lowered operators (onnx_import_ops.cc) and
// opaque nodes.
#include "onnx_io/onnx_import.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <queue>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "onnx_io/onnx_common.h"
#include "onnx_io/onnx_external_data_internal.h"
#include "onnx_io/onnx_import_internal.h"
#include "onnx_io/onnx_shape_folding.h"
#include "onnx_io/onnx_versions.h"
#include "core/isolated_call.h"
#include "core/op_registry.h"
#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/shape_inference/implementation.h"

namespace taso {
namespace onnx_internal {
namespace {

// Orders graph->node so every node follows the producers of what it reads
// (its inputs and, for If/Loop/Scan, the outer values its bodies read), keeping
// the file's order among independent nodes; then sorts subgraphs the same way.
// `outer` holds the names enclosing graphs define.
absl::Status SortGraph(onnx::GraphProto* graph, const std::set<std::string>& outer, const std::string& where) {
  const int n = graph->node_size();
  std::set<std::string> available = outer;  // defined without any node of this graph
  for (const auto& v : graph->input()) available.insert(v.name());
  for (const auto& t : graph->initializer()) available.insert(t.name());
  for (const auto& s : graph->sparse_initializer()) available.insert(s.values().name());
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const std::string& out : graph->node(i).output()) {
      if (out.empty()) continue;
      auto [it, inserted] = producer.emplace(out, i);
      if (!inserted) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "value '", out, "' is produced twice: by ", DescribeOnnxNode(graph->node(it->second), it->second),
            " and by ", DescribeOnnxNode(graph->node(i), i)));
      }
    }
  }
  std::vector<std::vector<int>> users(n);
  std::vector<int> indegree(n, 0);
  std::vector<std::set<std::string>> reads(n);
  for (int i = 0; i < n; ++i) {
    const onnx::NodeProto& node = graph->node(i);
    for (const std::string& in : node.input()) {
      if (!in.empty()) reads[i].insert(in);
    }
    reads[i].merge(NodeOuterScopeNames(node));
    for (const std::string& name : reads[i]) {
      auto it = producer.find(name);
      if (it != producer.end()) {
        users[it->second].push_back(i);
        ++indegree[i];
      } else if (!available.count(name)) {
        return absl::InvalidArgumentError(absl::StrCat(where, DescribeOnnxNode(node, i), " reads '", name,
                                                       "', which no node, graph input or initializer defines"));
      }
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;  // lowest file position first
  for (int i = 0; i < n; ++i) {
    if (indegree[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  std::vector<bool> placed(n, false);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    placed[i] = true;
    for (int u : users[i]) {
      if (--indegree[u] == 0) ready.push(u);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i) {
      if (placed[i]) continue;
      for (const std::string& name : reads[i]) {
        auto it = producer.find(name);
        if (it != producer.end() && !placed[it->second]) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, "the graph has a cycle: ", DescribeOnnxNode(graph->node(i), i), " reads '", name, "' from ",
              DescribeOnnxNode(graph->node(it->second), it->second), ", which depends on it"));
        }
      }
    }
  }
  std::vector<onnx::NodeProto> nodes(n);
  for (int i = 0; i < n; ++i) nodes[i].Swap(graph->mutable_node(i));
  graph->clear_node();
  for (int i : order) graph->add_node()->Swap(&nodes[i]);

  std::set<std::string> scope = available;
  for (const auto& [name, index] : producer) scope.insert(name);
  for (int i = 0; i < n; ++i) {
    onnx::NodeProto* node = graph->mutable_node(i);
    for (auto& a : *node->mutable_attribute()) {
      const std::string inner = absl::StrCat(where, "in attribute '", a.name(), "' of ", DescribeOnnxNode(*node, i), ": ");
      if (a.has_g()) {
        if (absl::Status s = SortGraph(a.mutable_g(), scope, inner); !s.ok()) return s;
      }
      for (auto& g : *a.mutable_graphs()) {
        if (absl::Status s = SortGraph(&g, scope, inner); !s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

InferredType InferredFromProto(const onnx::TypeProto& type) {
  InferredType t;
  if (!type.has_tensor_type()) return t;
  t.is_tensor = true;
  t.elem_type = type.tensor_type().elem_type();
  t.has_shape = type.tensor_type().has_shape();
  for (const auto& d : type.tensor_type().shape().dim()) t.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return t;
}

// Runs shape inference; InferenceError and anything else thrown become a status.
// In a child process (core/isolated_call.h): ONNX 1.12's shape inference
// crashes with SIGSEGV on some malformed models (fuzz/onnx_import found one
// that our shape folding produces), and the optimizer service must answer
// those with an error. The copy it works on has its large weights stripped
// (CopyForInference), so sending the result back is cheap.
absl::Status InferShapesNoThrow(onnx::ModelProto& model, const onnx::ShapeInferenceOptions& options) {
  auto inferred = RunIsolated(
      [&]() -> absl::StatusOr<std::string> {
        try {
          onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
        } catch (const std::exception& e) {
          return absl::InvalidArgumentError(e.what());
        }
        return model.SerializeAsString();
      },
      absl::Seconds(120), "ONNX shape inference");
  if (!inferred.ok()) {
    if (inferred.status().code() == absl::StatusCode::kInvalidArgument) return inferred.status();
    return absl::InvalidArgumentError(absl::StrCat(inferred.status().message(), " on this model"));
  }
  if (!model.ParseFromString(*inferred)) return absl::InternalError("ONNX shape inference: its result did not parse");
  return absl::OkStatus();
}

template <typename Fn>
void ForEachTypedValue(const onnx::GraphProto& g, Fn fn) {
  for (const auto& v : g.input()) fn(v);
  for (const auto& v : g.value_info()) fn(v);
  for (const auto& v : g.output()) fn(v);
}

// A copy of `model` for shape inference. Large floating-point initializers
// (and any of a megabyte or more) keep their type and shape but not their
// data: inference reads only small operands (shapes, sizes, scales), and
// weights would be copied for nothing.
onnx::ModelProto CopyForInference(onnx::ModelProto& model) {
  constexpr int64_t kLargeInitializer = 4096;
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  initializers.Swap(model.mutable_graph()->mutable_initializer());
  onnx::ModelProto copy = model;
  initializers.Swap(model.mutable_graph()->mutable_initializer());
  for (const auto& t : model.graph().initializer()) {
    onnx::TensorProto* c = copy.mutable_graph()->add_initializer();
    const bool floating = t.data_type() == onnx::TensorProto::FLOAT || t.data_type() == onnx::TensorProto::FLOAT16 ||
                          t.data_type() == onnx::TensorProto::DOUBLE;
    // Any tensor of a megabyte or more is data, never a shape: one model
    // may hold gigabytes of integer weights (quantized), and the copy is
    // serialized to cross to the inference process.
    const bool large = (floating && NumElements(t) > kLargeInitializer) || t.raw_data().size() >= (1u << 20);
    if (!large) {
      *c = t;
      continue;
    }
    c->set_name(t.name());
    c->set_data_type(t.data_type());
    *c->mutable_dims() = t.dims();
  }
  return copy;
}

const char* TypeCaseName(const onnx::TypeProto& type) {
  if (type.has_sequence_type()) return "a sequence";
  if (type.has_map_type()) return "a map";
  if (type.has_optional_type()) return "an optional";
  if (type.has_sparse_tensor_type()) return "a sparse tensor";
  return "of unknown type";
}

}  // namespace

bool InferredType::FullyKnown() const {
  if (!is_tensor || !has_shape || !DTypeFromOnnx(elem_type)) return false;
  return CheckDims(dims).ok();
}

TensorType InferredType::ToIr() const {
  const DType dtype = DTypeFromOnnx(elem_type).value_or(DType::kUnspecified);
  return TensorType::RowMajor(dtype, is_tensor && has_shape ? dims : std::vector<int64_t>{-1});
}

absl::Status Importer::InferWithFolding(const onnx::ModelProto& model, const onnx::ShapeInferenceOptions& options,
                                        onnx::ModelProto& inferred, std::map<std::string, FoldedInts>& folded) {
  // Each round may reveal shapes that let the next Shape node fold; a chain
  // per network block, so rounds are few, but bounded for pathological graphs.
  constexpr int kMaxFoldingRounds = 64;
  onnx::ModelProto working = model;
  for (int round = 0;; ++round) {
    onnx::ModelProto attempt = working;
    absl::Status s = InferShapesNoThrow(attempt, options);
    if (!s.ok() && round == 0) return s;
    if (!s.ok()) {
      // Folding exposed an inconsistency inference had not seen; keep the
      // shapes of the last round that passed and say why some stay unknown.
      result_.import_notes.push_back(absl::StrCat(
          "folding shape arithmetic stopped after ", round, " rounds: ONNX shape inference failed: ", s.message()));
      return absl::OkStatus();
    }
    inferred = std::move(attempt);
    if (round == kMaxFoldingRounds) return absl::OkStatus();
    std::map<std::string, FoldedInts> now = FoldShapeArithmetic(working, inferred);
    const int normalized = NormalizeBridgedNodes(working, inferred);
    if (now.empty() && normalized == 0) return absl::OkStatus();
    folded.merge(now);
  }
}

absl::StatusOr<bool> Importer::BindInputShapes(onnx::ModelProto& model, const std::set<std::string>& initializers) {
  bool substituted = false;
  std::set<std::string> names;
  std::vector<std::string> defaulted;  // "x[0] 'N'"
  for (auto& in : *model.mutable_graph()->mutable_input()) {
    if (initializers.count(in.name())) continue;
    names.insert(in.name());
    auto given = options_.input_shapes.find(in.name());
    if (given != options_.input_shapes.end()) {
      if (!in.type().has_tensor_type()) {
        return absl::InvalidArgumentError(absl::StrCat("--input-shape ", in.name(), ": the graph input is not a tensor"));
      }
      auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      const bool ranked = in.type().tensor_type().has_shape();
      if (ranked && shape->dim_size() != static_cast<int>(given->second.size())) {
        return absl::InvalidArgumentError(absl::StrCat("--input-shape ", in.name(), "=", absl::StrJoin(given->second, "x"),
                                                       " has rank ", given->second.size(), "; the graph input has rank ",
                                                       shape->dim_size()));
      }
      for (int i = 0; ranked && i < shape->dim_size(); ++i) {
        const auto& d = shape->dim(i);
        if (d.has_dim_value() && d.dim_value() != given->second[i]) {
          return absl::InvalidArgumentError(absl::StrCat("--input-shape ", in.name(), "=", absl::StrJoin(given->second, "x"),
                                                         ": dimension ", i, " of the graph input is fixed at ",
                                                         d.dim_value()));
        }
        substituted = substituted || !d.has_dim_value();
      }
      shape->clear_dim();
      for (int64_t d : given->second) shape->add_dim()->set_dim_value(d);
      substituted = substituted || !ranked;
      continue;
    }
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    auto* dims = in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim();
    for (int i = 0; i < dims->size(); ++i) {
      auto& d = (*dims)[i];
      if (d.has_dim_value()) continue;
      defaulted.push_back(absl::StrCat(in.name(), "[", i, "]", d.dim_param().empty() ? "" : " '" + d.dim_param() + "'"));
      d.set_dim_value(options_.default_dim);  // clears dim_param (a oneof)
      substituted = true;
    }
  }
  for (const auto& [name, dims] : options_.input_shapes) {
    if (!names.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat("--input-shape names '", name, "', which is not a graph input; the inputs are: ",
                                                     absl::StrJoin(names, ", ")));
    }
  }
  if (!options_.input_shapes.empty()) {
    std::vector<std::string> given;
    for (const auto& [name, dims] : options_.input_shapes) given.push_back(FormatInputShape(name, dims));
    result_.import_notes.push_back(absl::StrCat("optimized for the input shapes given: ", absl::StrJoin(given, ", ")));
  }
  if (!defaulted.empty()) {
    result_.import_notes.push_back(absl::StrCat(
        "dynamic dimensions bound to ", options_.default_dim, ": ", absl::StrJoin(defaulted, ", "),
        "; the result is optimized for that shape (give --input-shape NAME=DxDx... for another)"));
  }
  return substituted;
}

absl::Status Importer::InferTypes() {
  std::set<std::string> initializers;
  for (const auto& t : model_.graph().initializer()) initializers.insert(t.name());
  // Symbolic input dimensions take default_dim so that every shape downstream is concrete.
  onnx::ModelProto& source_model = bridged_ ? *bridged_ : model_;
  onnx::ModelProto fixed = CopyForInference(source_model);
  auto bound = BindInputShapes(fixed, initializers);
  if (!bound.ok()) return bound.status();
  const bool substituted = *bound;
  // Strict: a node whose declared or inferred shapes do not fit is an error.
  // Data propagation resolves shapes computed by Shape/Gather/Concat chains.
  // Data propagation is newer and more fragile, so it is tried first and
  // dropped on failure; so is the check of element types against the
  // schemas, which older exporters (int64 Constants before opset 9) violate
  // while their shapes are consistent.
  onnx::ModelProto inferred;
  absl::Status first_error;
  std::map<std::string, FoldedInts> folded;
  for (const auto& attempt : {onnx::ShapeInferenceOptions(true, 1, true), onnx::ShapeInferenceOptions(true, 1, false),
                              onnx::ShapeInferenceOptions(false, 1, false)}) {
    folded.clear();
    absl::Status s = InferWithFolding(fixed, attempt, inferred, folded);
    if (s.ok()) {
      first_error = absl::OkStatus();
      break;
    }
    if (first_error.ok()) first_error = s;
  }
  if (!first_error.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("ONNX shape inference failed: ", first_error.message()));
  }
  ForEachTypedValue(inferred.graph(), [&](const onnx::ValueInfoProto& v) {
    if (v.has_type()) types_[v.name()] = InferredFromProto(v.type());
  });
  // Folded values left the inference copy's nodes; their types are known.
  for (const auto& [name, f] : folded) {
    InferredType t;
    t.is_tensor = true;
    t.elem_type = f.elem_type;
    t.has_shape = true;
    t.dims = f.dims;
    types_[name] = std::move(t);
  }
  // Export declares the types of opaque outputs; take them from the model as
  // declared so symbolic dimensions stay symbolic (best effort).
  onnx::ModelProto declared;
  const onnx::ModelProto* source = &inferred;
  if (substituted) {
    declared = CopyForInference(source_model);
    if (InferShapesNoThrow(declared, onnx::ShapeInferenceOptions(false, 0, false)).ok()) source = &declared;
  }
  ForEachTypedValue(source->graph(), [&](const onnx::ValueInfoProto& v) {
    if (v.has_type()) declared_types_[v.name()] = v.type().SerializeAsString();
  });
  return absl::OkStatus();
}

absl::Status Importer::AddGraphInputsAndConstants() {
  const onnx::GraphProto& g = model_.graph();
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) {
    initializers.insert(t.name());
    if (IsRepresentableConstant(t)) {
      values_[t.name()] = {ImportedValue::Kind::kConstant, {}, &t};
    } else {
      values_[t.name()] = {ImportedValue::Kind::kSideConstant, {}, &t};
      result_.side_constants[t.name()] = t.SerializeAsString();
    }
  }
  for (const auto& s : g.sparse_initializer()) {
    values_[s.values().name()] = {ImportedValue::Kind::kSideConstant, {}, &s.values()};
  }
  for (const auto& in : g.input()) {
    if (initializers.count(in.name())) {
      result_.initializer_inputs.insert(in.name());
      continue;
    }
    const std::string what = absl::StrCat("graph input '", in.name(), "'");
    if (!in.type().has_tensor_type()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " is ", TypeCaseName(in.type()),
                                                     ", which the IR cannot represent as a graph input"));
    }
    auto it = types_.find(in.name());
    if (it == types_.end() || !it->second.has_shape) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has no shape (unknown rank)"));
    }
    const InferredType& t = it->second;
    for (int64_t d : t.dims) {
      if (d < 1) {
        return absl::InvalidArgumentError(absl::StrCat(what, " has shape ", DimsToString(t.dims),
                                                       "; the IR cannot represent zero-sized graph inputs"));
      }
    }
    Node node;
    node.id = static_cast<int>(nodes_.size());
    node.kind = OpKind::kInput;
    node.name = in.name();
    node.output_types = {t.ToIr()};
    nodes_.push_back(std::move(node));
    values_[in.name()] = {ImportedValue::Kind::kTensor, {nodes_.back().id, 0}, nullptr};
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorRef>> Importer::AddOp(OpKind kind, const OpParams& params,
                                                       const std::vector<TensorRef>& inputs) {
  std::vector<TensorType> in_types;
  for (const TensorRef& r : inputs) in_types.push_back(TypeOf(r));
  auto types = InferOutputTypes(kind, params, in_types);
  if (!types.ok()) return types.status();
  Node node;
  node.id = static_cast<int>(nodes_.size());
  node.kind = kind;
  node.params = params;
  node.inputs = inputs;
  node.output_types = *std::move(types);
  std::vector<TensorRef> outs;
  for (size_t i = 0; i < node.output_types.size(); ++i) outs.push_back({node.id, static_cast<int>(i)});
  nodes_.push_back(std::move(node));
  return outs;
}

absl::StatusOr<TensorRef> Importer::AddOp1(OpKind kind, const OpParams& params, const std::vector<TensorRef>& inputs) {
  auto outs = AddOp(kind, params, inputs);
  if (!outs.ok()) return outs.status();
  if (outs->size() != 1) return absl::InternalError(absl::StrCat(OpKindName(kind), " has several outputs"));
  return (*outs)[0];
}

TensorRef Importer::AddWeight(const std::string& name, TensorType type, std::shared_ptr<const std::string> data) {
  Node node;
  node.id = static_cast<int>(nodes_.size());
  node.kind = OpKind::kWeight;
  node.name = name;
  node.output_types = {std::move(type)};
  node.data = std::move(data);
  nodes_.push_back(std::move(node));
  return {nodes_.back().id, 0};
}

absl::StatusOr<TensorRef> Importer::Materialize(const std::string& name) {
  auto it = values_.find(name);
  if (it == values_.end()) return absl::InvalidArgumentError(absl::StrCat("value '", name, "' is not defined"));
  const ImportedValue& v = it->second;
  switch (v.kind) {
    case ImportedValue::Kind::kTensor:
      return v.tensor;
    case ImportedValue::Kind::kSideConstant:
      return absl::InvalidArgumentError(absl::StrCat("constant '", name, "' cannot be an IR tensor"));
    case ImportedValue::Kind::kConstant:
      break;
  }
  if (auto w = weights_.find(v.constant); w != weights_.end()) return w->second;
  auto bytes = TensorBytes(*v.constant);
  if (!bytes.ok()) return bytes.status();
  std::vector<int64_t> dims(v.constant->dims().begin(), v.constant->dims().end());
  const TensorRef ref = AddWeight(v.constant->name(), TensorType::RowMajor(*DTypeFromOnnx(v.constant->data_type()), dims),
                                  std::make_shared<const std::string>(*std::move(bytes)));
  weights_[v.constant] = ref;
  return ref;
}

std::string Importer::FreshName(const std::string& hint) {
  std::string name = hint;
  for (int i = 1; taken_names_.count(name); ++i) name = absl::StrCat(hint, "_", i);
  taken_names_.insert(name);
  return name;
}

void Importer::Rollback(size_t mark) {
  nodes_.resize(mark);
  for (auto it = weights_.begin(); it != weights_.end();) {
    it = it->second.node >= static_cast<int>(mark) ? weights_.erase(it) : std::next(it);
  }
}

absl::Status Importer::ImportNode(const onnx::NodeProto& node, int index) {
  if (IsDefaultDomain(node.domain()) && node.op_type() == "Constant" && node.output_size() == 1) {
    std::optional<onnx::TensorProto> value = ConstantNodeValue(node);
    if (value && IsRepresentableConstant(*value)) {
      constant_nodes_.push_back(*std::move(value));
      values_[node.output(0)] = {ImportedValue::Kind::kConstant, {}, &constant_nodes_.back()};
      return absl::OkStatus();
    }
  }
  const size_t mark = nodes_.size();
  if (IsDefaultDomain(node.domain()) && opset_ > 0) {
    if (std::optional<std::vector<ImportedValue>> outs = Lower(node)) {
      // The IR's shapes must agree with ONNX's for every new tensor, else the
      // lowering misread the operator and the node stays opaque.
      bool agrees = true;
      for (size_t i = 0; i < outs->size() && i < static_cast<size_t>(node.output_size()); ++i) {
        const ImportedValue& v = (*outs)[i];
        if (node.output(i).empty() || v.kind != ImportedValue::Kind::kTensor || v.tensor.node < static_cast<int>(mark)) {
          continue;
        }
        const TensorType& ir = TypeOf(v.tensor);
        auto t = types_.find(node.output(i));
        agrees = agrees && ir.dtype == DType::kFloat32 &&
                 (t == types_.end() || !t->second.FullyKnown() || t->second.dims == ir.dims);
      }
      if (agrees) {
        for (size_t i = 0; i < outs->size() && i < static_cast<size_t>(node.output_size()); ++i) {
          if (!node.output(i).empty()) values_[node.output(i)] = (*outs)[i];
        }
        return absl::OkStatus();
      }
    }
    Rollback(mark);
  }
  return AddOpaque(node, index);
}

static bool InOrder(const std::vector<int>& slots) {
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i] != static_cast<int>(i)) return false;
  }
  return true;
}

void Importer::SetOpaqueSlots(const onnx::NodeProto& node, OpaqueInfo& info) const {
  std::vector<int> in, out;
  int k = 0;
  for (const std::string& name : node.input()) {
    auto it = name.empty() ? values_.end() : values_.find(name);
    const bool side = it != values_.end() && it->second.kind == ImportedValue::Kind::kSideConstant;
    in.push_back(name.empty() ? OpaqueInfo::kOmitted : side ? OpaqueInfo::kSideConstant : k++);
  }
  int j = 0;
  for (const std::string& name : node.output()) out.push_back(name.empty() ? OpaqueInfo::kOmitted : j++);
  // Empty: the IR's inputs and outputs in order, as most nodes have them.
  if (!InOrder(in)) info.input_slots = std::move(in);
  if (!InOrder(out)) info.output_slots = std::move(out);
}

absl::Status Importer::AddOpaque(const onnx::NodeProto& node, int index) {
  const std::string what = DescribeOnnxNode(node, index);
  OnnxOpaqueNode record;
  std::vector<TensorRef> inputs;
  auto add_input = [&](const std::string& name) -> absl::Status {
    auto it = values_.find(name);
    if (it != values_.end() && it->second.kind == ImportedValue::Kind::kSideConstant) return absl::OkStatus();
    auto ref = Materialize(name);
    if (!ref.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": input '", name, "': ", ref.status().message()));
    inputs.push_back(*ref);
    return absl::OkStatus();
  };
  for (const std::string& in : node.input()) {
    if (in.empty()) continue;  // an omitted optional input; export restores the gap
    if (absl::Status s = add_input(in); !s.ok()) return s;
  }
  for (const std::string& outer : NodeOuterScopeNames(node)) {
    auto it = values_.find(outer);
    if (it != values_.end() && it->second.kind == ImportedValue::Kind::kSideConstant) continue;
    if (absl::Status s = add_input(outer); !s.ok()) return s;
    record.outer_scope_inputs.push_back(outer);
  }
  OpParams params;
  params.opaque.op_type = node.op_type();
  params.opaque.domain = node.domain();
  params.opaque.opset = DomainOpset(model_, node.domain());
  SetOpaqueSlots(node, params.opaque);
  for (const auto& a : node.attribute()) params.opaque.attributes.emplace_back(a.name(), a.SerializeAsString());
  for (const std::string& out : node.output()) {
    if (out.empty()) continue;
    auto t = types_.find(out);
    params.opaque.output_types.push_back(t != types_.end() ? t->second.ToIr() : InferredType().ToIr());
    auto d = declared_types_.find(out);
    record.output_types.push_back(d != declared_types_.end() ? d->second : "");
  }
  auto outs = AddOp(OpKind::kOpaque, params, inputs);
  if (!outs.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " cannot be kept as an opaque node: ", outs.status().message()));
  }
  int k = 0;
  for (const std::string& out : node.output()) {
    if (!out.empty()) values_[out] = {ImportedValue::Kind::kTensor, (*outs)[k++], nullptr};
  }
  // The key is the IR node's name: the ONNX node name when unique.
  std::string key = node.name();
  if (key.empty() || result_.opaque_nodes.count(key)) {
    key = absl::StrCat(node.op_type(), "_", index);
    for (int i = 1; result_.opaque_nodes.count(key); ++i) key = absl::StrCat(node.op_type(), "_", index, "_", i);
  }
  nodes_[outs->front().node].name = key;
  record.node_proto = node.SerializeAsString();
  result_.opaque_nodes[key] = std::move(record);
  opaque_ops_.insert(absl::StrCat(IsDefaultDomain(node.domain()) ? "ai.onnx" : node.domain(), "::", node.op_type()));
  return absl::OkStatus();
}

absl::StatusOr<OnnxModel> Importer::Run(onnx::ModelProto model, std::optional<onnx::ModelProto> bridged) {
  model_ = std::move(model);
  bridged_ = std::move(bridged);
  opset_ = DefaultOpset(model_);
  if (options_.default_dim < 1) {
    return absl::InvalidArgumentError(absl::StrCat("default_dim must be >= 1, got ", options_.default_dim));
  }
  const onnx::GraphProto& g = model_.graph();
  CollectValueNames(g, taken_names_);
  for (const auto& node : g.node()) {
    consumed_.insert(node.input().begin(), node.input().end());
    consumed_.merge(NodeOuterScopeNames(node));
  }
  for (const auto& out : g.output()) consumed_.insert(out.name());

  if (absl::Status s = InferTypes(); !s.ok()) return s;
  if (absl::Status s = AddGraphInputsAndConstants(); !s.ok()) return s;
  for (int i = 0; i < g.node_size(); ++i) {
    const size_t mark = nodes_.size();
    if (absl::Status s = ImportNode(g.node(i), i); !s.ok()) return s;
    result_.node_origins.resize(nodes_.size());
    result_.node_op_types.resize(nodes_.size());
    const std::string origin = g.node(i).name().empty() ? absl::StrCat(g.node(i).op_type(), "#", i) : g.node(i).name();
    const std::string op_type = IsDefaultDomain(g.node(i).domain())
                                    ? g.node(i).op_type()
                                    : absl::StrCat(g.node(i).domain(), "::", g.node(i).op_type());
    for (size_t id = mark; id < nodes_.size(); ++id) {
      if (IsInputOrWeight(nodes_[id].kind)) continue;
      result_.node_origins[id] = origin;
      result_.node_op_types[id] = op_type;
    }
  }
  result_.node_origins.resize(nodes_.size());
  result_.node_op_types.resize(nodes_.size());
  std::vector<GraphOutput> outputs;
  for (const auto& out : g.output()) {
    auto it = values_.find(out.name());
    if (it != values_.end() && it->second.kind == ImportedValue::Kind::kSideConstant) {
      return absl::InvalidArgumentError(absl::StrCat("graph output '", out.name(),
                                                     "' is an initializer the IR cannot hold (element type ",
                                                     it->second.constant->data_type(), " or a zero-sized shape)"));
    }
    auto ref = Materialize(out.name());
    if (!ref.ok()) return absl::InvalidArgumentError(absl::StrCat("graph output '", out.name(), "': ", ref.status().message()));
    outputs.push_back({out.name(), *ref});
  }
  // The template: everything but nodes, initializers and value_info (moved
  // aside rather than copied; the constants still point into them).
  onnx::GraphProto* graph_proto = model_.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> node_protos;
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> value_infos;
  node_protos.Swap(graph_proto->mutable_node());
  initializers.Swap(graph_proto->mutable_initializer());
  value_infos.Swap(graph_proto->mutable_value_info());
  result_.model_template = model_.SerializeAsString();
  node_protos.Swap(graph_proto->mutable_node());
  initializers.Swap(graph_proto->mutable_initializer());
  value_infos.Swap(graph_proto->mutable_value_info());
  auto graph = Graph::Create(std::move(nodes_), std::move(outputs));
  if (!graph.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the imported graph is invalid: ", graph.status().message()));
  }
  result_.graph = *std::move(graph);
  result_.opaque_ops_seen.assign(opaque_ops_.begin(), opaque_ops_.end());
  return std::move(result_);
}

}  // namespace onnx_internal

absl::StatusOr<OnnxModel> ImportOnnx(const std::string& model_bytes, const OnnxImportOptions& options) {
  using onnx_internal::RunOnnxChecker;
  if (static_cast<int64_t>(model_bytes.size()) > options.max_model_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("the model is ", model_bytes.size(), " bytes, over the limit of ",
                                                   options.max_model_bytes, " set by max_model_bytes"));
  }
  auto parsed = onnx_internal::ParseModelBytes(
      model_bytes, "cannot parse the model: the bytes are not a valid ONNX ModelProto (truncated or corrupt)");
  if (!parsed.ok()) return parsed.status();
  onnx::ModelProto model = *std::move(parsed);
  // Read in memory, never serialized whole again: the model may now be
  // larger than one message holds.
  int64_t total = static_cast<int64_t>(model_bytes.size());
  if (!options.external_data.empty()) {
    absl::Status loaded = onnx_internal::LoadExternalTensors(model, options.external_data, options.max_model_bytes,
                                                             "the limit on model size", total);
    if (!loaded.ok()) return loaded;
  }
  // ONNX's library throws; nothing thrown may leave this function.
  try {
    if (absl::Status s = onnx_internal::SortGraph(model.mutable_graph(), {}, ""); !s.ok()) return s;
    if (absl::Status s = onnx_internal::CheckVersionsSupported(model); !s.ok()) return s;
    std::optional<onnx::ModelProto> bridged;
    if (onnx_internal::NeedsBridge(model)) {
      auto copy = onnx_internal::BridgeToLibraryVersions(model);
      if (!copy.ok()) return copy.status();
      bridged = *std::move(copy);
    }
    if (absl::Status s = RunOnnxChecker(bridged ? *bridged : model); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("the model fails the ONNX checker: ", s.message()));
    }
    auto imported = onnx_internal::Importer(options).Run(std::move(model), std::move(bridged));
    if (imported.ok()) imported->external_data_bytes = total - static_cast<int64_t>(model_bytes.size());
    return imported;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("ONNX import failed: ", e.what()));
  } catch (...) {
    return absl::InternalError("ONNX import failed with an unknown exception");
  }
}

absl::StatusOr<OnnxModel> ImportOnnxFile(const std::string& path, OnnxImportOptions options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (options.external_data.empty()) {
    options.external_data = ExternalData::Directory(std::filesystem::path(path).parent_path().string());
  }
  return ImportOnnx(bytes.str(), options);
}

std::string FormatInputShape(const std::string& name, const std::vector<int64_t>& dims) {
  return absl::StrCat(name, "=", absl::StrJoin(dims, "x"));
}

absl::StatusOr<std::map<std::string, std::vector<int64_t>>> ParseInputShapes(const std::vector<std::string>& specs) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& spec : specs) {
    const size_t eq = spec.rfind('=');
    const std::string hint = " (expected NAME=DIMS with DIMS like 1x3x224x224)";
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return absl::InvalidArgumentError(absl::StrCat("--input-shape '", spec, "'", hint));
    }
    std::vector<int64_t> dims;
    for (absl::string_view part : absl::StrSplit(spec.substr(eq + 1), 'x')) {
      int64_t d = 0;
      if (!absl::SimpleAtoi(part, &d) || d < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("--input-shape '", spec, "': '", part, "' is not a dimension >= 1", hint));
      }
      dims.push_back(d);
    }
    if (!shapes.emplace(spec.substr(0, eq), std::move(dims)).second) {
      return absl::InvalidArgumentError(absl::StrCat("--input-shape gives '", spec.substr(0, eq), "' twice"));
    }
  }
  return shapes;
}

absl::StatusOr<std::map<std::string, int>> CountOnnxOperators(const std::string& model_bytes) {
  auto model = onnx_internal::ParseModelBytes(model_bytes, "not an ONNX model");
  if (!model.ok()) return model.status();
  std::map<std::string, int> counts;
  for (const onnx::NodeProto& node : model->graph().node()) {
    ++counts[onnx_internal::IsDefaultDomain(node.domain()) ? node.op_type()
                                                           : absl::StrCat(node.domain(), "::", node.op_type())];
  }
  return counts;
}

std::vector<std::string> OnnxNodeLabels(const OnnxModel& model) {
  std::vector<std::string> labels(model.node_origins.size());
  for (size_t id = 0; id < labels.size(); ++id) {
    if (model.node_origins[id].empty()) continue;
    labels[id] = id < model.node_op_types.size() && !model.node_op_types[id].empty()
                     ? absl::StrCat("ONNX ", model.node_origins[id], " (", model.node_op_types[id], ")")
                     : absl::StrCat("ONNX ", model.node_origins[id]);
  }
  return labels;
}

}  // namespace taso
