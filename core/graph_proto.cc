#include "core/graph_proto.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"

namespace taso {
namespace {

constexpr int kMaxSplitDepth = 64;

void SplitToProto(const SplitTree& t, ir::SplitTree* out) {
  if (!t) return;
  out->set_left_size(t->left_size);
  SplitToProto(t->left, out->mutable_left());
  SplitToProto(t->right, out->mutable_right());
}

absl::StatusOr<SplitTree> SplitFromProto(const ir::SplitTree& p, int64_t extent, int depth) {
  if (p.left_size() == 0) {
    if (p.has_left() || p.has_right()) return absl::InvalidArgumentError("split tree leaf with children");
    return SplitTree(nullptr);
  }
  if (depth > kMaxSplitDepth) return absl::InvalidArgumentError("split tree too deep");
  if (p.left_size() < 0 || p.left_size() >= extent) {
    return absl::InvalidArgumentError(
        absl::StrCat("split point ", p.left_size(), " outside a dimension of ", extent));
  }
  auto left = SplitFromProto(p.left(), p.left_size(), depth + 1);
  if (!left.ok()) return left.status();
  auto right = SplitFromProto(p.right(), extent - p.left_size(), depth + 1);
  if (!right.ok()) return right.status();
  return MakeSplit(p.left_size(), *left, *right);
}

bool ValidActivation(int a) { return a >= 0 && a <= 3; }

// proto3 cannot tell an unset stride from 0; an unset stride means 1.
int StrideOrOne(int stride) { return stride == 0 ? 1 : stride; }

}  // namespace

ir::TensorType TensorTypeToProto(const TensorType& type) {
  ir::TensorType p;
  p.set_dtype(static_cast<ir::DType>(type.dtype));
  for (int64_t d : type.dims) p.add_dims(d);
  if (!type.is_row_major()) {
    for (int64_t s : type.strides) p.add_strides(s);
  }
  if (type.has_split_info()) {
    for (const SplitTree& t : type.split) SplitToProto(t, p.add_split());
  }
  return p;
}

absl::StatusOr<TensorType> TensorTypeFromProto(const ir::TensorType& p) {
  if (p.dtype() == ir::DTYPE_UNSPECIFIED || !ir::DType_IsValid(p.dtype())) {
    return absl::InvalidArgumentError("tensor type without a valid dtype");
  }
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  if (absl::Status s = CheckDims(dims); !s.ok()) return s;
  TensorType t = TensorType::RowMajor(static_cast<DType>(p.dtype()), dims);
  if (p.strides_size() > 0) {
    if (p.strides_size() != static_cast<int>(dims.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(p.strides_size(), " strides for rank ", dims.size()));
    }
    t.strides.assign(p.strides().begin(), p.strides().end());
  }
  if (p.split_size() > 0) {
    if (p.split_size() != static_cast<int>(dims.size())) {
      return absl::InvalidArgumentError(absl::StrCat(p.split_size(), " split trees for rank ", dims.size()));
    }
    for (int i = 0; i < p.split_size(); ++i) {
      auto tree = SplitFromProto(p.split(i), dims[i], 0);
      if (!tree.ok()) return tree.status();
      t.split[i] = *tree;
    }
  }
  return t;
}

ir::OpParams OpParamsToProto(OpKind kind, const OpParams& p) {
  ir::OpParams out;
  switch (kind) {
    case OpKind::kConv2D: {
      auto* c = out.mutable_conv2d();
      c->set_stride_h(p.stride_h);
      c->set_stride_w(p.stride_w);
      c->set_padding(static_cast<ir::Padding>(p.padding));
      c->set_activation(static_cast<ir::Activation>(p.activation));
      if (p.padding == Padding::kExplicit) c->mutable_pads()->Add(p.pads.begin(), p.pads.end());
      break;
    }
    case OpKind::kPoolAvg:
    case OpKind::kPoolMax: {
      auto* c = out.mutable_pool();
      c->set_kernel_h(p.kernel_h);
      c->set_kernel_w(p.kernel_w);
      c->set_stride_h(p.stride_h);
      c->set_stride_w(p.stride_w);
      c->set_padding(static_cast<ir::Padding>(p.padding));
      c->set_exclude_pad(!p.count_include_pad);
      if (p.padding == Padding::kExplicit) c->mutable_pads()->Add(p.pads.begin(), p.pads.end());
      break;
    }
    case OpKind::kMatMul:
    case OpKind::kFusedGemm:
      out.mutable_matmul()->set_activation(static_cast<ir::Activation>(p.activation));
      break;
    case OpKind::kTranspose:
      for (int v : p.perm) out.mutable_transpose()->add_perm(v);
      out.mutable_transpose()->set_strides_only(!p.shuffle);
      break;
    case OpKind::kConcat:
      out.mutable_concat()->set_axis(p.axis);
      break;
    case OpKind::kSplit:
      out.mutable_split()->set_axis(p.axis);
      for (int64_t s : p.sizes) out.mutable_split()->add_sizes(s);
      break;
    case OpKind::kReshape:
      for (int64_t s : p.shape) out.mutable_reshape()->add_shape(s);
      break;
    case OpKind::kEnlarge:
      out.mutable_enlarge()->set_kernel_h(p.kernel_h);
      out.mutable_enlarge()->set_kernel_w(p.kernel_w);
      break;
    case OpKind::kMergeGConv:
      out.mutable_merge_gconv()->set_groups(p.groups);
      out.mutable_merge_gconv()->set_count(p.count);
      break;
    case OpKind::kConstPool:
    case OpKind::kConstIConv:
    case OpKind::kConstIMatMul:
    case OpKind::kConstOnes:
      for (int64_t s : p.shape) out.mutable_constant()->add_shape(s);
      break;
    case OpKind::kBatchNorm:
      out.mutable_batchnorm()->set_epsilon(p.epsilon);
      break;
    case OpKind::kOpaque: {
      auto* o = out.mutable_opaque();
      o->set_op_type(p.opaque.op_type);
      o->set_domain(p.opaque.domain);
      for (const auto& [name, value] : p.opaque.attributes) {
        auto* a = o->add_attributes();
        a->set_name(name);
        a->set_value(value);
      }
      for (const TensorType& t : p.opaque.output_types) *o->add_output_types() = TensorTypeToProto(t);
      o->set_opset(p.opaque.opset);
      for (int slot : p.opaque.input_slots) o->add_input_slots(slot);
      for (int slot : p.opaque.output_slots) o->add_output_slots(slot);
      break;
    }
    default:
      break;
  }
  return out;
}

absl::StatusOr<OpParams> OpParamsFromProto(OpKind kind, const ir::OpParams& in) {
  OpParams p;
  auto need = [&](ir::OpParams::ParamsCase expected) -> absl::Status {
    if (in.params_case() != expected) {
      return absl::InvalidArgumentError(absl::StrCat(OpKindName(kind), " needs its parameters set"));
    }
    return absl::OkStatus();
  };
  switch (kind) {
    case OpKind::kConv2D: {
      if (auto s = need(ir::OpParams::kConv2D); !s.ok()) return s;
      const auto& c = in.conv2d();
      if (!ValidActivation(c.activation())) return absl::InvalidArgumentError("conv2d: unknown activation");
      if (!ir::Padding_IsValid(c.padding())) return absl::InvalidArgumentError("conv2d: unknown padding");
      p.stride_h = StrideOrOne(c.stride_h());
      p.stride_w = StrideOrOne(c.stride_w());
      p.padding = static_cast<Padding>(c.padding());
      p.activation = static_cast<Activation>(c.activation());
      if (p.padding == Padding::kExplicit) p.pads.assign(c.pads().begin(), c.pads().end());
      break;
    }
    case OpKind::kPoolAvg:
    case OpKind::kPoolMax: {
      if (auto s = need(ir::OpParams::kPool); !s.ok()) return s;
      const auto& c = in.pool();
      if (!ir::Padding_IsValid(c.padding())) return absl::InvalidArgumentError("pool: unknown padding");
      p.kernel_h = c.kernel_h();
      p.kernel_w = c.kernel_w();
      p.stride_h = StrideOrOne(c.stride_h());
      p.stride_w = StrideOrOne(c.stride_w());
      p.padding = static_cast<Padding>(c.padding());
      p.count_include_pad = !c.exclude_pad();
      if (p.padding == Padding::kExplicit) p.pads.assign(c.pads().begin(), c.pads().end());
      break;
    }
    case OpKind::kMatMul:
    case OpKind::kFusedGemm:
      if (in.params_case() == ir::OpParams::kMatmul) {
        if (!ValidActivation(in.matmul().activation())) {
          return absl::InvalidArgumentError(absl::StrCat(OpKindName(kind), ": unknown activation"));
        }
        p.activation = static_cast<Activation>(in.matmul().activation());
      }
      break;
    case OpKind::kTranspose:
      if (auto s = need(ir::OpParams::kTranspose); !s.ok()) return s;
      p.perm.assign(in.transpose().perm().begin(), in.transpose().perm().end());
      p.shuffle = !in.transpose().strides_only();
      break;
    case OpKind::kConcat:
      if (auto s = need(ir::OpParams::kConcat); !s.ok()) return s;
      p.axis = in.concat().axis();
      break;
    case OpKind::kSplit:
      if (auto s = need(ir::OpParams::kSplit); !s.ok()) return s;
      p.axis = in.split().axis();
      p.sizes.assign(in.split().sizes().begin(), in.split().sizes().end());
      break;
    case OpKind::kReshape:
      if (auto s = need(ir::OpParams::kReshape); !s.ok()) return s;
      p.shape.assign(in.reshape().shape().begin(), in.reshape().shape().end());
      break;
    case OpKind::kEnlarge:
      if (auto s = need(ir::OpParams::kEnlarge); !s.ok()) return s;
      p.kernel_h = in.enlarge().kernel_h();
      p.kernel_w = in.enlarge().kernel_w();
      break;
    case OpKind::kMergeGConv:
      if (auto s = need(ir::OpParams::kMergeGconv); !s.ok()) return s;
      p.groups = in.merge_gconv().groups();
      p.count = in.merge_gconv().count();
      break;
    case OpKind::kConstPool:
    case OpKind::kConstIConv:
    case OpKind::kConstIMatMul:
    case OpKind::kConstOnes:
      if (auto s = need(ir::OpParams::kConstant); !s.ok()) return s;
      p.shape.assign(in.constant().shape().begin(), in.constant().shape().end());
      break;
    case OpKind::kBatchNorm:
      if (in.params_case() == ir::OpParams::kBatchnorm) p.epsilon = in.batchnorm().epsilon();
      break;
    case OpKind::kOpaque: {
      if (auto s = need(ir::OpParams::kOpaque); !s.ok()) return s;
      const auto& o = in.opaque();
      p.opaque.op_type = o.op_type();
      p.opaque.domain = o.domain();
      for (const auto& a : o.attributes()) p.opaque.attributes.emplace_back(a.name(), a.value());
      for (const auto& t : o.output_types()) {
        auto type = TensorTypeFromProto(t);
        if (!type.ok()) return type.status();
        p.opaque.output_types.push_back(*type);
      }
      p.opaque.opset = o.opset();
      p.opaque.input_slots.assign(o.input_slots().begin(), o.input_slots().end());
      p.opaque.output_slots.assign(o.output_slots().begin(), o.output_slots().end());
      break;
    }
    default:
      break;
  }
  return p;
}

ir::Graph GraphToProto(const Graph& graph, bool weight_data) {
  ir::Graph out;
  for (const Node& n : graph.nodes()) {
    ir::Node* p = out.add_nodes();
    p->set_id(n.id);
    p->set_kind(static_cast<ir::OpKind>(n.kind));
    if (n.kind == OpKind::kInput || n.kind == OpKind::kWeight) {
      p->set_name(n.name);
      *p->mutable_type() = TensorTypeToProto(n.output_types[0]);
      if (n.data && weight_data) p->set_data(*n.data);
      continue;
    }
    *p->mutable_params() = OpParamsToProto(n.kind, n.params);
    for (const TensorRef& r : n.inputs) {
      ir::TensorRef* pr = p->add_inputs();
      pr->set_node(r.node);
      pr->set_index(r.index);
    }
  }
  for (const GraphOutput& o : graph.outputs()) {
    ir::GraphOutput* p = out.add_outputs();
    p->set_name(o.name);
    p->mutable_tensor()->set_node(o.tensor.node);
    p->mutable_tensor()->set_index(o.tensor.index);
  }
  return out;
}

absl::StatusOr<Graph> GraphFromProto(const ir::Graph& proto) {
  std::vector<Node> nodes;
  nodes.reserve(proto.nodes_size());
  for (const ir::Node& p : proto.nodes()) {
    Node n;
    n.id = p.id();
    if (p.kind() == ir::OP_UNSPECIFIED || !ir::OpKind_IsValid(p.kind())) {
      return absl::InvalidArgumentError(absl::StrCat("node ", p.id(), " has no valid operator kind"));
    }
    n.kind = static_cast<OpKind>(p.kind());
    if (n.kind == OpKind::kInput || n.kind == OpKind::kWeight) {
      n.name = p.name();
      if (n.name.empty()) return absl::InvalidArgumentError(absl::StrCat("node ", p.id(), ": input without a name"));
      auto type = TensorTypeFromProto(p.type());
      if (!type.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(DescribeNode(n), ": ", type.status().message()));
      }
      n.output_types = {*type};
      if (!p.data().empty()) n.data = std::make_shared<const std::string>(p.data());
    } else {
      auto params = OpParamsFromProto(n.kind, p.params());
      if (!params.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(DescribeNode(n), ": ", params.status().message()));
      }
      n.params = *std::move(params);
    }
    for (const ir::TensorRef& r : p.inputs()) n.inputs.push_back({r.node(), r.index()});
    nodes.push_back(std::move(n));
  }
  std::vector<GraphOutput> outputs;
  for (const ir::GraphOutput& o : proto.outputs()) {
    outputs.push_back({o.name(), {o.tensor().node(), o.tensor().index()}});
  }
  return Graph::Create(std::move(nodes), std::move(outputs));
}

absl::StatusOr<Graph> GraphFromText(const std::string& text) {
  ir::Graph proto;
  if (!google::protobuf::TextFormat::ParseFromString(text, &proto)) {
    return absl::InvalidArgumentError("not a valid taso.ir.Graph text proto");
  }
  return GraphFromProto(proto);
}

std::string GraphToText(const Graph& graph) {
  std::string out;
  google::protobuf::TextFormat::PrintToString(GraphToProto(graph), &out);
  return out;
}

}  // namespace taso
