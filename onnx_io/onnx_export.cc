#include "onnx_io/onnx_export.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/interpreter.h"
#include "onnx_io/onnx_common.h"
#include "onnx_io/onnx_external_data_internal.h"
#include "onnx_io/onnx_versions.h"
#include "core/op_registry.h"
#include "onnx/onnx_pb.h"

namespace taso {
namespace {

constexpr char kMicrosoftDomain[] = "com.microsoft";

// The ONNX operator (and ONNX Runtime's FusedGemm attribute value) of an activation.
const char* OnnxActivation(Activation a) {
  return a == Activation::kRelu ? "Relu" : a == Activation::kTanh ? "Tanh" : "Sigmoid";
}

using onnx_internal::DefaultOpset;
using onnx_internal::MakeFloatAttribute;
using onnx_internal::MakeIntAttribute;
using onnx_internal::MakeIntsAttribute;
using onnx_internal::MakeStringAttribute;
using onnx_internal::MakeTensorAttribute;
using onnx_internal::OnnxElemType;

using TensorKey = std::pair<int, int>;
TensorKey Key(TensorRef r) { return {r.node, r.index}; }

// Kinds with no ONNX operator: always computed from weights by rewrite rules,
// so they are folded into initializers.
bool IsFoldedKind(OpKind kind) {
  return kind == OpKind::kEnlarge || kind == OpKind::kMergeGConv || kind == OpKind::kConstPool ||
         kind == OpKind::kConstIConv || kind == OpKind::kConstIMatMul || kind == OpKind::kConstOnes;
}

class Exporter {
 public:
  Exporter(const OnnxModel& model, const Graph& graph, OnnxDialect dialect)
      : model_(model), graph_(graph), dialect_(dialect) {}
  // With `sink`, large tensors go to sink->data (OnnxExternalSink).
  absl::StatusOr<std::string> Run(OnnxExternalSink* sink);

 private:
  absl::Status Prepare();
  // Finds ewadd(conv2d, reshape(bias [M] -> [M,1,1] or [1,M,1,1])), the form
  // import gives Conv's bias, to write it back as Conv's bias input.
  void FindConvBiases();
  absl::Status EmitNode(const Node& node);
  absl::Status EmitWeight(const std::string& name, TensorType type, std::string data);
  absl::Status EmitOpaque(const Node& node);
  absl::Status EmitOperator(const Node& node);
  absl::Status EmitBinary(const std::string& op, TensorRef a, TensorRef b, const std::vector<int64_t>& out_dims,
                          const std::string& out);
  absl::Status EmitWindowed(const Node& node, const std::string& out);
  absl::StatusOr<FloatTensor> Fold(int node_id);
  // Makes `name` hold tensor `t`, adding an Identity when t is named otherwise.
  absl::Status Alias(const std::string& name, TensorRef t);

  onnx::NodeProto* AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
                           const std::vector<std::string>& outputs);
  std::string Constant(const std::string& hint, const std::vector<int64_t>& values);
  // Emits a Reshape of `in` to `dims` into `out` (a fresh name if empty).
  absl::StatusOr<std::string> Reshape(const std::string& in, const std::vector<int64_t>& in_dims,
                                      const std::vector<int64_t>& dims, std::string out = "");
  // The exported name of tensor t, choosing one on first use: `preferred`
  // when free, else a fresh name.
  std::string NameOf(TensorRef t, const std::string& preferred = "");
  std::string FreshName(const std::string& hint);
  const TensorType& TypeOf(TensorRef t) const { return graph_.type(t); }

