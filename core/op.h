// Operator kinds and their typed parameters. The numbering of OpKind,
// Activation and Padding matches proto/ir.proto.
#ifndef TASO_CORE_OP_H_
#define TASO_CORE_OP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/hash.h"
#include "core/tensor_type.h"

namespace taso {

enum class OpKind {
  kInput = 1,
  kWeight = 2,
  kEwAdd = 3,
  kEwMul = 4,
  kScalarMul = 5,
  kTranspose = 6,
  kMatMul = 7,
  kConv2D = 8,
  kEnlarge = 9,
  kRelu = 10,
  kTanh = 11,
  kSigmoid = 12,
  kPoolAvg = 13,
  kPoolMax = 14,
  kConcat = 15,
  kSplit = 16,
  kReshape = 17,
  kMergeGConv = 18,
  kConstPool = 19,
  kConstIConv = 20,
  kConstIMatMul = 21,
  kConstOnes = 22,
  kBatchNorm = 23,
  kOpaque = 24,
  // A runtime's fused kernel: act(a·b + c) (ONNX Runtime's FusedGemm). Its
  // meaning is its decomposition (core/decomposition.h).
  kFusedGemm = 25,
};
// The highest OpKind (range checks on numbers read from files and protos).
inline constexpr OpKind kLastOpKind = OpKind::kFusedGemm;

enum class Activation { kNone = 0, kRelu = 1, kSigmoid = 2, kTanh = 3 };
// SAME pads so that out = ceil(in / stride), the smaller half before (ONNX's
// SAME_UPPER, TASO's SAME); VALID pads nothing; EXPLICIT gives each side's
// padding in OpParams::pads, as ONNX models usually do. Importers turn explicit
// padding that computes the same as SAME or VALID into those, so rules (which
// only know SAME and VALID) still match.
enum class Padding { kSame = 0, kValid = 1, kExplicit = 2 };

const char* ActivationName(Activation a);
const char* PaddingName(Padding p);

// An operator the IR does not model (kept verbatim from ONNX).
struct OpaqueInfo {
  // input_slots and output_slots entries that are not IR inputs or outputs.
  static constexpr int kOmitted = -1;        // an optional input or output the node leaves out
  static constexpr int kSideConstant = -2;   // an input the IR cannot hold (a double or string constant)

  std::string op_type;
  std::string domain;
  // (attribute name, serialized onnx.AttributeProto), kept verbatim.
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<TensorType> output_types;
  // The version of the domain's operator set the model imports; 0 unknown.
  int64_t opset = 0;
  // Where the IR's inputs and outputs sit among the ONNX node's: slot i holds
  // IR input (output) input_slots[i] (output_slots[i]), or kOmitted, or
  // kSideConstant. Empty means the IR's in order, with no gaps. Together
  // with the above they let a runtime run the operator alone, as the model
  // does (profiler/ort/ort_opaque_model.h).
  std::vector<int> input_slots;
  std::vector<int> output_slots;
};

// Parameters of every operator kind in one plain struct. Each kind reads only
// the fields listed for it in op_registry.cc; the others keep their defaults
// and take no part in equality, hashing or serialization.
struct OpParams {
  int stride_h = 1;                          // conv2d, pool
  int stride_w = 1;                          // conv2d, pool
  Padding padding = Padding::kSame;          // conv2d, pool
  std::vector<int> pads;                     // conv2d, pool with kExplicit: {top, left, bottom, right} (ONNX order)
  Activation activation = Activation::kNone; // conv2d, matmul, fused_gemm
  int kernel_h = 0;                          // pool, enlarge, const_pool, const_iconv
  int kernel_w = 0;                          // pool, enlarge, const_pool, const_iconv
  bool count_include_pad = true;             // pool avg: divide by the full window
  std::vector<int> perm;                     // transpose
  bool shuffle = true;                       // transpose: row-major copy vs strides only
  int axis = 0;                              // concat, split
  std::vector<int64_t> sizes;                // split: explicit part sizes (empty: 2-way at the concat point)
  std::vector<int64_t> shape;                // reshape target; constants' output shape
  int groups = 1;                            // merge_gconv: groups of the conv the weight serves
  int count = 2;                             // merge_gconv: groups merged into one
  float epsilon = 1e-5f;                     // batchnorm
  OpaqueInfo opaque;                         // opaque
};

// Stable lower-case name, as used in rules and s-expressions ("conv2d", "ewadd").
const char* OpKindName(OpKind kind);
std::optional<OpKind> OpKindFromName(const std::string& name);
std::vector<OpKind> AllOpKinds();

// The parameters that matter for `kind`, as a canonical string
// ("stride=1x1,pad=same,act=relu"); equal iff the operators compute the same.
std::string CanonicalParams(OpKind kind, const OpParams& params);
// "conv2d[stride=1x1,pad=same,act=relu]", or just "relu" without parameters.
std::string OpLabel(OpKind kind, const OpParams& params);
void HashParams(OpKind kind, const OpParams& params, Hasher& h);
bool ParamsEqual(OpKind kind, const OpParams& a, const OpParams& b);

// The constant kinds (const_pool, const_iconv, const_imatmul, const_ones):
// no operands, a shape parameter, no work at run time (materialised once
// when a model is loaded, like weights).
bool IsLoadTimeConstant(OpKind kind);

// Binary operators whose two operands may be exchanged: element-wise sums and
// products (IEEE addition and multiplication commute, broadcasting included).
// The generator enumerates their operands in one order, so rules are written
// in that order; matching reads them either way.
bool OperandsCommute(OpKind kind);

}  // namespace taso

#endif  // TASO_CORE_OP_H_
