#include "testing/graph_builder.h"

#include <utility>

#include "gtest/gtest.h"
#include "testing/tensor_types.h"

namespace taso::testing {

TensorRef GraphBuilder::In(const std::string& name, std::vector<int64_t> dims) {
  return graph.AddInput(name, F32(std::move(dims)));
}

TensorRef GraphBuilder::W(const std::string& name, std::vector<int64_t> dims) {
  return graph.AddWeight(name, F32(std::move(dims)));
}

TensorRef GraphBuilder::Op(OpKind kind, std::vector<TensorRef> inputs, OpParams params) {
  auto r = graph.AddOp1(kind, params, inputs);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : TensorRef{};
}

std::vector<TensorRef> GraphBuilder::OpN(OpKind kind, std::vector<TensorRef> inputs, OpParams params) {
  auto r = graph.AddOp(kind, params, inputs);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<TensorRef>{};
}

GraphBuilder& GraphBuilder::Out(TensorRef t) {
  graph.AddOutput("out" + std::to_string(graph.outputs().size()), t);
  return *this;
}

}  // namespace taso::testing