  const OnnxModel& model_;
  const Graph& graph_;
  const OnnxDialect dialect_;
  bool microsoft_domain_used_ = false;  // ONNX Runtime's contrib operators
  onnx::ModelProto out_;
  onnx::GraphProto* g_ = nullptr;
  int64_t opset_ = 0;
  bool default_domain_used_ = false;
  std::map<TensorKey, std::string> names_;
  std::set<std::string> taken_;     // names defined in the exported graph
  std::set<std::string> reserved_;  // never used for fresh names
  std::set<std::string> claimed_;   // names only their designated tensor may take
  std::set<std::string> external_;  // side constants and sparse initializers, referenced by name
  std::set<std::string> initializers_;
  std::set<std::string> input_names_;  // the model's graph inputs
  std::map<int, FloatTensor> folded_;
  struct ConvBias {
    int conv;
    TensorRef bias;  // 1-D [M]
  };
  std::map<int, ConvBias> conv_bias_;  // by the ewadd node that adds the bias
  std::set<int> skipped_;               // nodes written as part of another (the conv, the bias reshape)
};

std::string Exporter::FreshName(const std::string& hint) {
  std::string name = hint;
  for (int i = 1; taken_.count(name) || reserved_.count(name); ++i) name = absl::StrCat(hint, "_", i);
  taken_.insert(name);
  return name;
}

std::string Exporter::NameOf(TensorRef t, const std::string& preferred) {
  auto it = names_.find(Key(t));
  if (it != names_.end()) return it->second;
  std::string name;
  if (!preferred.empty() && !taken_.count(preferred) && !claimed_.count(preferred)) {
    name = preferred;
    taken_.insert(name);
  } else {
    const Node& node = graph_.node(t.node);
    name = FreshName(preferred.empty() ? absl::StrCat(OpKindName(node.kind), "_", t.node,
                                                      t.index > 0 ? absl::StrCat("_", t.index) : "")
                                       : preferred);
  }
  names_[Key(t)] = name;
  return name;
}

onnx::NodeProto* Exporter::AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
                                   const std::vector<std::string>& outputs) {
  onnx::NodeProto* n = g_->add_node();
  n->set_op_type(op_type);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  default_domain_used_ = true;
  return n;
}

std::string Exporter::Constant(const std::string& hint, const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t.add_int64_data(v);
  const std::string name = FreshName(hint);
  t.set_name(name);
  if (opset_ >= 9) {
    *AddNode("Constant", {}, {name})->add_attribute() = MakeTensorAttribute("value", t);
    return name;
  }
  // Constant before opset 9 holds only floating-point tensors: use an
  // initializer, which IR version 3 must also list among the graph inputs.
  *g_->add_initializer() = t;
  initializers_.insert(name);
  if (out_.ir_version() < 4) {
    onnx::ValueInfoProto* in = g_->add_input();
    in->set_name(name);
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(t.dims(0));
  }
  return name;
}

absl::StatusOr<std::string> Exporter::Reshape(const std::string& in, const std::vector<int64_t>& in_dims,
                                               const std::vector<int64_t>& dims, std::string out) {
  bool literal_zero = false;
  for (size_t i = 0; i < dims.size(); ++i) literal_zero |= dims[i] == 0 && (i >= in_dims.size() || in_dims[i] != 0);
  std::vector<int64_t> shape = dims;
  if (!literal_zero) {
    // 0 copies the input's dimension: the model then still reshapes
    // correctly when a symbolic dimension (batch) takes another value.
    for (size_t i = 0; i < shape.size() && i < in_dims.size(); ++i) {
      if (shape[i] == in_dims[i]) shape[i] = 0;
    }
  } else if (opset_ < 14) {
    return absl::UnimplementedError(absl::StrCat("reshaping to ", DimsToString(dims),
                                                 " needs allowzero (opset 14), the model has opset ", opset_));
  }
  if (out.empty()) out = FreshName(in + "_reshaped");
  onnx::NodeProto* n = opset_ < 5 ? AddNode("Reshape", {in}, {out})
                                  : AddNode("Reshape", {in, Constant(out + "_shape", shape)}, {out});
  if (opset_ < 5) *n->add_attribute() = MakeIntsAttribute("shape", shape);
  if (literal_zero) *n->add_attribute() = MakeIntAttribute("allowzero", 1);
  return out;
}

absl::Status Exporter::Alias(const std::string& name, TensorRef t) {
  const std::string current = NameOf(t);
  if (current == name) return absl::OkStatus();
  if (taken_.count(name)) {
    return absl::InternalError(absl::StrCat("value name '", name, "' would be defined twice"));
  }
  taken_.insert(name);
  AddNode("Identity", {current}, {name});
  return absl::OkStatus();
}

