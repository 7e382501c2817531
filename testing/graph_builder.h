// Builds a test graph in few words: tensors by name, operators whose failure
// is a test failure rather than a status to unpack.
#ifndef TASO_TESTING_GRAPH_BUILDER_H_
#define TASO_TESTING_GRAPH_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"

namespace taso::testing {

class GraphBuilder {
 public:
  // A float32 row-major input / weight.
  TensorRef In(const std::string& name, std::vector<int64_t> dims);
  TensorRef W(const std::string& name, std::vector<int64_t> dims);
  // The operator's only output; on error a gtest failure and TensorRef{}.
  TensorRef Op(OpKind kind, std::vector<TensorRef> inputs, OpParams params = {});
  // Every output of the operator; on error a gtest failure and none.
  std::vector<TensorRef> OpN(OpKind kind, std::vector<TensorRef> inputs, OpParams params = {});
  // Adds `t` as the next output, named out0, out1, ...
  GraphBuilder& Out(TensorRef t);

  Graph graph;
};

}  // namespace taso::testing

#endif  // TASO_TESTING_GRAPH_BUILDER_H_
