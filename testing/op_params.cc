#include "testing/op_params.h"

#include <utility>

namespace taso::testing {

OpParams Axis(int axis) { return With(&OpParams::axis, axis); }

OpParams WithActivation(Activation activation) { return With(&OpParams::activation, activation); }

OpParams Perm(std::vector<int> perm, bool shuffle) {
  OpParams p = With(&OpParams::perm, std::move(perm));
  p.shuffle = shuffle;
  return p;
}

OpParams Kernel(int kernel_h, int kernel_w) {
  OpParams p = With(&OpParams::kernel_h, kernel_h);
  p.kernel_w = kernel_w;
  return p;
}

OpParams ShapeParam(std::vector<int64_t> shape) { return With(&OpParams::shape, std::move(shape)); }

OpParams ConvParams(int stride, Padding padding, Activation activation) {
  OpParams p = WithActivation(activation);
  p.stride_h = p.stride_w = stride;
  p.padding = padding;
  return p;
}

OpParams Window(int kernel_h, int kernel_w, int stride, Padding padding) {
  OpParams p = Kernel(kernel_h, kernel_w);
  p.stride_h = p.stride_w = stride;
  p.padding = padding;
  return p;
}

}  // namespace taso::testing