absl::Status Exporter::Prepare() {
  if (!out_.ParseFromString(model_.model_template)) {
    return absl::InvalidArgumentError("the model template is not a valid ModelProto");
  }
  g_ = out_.mutable_graph();
  opset_ = DefaultOpset(out_);
  if (opset_ == 0) {
    // No ai.onnx import (e.g. a model of training-domain ops only). Identity
    // needs version 1; lowered operators are written for opset 13.
    opset_ = graph_.num_ops() > static_cast<int>(model_.opaque_nodes.size()) ? 13 : 1;
  }
  onnx_internal::CollectValueNames(*g_, reserved_);
  for (const Node& node : graph_.nodes()) {
    if (IsInputOrWeight(node.kind)) reserved_.insert(node.name);  // so fresh names leave weights theirs
  }
  for (const auto& [key, record] : model_.opaque_nodes) {
    onnx::NodeProto proto;
    if (!proto.ParseFromString(record.node_proto)) continue;
    onnx::GraphProto holder;
    *holder.add_node() = proto;
    onnx_internal::CollectValueNames(holder, reserved_);
    claimed_.insert(record.outer_scope_inputs.begin(), record.outer_scope_inputs.end());
  }
  for (const auto& [name, tensor] : model_.side_constants) external_.insert(name);
  for (const auto& s : g_->sparse_initializer()) external_.insert(s.values().name());
  claimed_.insert(external_.begin(), external_.end());
  taken_.insert(external_.begin(), external_.end());
  for (const auto& in : g_->input()) input_names_.insert(in.name());
  claimed_.insert(input_names_.begin(), input_names_.end());
  for (const auto& out : g_->output()) claimed_.insert(out.name());
  reserved_.insert(claimed_.begin(), claimed_.end());

  // Graph inputs keep their names; graph outputs must match the model's.
  std::set<std::string> true_inputs;
  for (const auto& in : g_->input()) {
    if (!model_.initializer_inputs.count(in.name())) true_inputs.insert(in.name());
  }
  for (const Node& node : graph_.nodes()) {
    // A weight that was an initializer listed among the graph inputs keeps that name.
    if (node.kind == OpKind::kWeight && model_.initializer_inputs.count(node.name) && !taken_.count(node.name)) {
      names_[{node.id, 0}] = node.name;
      taken_.insert(node.name);
    }
    if (node.kind != OpKind::kInput) continue;
    if (!true_inputs.count(node.name)) {
      return absl::InvalidArgumentError(absl::StrCat("graph input '", node.name, "' is not an input of the model"));
    }
    names_[{node.id, 0}] = node.name;
    taken_.insert(node.name);
  }
  std::vector<std::string> want, have;
  for (const auto& o : g_->output()) want.push_back(o.name());
  for (const auto& o : graph_.outputs()) have.push_back(o.name);
  if (want != have) {
    return absl::InvalidArgumentError(absl::StrCat("graph outputs [", absl::StrJoin(have, ", "),
                                                   "] differ from the model's [", absl::StrJoin(want, ", "), "]"));
  }
  // A tensor computed by an operator takes the name of the graph output (or
  // of the subgraph reference) it feeds; sources keep theirs.
  auto designate = [&](TensorRef t, const std::string& name) {
    if (names_.count(Key(t)) || taken_.count(name)) return;
    const Node& node = graph_.node(t.node);
    if (!IsInputOrWeight(node.kind) || node.name == name) {
      names_[Key(t)] = name;
      taken_.insert(name);
    }
  };
  for (const GraphOutput& o : graph_.outputs()) designate(o.tensor, o.name);
  for (const Node& node : graph_.nodes()) {
    if (node.kind != OpKind::kOpaque) continue;
    auto rec = model_.opaque_nodes.find(node.name);
    if (rec == model_.opaque_nodes.end()) continue;
    const auto& outer = rec->second.outer_scope_inputs;
    const size_t first = node.inputs.size() >= outer.size() ? node.inputs.size() - outer.size() : 0;
    for (size_t j = 0; j < outer.size() && first + j < node.inputs.size(); ++j) designate(node.inputs[first + j], outer[j]);
  }
  return absl::OkStatus();
}

void Exporter::FindConvBiases() {
  std::map<TensorKey, int> uses;
  for (const Node& node : graph_.nodes()) {
    for (const TensorRef& r : node.inputs) ++uses[Key(r)];
  }
  for (const GraphOutput& o : graph_.outputs()) ++uses[Key(o.tensor)];
  for (const Node& add : graph_.nodes()) {
    if (add.kind != OpKind::kEwAdd) continue;
    for (int side = 0; side < 2; ++side) {
      const TensorRef c = add.inputs[side], r = add.inputs[1 - side];
      const Node& conv = graph_.node(c.node);
      const Node& reshape = graph_.node(r.node);
      if (conv.kind != OpKind::kConv2D || conv.inputs.size() != 2 || conv.params.activation != Activation::kNone ||
          uses[Key(c)] != 1 ||
          reshape.kind != OpKind::kReshape || skipped_.count(conv.id)) {
        continue;
      }
      const std::vector<int64_t>& out = TypeOf(c).dims;
      const std::vector<int64_t>& bias = TypeOf(reshape.inputs[0]).dims;
      const std::vector<int64_t>& shaped = TypeOf(r).dims;
      const int64_t m = out[1];
      if (bias != std::vector<int64_t>{m} || add.output_types[0].dims != out ||
          (shaped != std::vector<int64_t>{m, 1, 1} && shaped != std::vector<int64_t>{1, m, 1, 1})) {
        continue;
      }
      conv_bias_[add.id] = {conv.id, reshape.inputs[0]};
      skipped_.insert(conv.id);
      if (uses[Key(r)] == 1) skipped_.insert(reshape.id);
      break;
    }
  }
}

