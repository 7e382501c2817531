#include "profiler/ort/ort_opaque_model.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "onnx_io/onnx_common.h"
#include "profiler/ort/opaque_operands.h"
#include "profiler/ort/ort_model.h"

namespace taso::profiler {
namespace {

using onnx_internal::IsDefaultDomain;
using onnx_internal::OnnxElemType;

// The oldest IR version that may import `opset` of the default domain.
int64_t IrVersionFor(int64_t opset) {
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  return 11;
}

void Declare(onnx::ValueInfoProto* value, const std::string& name, const TensorType& type) {
  value->set_name(name);
  onnx::TypeProto_Tensor* t = value->mutable_type()->mutable_tensor_type();
  t->set_elem_type(OnnxElemType(type.dtype));
  onnx::TensorShapeProto* shape = t->mutable_shape();
  for (int i = 0; i < type.rank(); ++i) {
    // An unknown dimension is symbolic; the worker feeds 1 for it.
    if (type.dims[i] >= 0) {
      shape->add_dim()->set_dim_value(type.dims[i]);
    } else {
      shape->add_dim()->set_dim_param(absl::StrCat(name, "_d", i));
    }
  }
}

void AddInitializer(onnx::GraphProto* g, const std::string& name, const TensorType& type, const std::string& data) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(OnnxElemType(type.dtype));
  for (int64_t d : type.dims) t->add_dims(d);
  t->set_raw_data(data);
}

// The node's attributes, refusing subgraphs: their bodies read values of the
// model around them, which a model of one operator does not have.
absl::Status AddAttributes(const OpaqueInfo& info, onnx::NodeProto& node) {
  for (const auto& [name, serialized] : info.attributes) {
    onnx::AttributeProto* a = node.add_attribute();
    if (!a->ParseFromString(serialized)) {
      return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' is not a serialized AttributeProto"));
    }
    if (a->type() == onnx::AttributeProto::GRAPH || a->type() == onnx::AttributeProto::GRAPHS || a->has_g() ||
        a->graphs_size() > 0) {
      return absl::UnimplementedError(absl::StrCat(info.op_type, " has a subgraph (attribute '", name,
                                                   "'), which cannot run without the model around it"));
    }
  }
  return absl::OkStatus();
}

// How operand `k` enters the model: the name every copy reads, or empty when
// each copy has a weight of its own.
struct Operand {
  std::string shared_name;
  bool graph_input = false;
};

absl::StatusOr<std::vector<Operand>> PlaceOperands(const CanonicalSignature& s, onnx::GraphProto* g) {
  std::vector<Operand> operands(s.op.inputs.size());
  const std::map<int, std::string> derived = DerivedOperands(s);
  for (int k = 0; k < static_cast<int>(s.op.inputs.size()); ++k) {
    const TensorType& type = s.op.inputs[k];
    if (OnnxElemType(type.dtype) == 0) {
      return absl::UnimplementedError(absl::StrCat("input ", k, " has no known element type"));
    }
    auto constant = s.op.constant_inputs.find(k);
    auto value = derived.find(k);
    if (constant != s.op.constant_inputs.end() && !constant->second.empty()) {
      operands[k].shared_name = absl::StrCat("c", k);
      AddInitializer(g, operands[k].shared_name, type, constant->second);
    } else if (value != derived.end()) {
      operands[k].shared_name = absl::StrCat("c", k);
      AddInitializer(g, operands[k].shared_name, type, value->second);
    } else if (constant != s.op.constant_inputs.end()) {
      continue;  // a weight: each copy its own
    } else {
      operands[k].shared_name = absl::StrCat("in", k);
      operands[k].graph_input = true;
      Declare(g->add_input(), operands[k].shared_name, type);
    }
  }
  return operands;
}

std::vector<int> Slots(const std::vector<int>& slots, size_t n) {
  if (!slots.empty()) return slots;
  std::vector<int> identity(n);
  for (size_t i = 0; i < n; ++i) identity[i] = static_cast<int>(i);
  return identity;
}

}  // namespace

