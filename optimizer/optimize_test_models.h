// ONNX models and options the optimizer's end-to-end tests share
// (optimize_test.cc, never_slower_test.cc).
#ifndef TASO_OPTIMIZER_OPTIMIZE_TEST_MODELS_H_
#define TASO_OPTIMIZER_OPTIMIZE_TEST_MODELS_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "optimizer/optimize.h"

namespace taso::optimizer::testing {


inline onnx::ValueInfoProto Value(const std::string& name, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  return v;
}

// An empty opset-13 model whose graph is called `name`.
inline onnx::ModelProto Opset13Model(const std::string& name) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  m.mutable_graph()->set_name(name);
  return m;
}

// Appends the node OP(inputs) -> output to `g`.
inline onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                         const std::string& output) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(output);
  return n;
}

// A float initializer of smooth values in [-scale, scale].
inline onnx::TensorProto Weight(const std::string& name, const std::vector<int64_t>& dims, float scale = 0.05f) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t.add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) t.add_float_data(scale * std::sin(0.7 * i + name.size()));
  return t;
}

// x -> Conv(pads 1, bias) -> Relu -> Conv(stride 2, pads 1) -> Relu -> y
inline std::string ConvReluModel() {
  onnx::ModelProto m = Opset13Model("convrelu");
  onnx::GraphProto* g = m.mutable_graph();
  *g->add_input() = Value("x", {1, 4, 8, 8});
  *g->add_output() = Value("y", {1, 4, 4, 4});
  *g->add_initializer() = Weight("w1", {4, 4, 3, 3});
  *g->add_initializer() = Weight("b1", {4});
  *g->add_initializer() = Weight("w2", {4, 4, 3, 3});
  auto conv = [&](const std::vector<std::string>& in, const std::string& out, int stride) {
    onnx::NodeProto* n = AddNode(g, "Conv", in, out);
    onnx::AttributeProto* pads = n->add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(1);
    onnx::AttributeProto* strides = n->add_attribute();
    strides->set_name("strides");
    strides->set_type(onnx::AttributeProto::INTS);
    strides->add_ints(stride);
    strides->add_ints(stride);
  };
  conv({"x", "w1", "b1"}, "c1", 1);
  AddNode(g, "Relu", {"c1"}, "r1");
  conv({"r1", "w2"}, "c2", 2);
  AddNode(g, "Relu", {"c2"}, "y");
  return m.SerializeAsString();
}


// Q/K/V-like projections of x (MatMul + bias Add each), multiplied together;
// a MatMul of Transpose(a), then one of Transpose(weight); and relu(x)
// computed twice.
inline std::string ProjectionsModel() {
  onnx::ModelProto m = Opset13Model("projections");
  onnx::GraphProto* g = m.mutable_graph();
  *g->add_input() = Value("x", {16, 32});
  *g->add_input() = Value("a", {32, 16});
  *g->add_output() = Value("y", {16, 32});
  *g->add_output() = Value("t", {16, 32});
  *g->add_output() = Value("r", {16, 32});
  *g->add_output() = Value("u", {16, 32});
  for (const char* h : {"q", "k", "v"}) {
    const std::string name(h);
    *g->add_initializer() = Weight("w" + name, {32, 32});
    *g->add_initializer() = Weight("b" + name, {32});
    AddNode(g, "MatMul", {"x", "w" + name}, "m" + name);
    AddNode(g, "Add", {"m" + name, "b" + name}, name);
  }
  AddNode(g, "Mul", {"q", "k"}, "qk");
  AddNode(g, "Mul", {"qk", "v"}, "y");
  AddNode(g, "Transpose", {"a"}, "at");
  *g->add_initializer() = Weight("wt", {32, 32});
  AddNode(g, "MatMul", {"at", "wt"}, "t");
  *g->add_initializer() = Weight("wu", {32, 32});
  AddNode(g, "Transpose", {"wu"}, "wut");
  AddNode(g, "MatMul", {"t", "wut"}, "u");
  AddNode(g, "Relu", {"x"}, "r1");
  AddNode(g, "Relu", {"x"}, "r2");
  AddNode(g, "Add", {"r1", "r2"}, "r");
  return m.SerializeAsString();
}

// Keeps any gain, however small.
inline OptimizerOptions AnyGain() {
  OptimizerOptions options;
  options.min_gain = 0;
  return options;
}

}  // namespace taso::optimizer::testing

#endif  // TASO_OPTIMIZER_OPTIMIZE_TEST_MODELS_H_
