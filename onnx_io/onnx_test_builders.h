// Small ONNX models built by hand for the importer's tests.
#ifndef TASO_ONNX_IO_ONNX_TEST_BUILDERS_H_
#define TASO_ONNX_IO_ONNX_TEST_BUILDERS_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "onnx_io/onnx_common.h"
#include "onnx/onnx_pb.h"

namespace taso::onnx_test {


// A dimension is a size, or a symbolic name when negative (see Dims).
struct Dim {
  int64_t value = 0;
  std::string param;
  Dim(int64_t v) : value(v) {}  // NOLINT: implicit for brace lists
  Dim(const char* p) : param(p) {}  // NOLINT
};

inline onnx::ValueInfoProto Value(const std::string& name, const std::vector<Dim>& dims,
                           int elem = onnx::TensorProto::FLOAT) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* shape = t->mutable_shape();
  for (const Dim& d : dims) {
    if (d.param.empty()) {
      shape->add_dim()->set_dim_value(d.value);
    } else {
      shape->add_dim()->set_dim_param(d.param);
    }
  }
  return v;
}

inline onnx::TensorProto FloatInit(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float x : v) t.add_float_data(x);
  return t;
}

inline onnx::TensorProto IntInit(const std::string& name, const std::vector<int64_t>& v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(v.size()));
  std::string raw(v.size() * 8, '\0');
  std::memcpy(raw.data(), v.data(), raw.size());
  t.set_raw_data(raw);  // raw_data, as most exporters write it
  return t;
}

// Attributes as the exporter builds them.
using onnx_internal::MakeFloatAttribute;
using onnx_internal::MakeIntAttribute;
using onnx_internal::MakeIntsAttribute;

inline onnx::NodeProto MakeNode(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
                         const std::vector<onnx::AttributeProto>& attrs = {}, const std::string& name = "") {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name.empty() ? op + "_" + out[0] : name);
  for (const auto& i : in) n.add_input(i);
  for (const auto& o : out) n.add_output(o);
  for (const auto& a : attrs) *n.add_attribute() = a;
  return n;
}

struct ModelSpec {
  int opset = 13;
  int64_t ir_version = 7;
  std::vector<onnx::NodeProto> nodes;
  std::vector<onnx::ValueInfoProto> inputs, outputs;
  std::vector<onnx::TensorProto> initializers;
  std::vector<std::pair<std::string, int>> extra_opsets;
};

inline onnx::ModelProto BuildProto(const ModelSpec& spec) {
  onnx::ModelProto m;
  m.set_ir_version(spec.ir_version);
  m.set_producer_name("onnx_test");
  m.set_doc_string("a test model");
  auto* prop = m.add_metadata_props();
  prop->set_key("origin");
  prop->set_value("hand-built");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(spec.opset);
  for (const auto& [domain, version] : spec.extra_opsets) {
    auto* o = m.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }
  auto* g = m.mutable_graph();
  g->set_name("test_graph");
  for (const auto& n : spec.nodes) *g->add_node() = n;
  for (const auto& v : spec.inputs) *g->add_input() = v;
  for (const auto& v : spec.outputs) *g->add_output() = v;
  for (const auto& t : spec.initializers) *g->add_initializer() = t;
  return m;
}

inline std::string Build(const ModelSpec& spec) { return BuildProto(spec).SerializeAsString(); }

}  // namespace taso::onnx_test

#endif  // TASO_ONNX_IO_ONNX_TEST_BUILDERS_H_