absl::StatusOr<OneOperatorModel> OpaqueTimingModel(const CanonicalSignature& s, int copies, int nodes) {
  copies = std::max(copies, 1);
  nodes = std::max(nodes, copies);
  const OpaqueInfo& info = s.op.params.opaque;
  const std::vector<int> in_slots = Slots(info.input_slots, s.op.inputs.size());
  const std::vector<int> out_slots = Slots(info.output_slots, s.outputs.size());
  int named = 0;
  for (int slot : in_slots) {
    if (slot == OpaqueInfo::kSideConstant) {
      return absl::UnimplementedError(
          absl::StrCat(info.op_type, " reads a constant the IR cannot hold (a double or string tensor)"));
    }
    named += slot >= 0;
  }
  if (named != static_cast<int>(s.op.inputs.size())) {
    return absl::UnimplementedError(
        absl::StrCat(info.op_type, " reads values of an enclosing graph, which a model of one operator does not have"));
  }
  for (const TensorType& t : s.outputs) {
    if (OnnxElemType(t.dtype) == 0) {
      return absl::UnimplementedError(absl::StrCat(info.op_type, " has an output of unknown element type"));
    }
  }

  onnx::ModelProto model;
  const int64_t opset = info.opset > 0 ? info.opset : kAssumedOpaqueOpset;
  const bool default_domain = IsDefaultDomain(info.domain);
  model.set_ir_version(IrVersionFor(default_domain ? opset : kAssumedOpaqueOpset));
  model.set_producer_name("taso profiler");
  onnx::OperatorSetIdProto* onnx_import = model.add_opset_import();
  onnx_import->set_domain("");
  onnx_import->set_version(default_domain ? opset : kAssumedOpaqueOpset);
  if (!default_domain) {
    onnx::OperatorSetIdProto* import = model.add_opset_import();
    import->set_domain(info.domain);
    import->set_version(info.opset > 0 ? info.opset : 1);
  }
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("taso_opaque_operator");
  onnx::NodeProto prototype;
  prototype.set_op_type(info.op_type);
  if (!default_domain) prototype.set_domain(info.domain);
  if (absl::Status a = AddAttributes(info, prototype); !a.ok()) return a;
  auto operands = PlaceOperands(s, g);
  if (!operands.ok()) return operands.status();

  OneOperatorModel out;
  out.operators = nodes;
  for (const Operand& o : *operands) out.graph_inputs += o.graph_input;
  for (int copy = 0; copy < copies; ++copy) {
    for (int slot : in_slots) {
      if (slot < 0 || !(*operands)[slot].shared_name.empty()) continue;
      const std::string name = absl::StrCat("w", slot, "_", copy);
      AddInitializer(g, name, s.op.inputs[slot], *DeterministicValues(s.op.inputs[slot], name, /*positive=*/false));
    }
  }
  for (int n = 0; n < nodes; ++n) {
    onnx::NodeProto* node = g->add_node();
    *node = prototype;
    node->set_name(absl::StrCat("op", n));
    for (int slot : in_slots) {
      if (slot < 0) {
        node->add_input("");  // an optional input the model's node leaves out
        continue;
      }
      const Operand& o = (*operands)[slot];
      node->add_input(o.shared_name.empty() ? absl::StrCat("w", slot, "_", n % copies) : o.shared_name);
    }
    for (int slot : out_slots) {
      if (slot < 0) {
        node->add_output("");
        continue;
      }
      const std::string name = absl::StrCat("out", slot, "_", n);
      node->add_output(name);
      Declare(g->add_output(), name, s.outputs[slot]);
      ++out.graph_outputs;
    }
  }
  if (!model.SerializeToString(&out.onnx)) return absl::InternalError("cannot serialize the operator's model");
  return out;
}

}  // namespace taso::profiler