absl::Status Exporter::EmitWeight(const std::string& name, TensorType type, std::string data) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(OnnxElemType(type.dtype));
  if (t.data_type() == onnx::TensorProto::UNDEFINED) {
    return absl::InvalidArgumentError(absl::StrCat("weight '", name, "' has no ONNX element type"));
  }
  for (int64_t d : type.dims) t.add_dims(d);
  t.set_raw_data(std::move(data));
  // IR version 3 lists every initializer among the graph inputs; new weights
  // there are Constant nodes instead, so the graph inputs stay as they were.
  if (out_.ir_version() < 4 && !input_names_.count(name)) {
    *AddNode("Constant", {}, {name})->add_attribute() = MakeTensorAttribute("value", t);
  } else {
    *g_->add_initializer() = std::move(t);
    initializers_.insert(name);
  }
  return absl::OkStatus();
}

absl::StatusOr<FloatTensor> Exporter::Fold(int node_id) {
  if (auto it = folded_.find(node_id); it != folded_.end()) return it->second;
  const Node& node = graph_.node(node_id);
  FloatTensor value;
  if (node.kind == OpKind::kWeight && node.data && node.output_types[0].dtype == DType::kFloat32) {
    value.type = node.output_types[0];
    value.data.resize(value.type.num_elements());
    std::memcpy(value.data.data(), node.data->data(), value.data.size() * sizeof(float));
  } else if (IsFoldedKind(node.kind)) {
    std::vector<FloatTensor> inputs;
    for (const TensorRef& r : node.inputs) {
      auto v = Fold(r.node);
      if (!v.ok()) return v.status();
      inputs.push_back(*std::move(v));
    }
    std::vector<const FloatTensor*> ptrs;
    for (const FloatTensor& t : inputs) ptrs.push_back(&t);
    auto outs = EvalOpFloat(node.kind, node.params, ptrs);
    if (!outs.ok()) return outs.status();
    value = std::move((*outs)[0]);
  } else {
    return absl::UnimplementedError(absl::StrCat(DescribeNode(node), " is not a constant with float32 data"));
  }
  folded_[node_id] = value;
  return value;
}

absl::Status Exporter::EmitNode(const Node& node) {
  switch (node.kind) {
    case OpKind::kInput:
      return absl::OkStatus();
    case OpKind::kWeight: {
      if (!node.data) return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), " has no data to export"));
      return EmitWeight(NameOf({node.id, 0}, node.name), node.output_types[0], *node.data);
    }
    case OpKind::kOpaque:
      return EmitOpaque(node);
    default:
      break;
  }
  if (skipped_.count(node.id)) return absl::OkStatus();
  if (auto bias = conv_bias_.find(node.id); bias != conv_bias_.end()) {
    if (absl::Status s = EmitWindowed(graph_.node(bias->second.conv), NameOf({node.id, 0})); !s.ok()) return s;
    g_->mutable_node(g_->node_size() - 1)->add_input(NameOf(bias->second.bias));  // Conv's third input
    return absl::OkStatus();
  }
  if (IsFoldedKind(node.kind)) {
    auto value = Fold(node.id);
    if (!value.ok()) {
      return absl::UnimplementedError(absl::StrCat("cannot export ", DescribeNode(node),
                                                   ": it has no ONNX operator and its input is not constant (",
                                                   value.status().message(), ")"));
    }
    std::string bytes(value->data.size() * sizeof(float), '\0');
    std::memcpy(bytes.data(), value->data.data(), bytes.size());
    return EmitWeight(NameOf({node.id, 0}), value->type, std::move(bytes));
  }
  return EmitOperator(node);
}

