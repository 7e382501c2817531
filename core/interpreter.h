// Reference interpreters: every operator of the IR evaluated directly on
// small tensors, in two value domains over the same code.
//  - int32 with wrap-around (the generator's domain, as TASO): average pooling
//    is a window sum and C_pool is all ones, so conv(x, C_pool) equals avgpool;
//    optionally relu is replaced by the polynomial x(x+1)+1 so that it stays
//    "generic" (a relu-specific identity cannot be matched by chance).
//  - float32 (for equivalence tests): relu, tanh, sigmoid, average pooling as
//    a mean and C_pool as 1/(KH*KW).
// Values are stored in logical row-major order whatever the layout in the
// tensor type; strides only describe the layout.
#ifndef TASO_CORE_INTERPRETER_H_
#define TASO_CORE_INTERPRETER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/op.h"
#include "core/tensor_type.h"

namespace taso {

template <typename T>
struct Tensor {
  TensorType type;
  std::vector<T> data;
};
using IntTensor = Tensor<int32_t>;
using FloatTensor = Tensor<float>;

struct IntOptions {
  // TASO's substitution while fingerprinting: relu(x) := x*(x+1)+1 (wrapping).
  bool relu_as_polynomial = false;
};

// One operator on concrete inputs; output types come from shape inference.
absl::StatusOr<std::vector<IntTensor>> EvalOpInt(OpKind kind, const OpParams& params,
                                                 const std::vector<const IntTensor*>& inputs,
                                                 const IntOptions& options = {});
absl::StatusOr<std::vector<FloatTensor>> EvalOpFloat(OpKind kind, const OpParams& params,
                                                     const std::vector<const FloatTensor*>& inputs);

// A whole graph. `feeds` binds every input and weight by name (a float weight
// that carries data needs no feed). Returns the graph outputs in order.
absl::StatusOr<std::vector<IntTensor>> EvaluateInt(const Graph& graph,
                                                   const std::map<std::string, IntTensor>& feeds,
                                                   const IntOptions& options = {});
absl::StatusOr<std::vector<FloatTensor>> EvaluateFloat(const Graph& graph,
                                                       const std::map<std::string, FloatTensor>& feeds);

// Whether two float evaluations of one function agree. They differ by
// rounding, which grows with the values and with `scale`: the largest
// partial sum either side rounded, which the same element evaluated on the
// inputs' absolute values bounds (0 when not computed). Sums that cancel
// leave a small value with the rounding error of the large terms.
bool FloatsAgree(double a, double b, double tolerance, double scale = 0);
// The largest difference FloatsAgree accepts between `a` and `b`, for messages.
double FloatBound(double a, double b, double tolerance, double scale = 0);

// `feeds` with every value replaced by its absolute value: evaluated on
// them, each output element bounds the partial sums of its evaluation.
std::map<std::string, FloatTensor> AbsoluteFeeds(std::map<std::string, FloatTensor> feeds);

}  // namespace taso

#endif  // TASO_CORE_INTERPRETER_H_
