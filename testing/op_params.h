// Operator parameters as tests write them: the few fields a test cares about,
// the rest at their defaults.
#ifndef TASO_TESTING_OP_PARAMS_H_
#define TASO_TESTING_OP_PARAMS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "core/op.h"

namespace taso::testing {

// Default parameters with one field set: With(&OpParams::groups, 2).
template <typename Field, typename Value>
OpParams With(Field OpParams::*field, Value value) {
  OpParams p;
  p.*field = std::move(value);
  return p;
}

// concat / split axis.
OpParams Axis(int axis);
// The fused activation of conv2d / matmul.
OpParams WithActivation(Activation activation);
// transpose; shuffle false keeps the data and permutes the strides only.
OpParams Perm(std::vector<int> perm, bool shuffle = true);
// Window or kernel size (pool, enlarge, const_pool, const_iconv).
OpParams Kernel(int kernel_h, int kernel_w);
// reshape's target, or a constant operator's output shape.
OpParams ShapeParam(std::vector<int64_t> shape);
// conv2d with the same stride in both dimensions.
OpParams ConvParams(int stride, Padding padding, Activation activation = Activation::kNone);
// poolavg / poolmax with the same stride in both dimensions.
OpParams Window(int kernel_h, int kernel_w, int stride, Padding padding);

}  // namespace taso::testing

#endif  // TASO_TESTING_OP_PARAMS_H_