absl::Status Exporter::EmitOpaque(const Node& node) {
  const OpaqueInfo& info = node.params.opaque;
  onnx::NodeProto proto;
  std::vector<std::string> outer;
  const OnnxOpaqueNode* record = nullptr;
  if (auto it = model_.opaque_nodes.find(node.name); it != model_.opaque_nodes.end()) {
    record = &it->second;
    if (!proto.ParseFromString(record->node_proto)) {
      return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), ": stored ONNX node is corrupt"));
    }
    outer = record->outer_scope_inputs;
  } else {
    // No kept node (a search built this one, e.g. eqsat's extraction): its
    // slots say where the optional operands it omits go; without them every
    // input and output is a plain slot.
    proto.set_name(node.name);
    if (info.input_slots.empty()) {
      for (size_t i = 0; i < node.inputs.size(); ++i) proto.add_input("?");
    }
    for (int slot : info.input_slots) {
      if (slot == OpaqueInfo::kSideConstant) {
        return absl::UnimplementedError(absl::StrCat(
            DescribeNode(node), " reads a constant the IR cannot hold, and its ONNX node was not kept"));
      }
      proto.add_input(slot == OpaqueInfo::kOmitted ? "" : "?");
    }
    if (info.output_slots.empty()) {
      for (size_t i = 0; i < node.output_types.size(); ++i) proto.add_output("?");
    }
    for (int slot : info.output_slots) proto.add_output(slot == OpaqueInfo::kOmitted ? "" : "?");
  }
  proto.set_op_type(info.op_type);
  proto.set_domain(info.domain);
  if (onnx_internal::IsDefaultDomain(info.domain)) default_domain_used_ = true;
  proto.clear_attribute();
  for (const auto& [name, serialized] : info.attributes) {
    if (!proto.add_attribute()->ParseFromString(serialized)) {
      return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), ": attribute '", name, "' is corrupt"));
    }
  }
  size_t k = 0;
  for (std::string& slot : *proto.mutable_input()) {
    if (slot.empty() || external_.count(slot)) continue;  // omitted optional input, or a side constant
    if (k >= node.inputs.size()) break;
    slot = NameOf(node.inputs[k++]);
  }
  if (k + outer.size() != node.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), " has ", node.inputs.size(),
                                                   " inputs; its ONNX node reads ", k + outer.size()));
  }
  for (size_t j = 0; j < outer.size(); ++j) {
    if (absl::Status s = Alias(outer[j], node.inputs[k + j]); !s.ok()) return s;
  }
  int j = 0;
  for (std::string& slot : *proto.mutable_output()) {
    if (slot.empty()) continue;  // omitted optional output
    if (j >= static_cast<int>(node.output_types.size())) {
      return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), ": more ONNX outputs than IR outputs"));
    }
    const std::string name = NameOf({node.id, j}, slot == "?" ? "" : slot);
    onnx::TypeProto type;
    // Declared types help tools that cannot infer custom operators; only
    // complete tensor types (the checker requires element type and shape).
    if (record && j < static_cast<int>(record->output_types.size()) && !claimed_.count(name) &&
        type.ParseFromString(record->output_types[j]) && type.has_tensor_type() &&
        type.tensor_type().elem_type() != 0 && type.tensor_type().has_shape()) {
      onnx::ValueInfoProto* vi = g_->add_value_info();
      vi->set_name(name);
      *vi->mutable_type() = std::move(type);
    }
    slot = name;
    ++j;
  }
  *g_->add_node() = std::move(proto);
  return absl::OkStatus();
}

