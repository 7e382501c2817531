// TASO's generator spec (its generator.cc at HEAD), written in our format.
// Differences, on purpose: its three 3x1 weights were named "w10", "w12",
// "w12" (a typo); here they are w10, w11, w12. Its six conv templates differ
// only in kernel size, which our conv2d takes from the weight, so they are two
// here (activation none and relu) limited to TASO's kernels; its four concats
// differ in rank and axis, and ours take the rank from the operands, so they
// are two (axis 0 and 1), with TASO's unordered operands (one order, chosen
// so that renamings stay enumerated: enumerator.h). Size 1 gives TASO's 228
// graphs plus the second order of 36 concats of interchangeable tensors; the
// generator's own differences are in enumerator.h.
#include "records/spec.h"

namespace taso::records {

const std::string& DefaultSpecText() {
  static const std::string* text = new std::string(R"pb(
version: 1
max_ops: 3
seed: 1
inputs { name: "x1" dims: [2, 4] }
inputs { name: "x2" dims: [2, 4] }
inputs { name: "x3" dims: [2, 4] }
constants { name: "w1" dims: [4, 4] }
constants { name: "w2" dims: [4, 4] }
constants { name: "w3" dims: [4, 4] }
inputs { name: "i1" dims: [2, 4, 5, 5] }
inputs { name: "i2" dims: [2, 4, 5, 5] }
inputs { name: "i3" dims: [2, 4, 5, 5] }
constants { name: "w4" dims: [4, 4, 3, 3] }
constants { name: "w5" dims: [4, 4, 3, 3] }
constants { name: "w6" dims: [4, 4, 3, 3] }
constants { name: "w7" dims: [4, 4, 1, 3] }
constants { name: "w8" dims: [4, 4, 1, 3] }
constants { name: "w9" dims: [4, 4, 1, 3] }
constants { name: "w10" dims: [4, 4, 3, 1] }
constants { name: "w11" dims: [4, 4, 3, 1] }
constants { name: "w12" dims: [4, 4, 3, 1] }
constants { name: "w13" dims: [4, 1, 3, 3] }
inputs { name: "s0" dims: [] }

operators { kind: OP_MATMUL }
operators { kind: OP_EW_ADD }
operators { kind: OP_EW_MUL }
operators {
  kind: OP_CONV2D
  params { conv2d { padding: PADDING_SAME activation: ACTIVATION_NONE } }
  params { conv2d { padding: PADDING_SAME activation: ACTIVATION_RELU } }
  kernels { height: 3 width: 3 }
  kernels { height: 1 width: 1 }
  kernels { height: 1 width: 3 }
}
operators {
  kind: OP_POOL_AVG
  params { pool { kernel_h: 3 kernel_w: 3 padding: PADDING_SAME } }
}
operators {
  kind: OP_POOL_MAX
  params { pool { kernel_h: 3 kernel_w: 3 padding: PADDING_SAME } }
}
operators { kind: OP_CONST_POOL params { constant { shape: [4, 1, 3, 3] } } }
operators { kind: OP_CONST_ICONV params { constant { shape: [4, 4, 3, 3] } } }
operators { kind: OP_CONST_IMATMUL params { constant { shape: [4, 4] } } }
operators { kind: OP_CONST_ONES params { constant { shape: [2, 4, 5, 5] } } }
operators { kind: OP_ENLARGE params { enlarge { kernel_h: 3 kernel_w: 3 } } }
operators { kind: OP_SCALAR_MUL }
operators { kind: OP_RELU }
operators {
  kind: OP_CONCAT
  params { concat { axis: 0 } }
  params { concat { axis: 1 } }
  unordered_operands: true
}
operators {
  kind: OP_SPLIT
  params { split { axis: 0 } }
  params { split { axis: 1 } }
}
operators {
  kind: OP_TRANSPOSE
  params { transpose { perm: [1, 0] } }
  params { transpose { perm: [1, 0] strides_only: true } }
}
)pb");
  return *text;
}

Spec DefaultSpec() {
  // The embedded text is covered by spec_test; failing here is a build bug.
  return *ParseSpecText(DefaultSpecText(), "default spec");
}

}  // namespace taso::records