absl::Status Exporter::EmitBinary(const std::string& op, TensorRef a, TensorRef b, const std::vector<int64_t>& od,
                                  const std::string& out) {
  if (opset_ >= 7) {
    AddNode(op, {NameOf(a), NameOf(b)}, {out});
    return absl::OkStatus();
  }
  // Before opset 7, B broadcasts onto A (broadcast=1) along a contiguous run
  // of A's dimensions starting at `axis`; reshape B to exactly that run.
  std::vector<int64_t> ad = TypeOf(a).dims, bd = TypeOf(b).dims;
  if (ad == bd) {
    AddNode(op, {NameOf(a), NameOf(b)}, {out});
    return absl::OkStatus();
  }
  if (ad != od) {
    std::swap(a, b);  // Add and Mul commute
    std::swap(ad, bd);
  }
  const std::string unsupported = absl::StrCat(op, " of ", DimsToString(ad), " and ", DimsToString(bd),
                                               " needs numpy broadcasting (opset 7), the model has opset ", opset_);
  if (ad != od || bd.size() > ad.size()) return absl::UnimplementedError(unsupported);
  std::vector<int64_t> aligned(ad.size() - bd.size(), 1);
  aligned.insert(aligned.end(), bd.begin(), bd.end());
  int lo = -1, hi = -1;
  for (int i = 0; i < static_cast<int>(aligned.size()); ++i) {
    if (aligned[i] != 1) {
      if (lo < 0) lo = i;
      hi = i + 1;
    }
  }
  std::vector<int64_t> run;
  for (int i = std::max(lo, 0); i < hi; ++i) {
    if (aligned[i] != ad[i]) return absl::UnimplementedError(unsupported);
    run.push_back(ad[i]);
  }
  absl::StatusOr<std::string> b_name = NameOf(b);
  if (bd != run) b_name = Reshape(*b_name, bd, run);
  if (!b_name.ok()) return b_name.status();
  onnx::NodeProto* n = AddNode(op, {NameOf(a), *b_name}, {out});
  *n->add_attribute() = MakeIntAttribute("broadcast", 1);
  if (!run.empty()) *n->add_attribute() = MakeIntAttribute("axis", lo);
  return absl::OkStatus();
}

absl::Status Exporter::EmitWindowed(const Node& node, const std::string& out) {
  const OpParams& p = node.params;
  const std::vector<int64_t>& in = TypeOf(node.inputs[0]).dims;
  const bool conv = node.kind == OpKind::kConv2D;
  std::vector<int64_t> kernel = {p.kernel_h, p.kernel_w};
  if (conv) kernel = {TypeOf(node.inputs[1]).dims[2], TypeOf(node.inputs[1]).dims[3]};
  std::vector<int64_t> pads(4, 0);  // {top, left, bottom, right}
  if (p.padding == Padding::kExplicit) {
    pads.assign(p.pads.begin(), p.pads.end());
  } else if (p.padding == Padding::kSame) {
    // Written out from the input shape rather than auto_pad, which some
    // runtimes treat differently.
    const int64_t stride[2] = {p.stride_h, p.stride_w};
    for (int axis = 0; axis < 2; ++axis) {
      const int64_t extent = in[2 + axis];
      const int64_t o = (extent + stride[axis] - 1) / stride[axis];
      const int64_t total = std::max<int64_t>((o - 1) * stride[axis] + kernel[axis] - extent, 0);
      pads[axis] = total / 2;
      pads[axis + 2] = total - total / 2;
    }
  }
  if (pads.size() != 4) return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), ": pads need 4 values"));
  std::vector<std::string> inputs = {NameOf(node.inputs[0])};
  if (conv) inputs.push_back(NameOf(node.inputs[1]));
  if (conv && node.inputs.size() > 2) inputs.push_back(NameOf(node.inputs[2]));  // bias [M]
  const char* op = conv ? "Conv" : node.kind == OpKind::kPoolAvg ? "AveragePool" : "MaxPool";
  onnx::NodeProto* n = AddNode(op, inputs, {out});
  *n->add_attribute() = MakeIntsAttribute("kernel_shape", kernel);
  *n->add_attribute() = MakeIntsAttribute("strides", {p.stride_h, p.stride_w});
  *n->add_attribute() = MakeIntsAttribute("pads", pads);
  if (conv) {
    const int64_t groups = in[1] / TypeOf(node.inputs[1]).dims[1];
    if (groups != 1) *n->add_attribute() = MakeIntAttribute("group", groups);
  }
  if (node.kind == OpKind::kPoolAvg) {
    const bool padded = pads != std::vector<int64_t>(4, 0);
    if (opset_ >= 7) {
      *n->add_attribute() = MakeIntAttribute("count_include_pad", p.count_include_pad ? 1 : 0);
    } else if (p.count_include_pad && padded) {
      return absl::UnimplementedError(absl::StrCat(DescribeNode(node),
                                                   ": counting padding in the average needs opset 7"));
    }
  }
  return absl::OkStatus();
}

absl::Status Exporter::EmitOperator(const Node& node) {
  const OpParams& p = node.params;
  const TensorRef self = {node.id, 0};
  const Activation act = node.kind == OpKind::kConv2D || node.kind == OpKind::kMatMul || node.kind == OpKind::kFusedGemm
                             ? p.activation
                             : Activation::kNone;
  // With a fused activation the operator writes a temporary the activation reads.
  const std::string out = act == Activation::kNone ? NameOf(self) : FreshName(absl::StrCat(OpKindName(node.kind), "_", node.id, "_linear"));
  switch (node.kind) {
    case OpKind::kEwAdd:
      if (absl::Status s = EmitBinary("Add", node.inputs[0], node.inputs[1], node.output_types[0].dims, out); !s.ok()) return s;
      break;
    case OpKind::kEwMul:
    case OpKind::kScalarMul:
      if (absl::Status s = EmitBinary("Mul", node.inputs[0], node.inputs[1], node.output_types[0].dims, out); !s.ok()) return s;
      break;
    case OpKind::kRelu:
    case OpKind::kTanh:
    case OpKind::kSigmoid:
      AddNode(OnnxActivation(node.kind == OpKind::kRelu   ? Activation::kRelu
                             : node.kind == OpKind::kTanh ? Activation::kTanh
                                                          : Activation::kSigmoid),
              {NameOf(node.inputs[0])}, {out});
      break;
    case OpKind::kTranspose:
      *AddNode("Transpose", {NameOf(node.inputs[0])}, {out})->add_attribute() =
          MakeIntsAttribute("perm", std::vector<int64_t>(p.perm.begin(), p.perm.end()));
      break;
    case OpKind::kMatMul:
      AddNode("MatMul", {NameOf(node.inputs[0]), NameOf(node.inputs[1])}, {out});
      break;
    case OpKind::kFusedGemm:
      if (dialect_ == OnnxDialect::kOnnxRuntime && act != Activation::kNone) {
        // ONNX Runtime's kernel applies the activation itself.
        onnx::NodeProto* n =
            AddNode("FusedGemm", {NameOf(node.inputs[0]), NameOf(node.inputs[1]), NameOf(node.inputs[2])}, {NameOf(self)});
        n->set_domain(kMicrosoftDomain);
        *n->add_attribute() = MakeStringAttribute("activation", OnnxActivation(act));
        microsoft_domain_used_ = true;
        return absl::OkStatus();
      }
      // Standard ONNX: Gemm adds its third operand, broadcast to the product (opset 7 on), and the
      // activation follows; ONNX Runtime fuses the two back into its FusedGemm.
      if (opset_ < 7) {
        return absl::UnimplementedError(absl::StrCat("cannot export ", DescribeNode(node),
                                                     ": Gemm broadcasts its bias from opset 7, the model imports ",
                                                     opset_));
      }
      AddNode("Gemm", {NameOf(node.inputs[0]), NameOf(node.inputs[1]), NameOf(node.inputs[2])}, {out});
      break;
    case OpKind::kConv2D:
    case OpKind::kPoolAvg:
    case OpKind::kPoolMax:
      if (absl::Status s = EmitWindowed(node, out); !s.ok()) return s;
      break;
    case OpKind::kConcat: {
      std::vector<std::string> inputs;
      for (const TensorRef& r : node.inputs) inputs.push_back(NameOf(r));
      *AddNode("Concat", inputs, {out})->add_attribute() = MakeIntAttribute("axis", p.axis);
      break;
    }
    case OpKind::kSplit: {
      // Sizes from the output types: also covers the IR's split at a recorded concat point.
      std::vector<int64_t> sizes;
      std::vector<std::string> outs;
      for (size_t i = 0; i < node.output_types.size(); ++i) {
        sizes.push_back(node.output_types[i].dims[p.axis]);
        outs.push_back(NameOf({node.id, static_cast<int>(i)}));
      }
      std::vector<std::string> inputs = {NameOf(node.inputs[0])};
      if (opset_ >= 13) inputs.push_back(Constant(outs[0] + "_sizes", sizes));
      onnx::NodeProto* n = AddNode("Split", inputs, outs);
      *n->add_attribute() = MakeIntAttribute("axis", p.axis);
      if (opset_ < 13) *n->add_attribute() = MakeIntsAttribute("split", sizes);
      break;
    }
    case OpKind::kReshape: {
      auto r = Reshape(NameOf(node.inputs[0]), TypeOf(node.inputs[0]).dims, p.shape, out);
      if (!r.ok()) return r.status();
      break;
    }
    case OpKind::kBatchNorm: {
      std::vector<std::string> inputs;
      for (const TensorRef& r : node.inputs) inputs.push_back(NameOf(r));
      onnx::NodeProto* n = AddNode("BatchNormalization", inputs, {out});
      *n->add_attribute() = MakeFloatAttribute("epsilon", p.epsilon);
      if (opset_ < 7) *n->add_attribute() = MakeIntAttribute("is_test", 1);
      if (opset_ < 6) *n->add_attribute() = MakeIntsAttribute("consumed_inputs", {0, 0, 0, 1, 1});
      break;
    }
    default:
      return absl::UnimplementedError(absl::StrCat("cannot export ", DescribeNode(node)));
  }
  if (act != Activation::kNone) {
    AddNode(OnnxActivation(act), {out}, {NameOf(self)});
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Exporter::Run(OnnxExternalSink* sink) {
  if (absl::Status s = graph_.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot export an invalid graph: ", s.message()));
  }
  if (absl::Status s = Prepare(); !s.ok()) return s;
  FindConvBiases();
  auto order = graph_.TopologicalOrder();
  if (!order.ok()) return order.status();
  for (int id : *order) {
    if (absl::Status s = EmitNode(graph_.node(id)); !s.ok()) return s;
  }
  for (const GraphOutput& o : graph_.outputs()) {
    if (absl::Status s = Alias(o.name, o.tensor); !s.ok()) return s;
  }
  for (const auto& [name, serialized] : model_.side_constants) {
    if (!g_->add_initializer()->ParseFromString(serialized)) {
      return absl::InvalidArgumentError(absl::StrCat("stored initializer '", name, "' is corrupt"));
    }
    initializers_.insert(name);
  }
  // Inputs that were initializers stay only while their weight does.
  auto* inputs = g_->mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i) {
    const std::string& name = inputs->Get(i).name();
    if (model_.initializer_inputs.count(name) && !initializers_.count(name)) inputs->DeleteSubrange(i, 1);
  }
  if (default_domain_used_ && DefaultOpset(out_) == 0) {
    auto* opset = out_.add_opset_import();
    opset->set_domain("");
    opset->set_version(opset_);
  }
  if (microsoft_domain_used_ &&
      std::none_of(out_.opset_import().begin(), out_.opset_import().end(),
                   [](const onnx::OperatorSetIdProto& o) { return o.domain() == kMicrosoftDomain; })) {
    auto* opset = out_.add_opset_import();
    opset->set_domain(kMicrosoftDomain);
    opset->set_version(1);  // the only version of ONNX Runtime's contrib operator set
  }
  if (absl::Status s = onnx_internal::CheckModelAnyVersion(out_); !s.ok()) {
    return absl::InternalError(absl::StrCat("the exported model fails the ONNX checker: ", s.message()));
  }
  // After the check, which looks for external data on disk.
  if (sink != nullptr) {
    sink->data.clear();
    onnx_internal::MoveTensorsOut(out_, *sink);
  }
  std::string bytes;
  if (!out_.SerializeToString(&bytes)) return absl::InternalError("cannot serialize the exported model");
  return bytes;
}

}  // namespace

absl::StatusOr<std::string> ExportOnnx(const OnnxModel& model, const Graph& graph, OnnxExternalSink* sink,
                                       OnnxDialect dialect) {
  try {
    return Exporter(model, graph, dialect).Run(sink);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("ONNX export failed: ", e.what()));
  }
}

absl::StatusOr<std::string> ExportStandaloneOnnx(const Graph& graph, int64_t opset, OnnxDialect dialect) {
  onnx::ModelProto model;
  model.set_ir_version(7);  // ONNX 1.7 (opset 13); every runtime of the last years reads it
  model.set_producer_name("taso");
  onnx::OperatorSetIdProto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("taso_graph");
  auto declare = [](onnx::ValueInfoProto* value, const std::string& name, const TensorType& type) {
    value->set_name(name);
    onnx::TypeProto_Tensor* t = value->mutable_type()->mutable_tensor_type();
    t->set_elem_type(OnnxElemType(type.dtype));
    for (int64_t d : type.dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  for (const Node& node : graph.nodes()) {
    if (node.kind == OpKind::kInput) declare(g->add_input(), node.name, node.output_types[0]);
  }
  for (const GraphOutput& o : graph.outputs()) declare(g->add_output(), o.name, graph.type(o.tensor));
  OnnxModel standalone;
  if (!model.SerializeToString(&standalone.model_template)) {
    return absl::InternalError("cannot serialize the model template");
  }
  return ExportOnnx(standalone, graph, nullptr, dialect);
}

}  // namespace taso
