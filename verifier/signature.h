// How the verifier names an operator application: a function name and its
// integer parameters. Shape facts that laws depend on are part of it: a
// convolution's group count, a matmul's rank (laws are for rank 2), whether
// an element-wise operator broadcasts (laws are for equal shapes), and a
// scalar times a scalar is an element-wise product. Two applications with
// the same signature are the same function to Z3, which is also what makes
// rule pruning by structure sound (pruning.h). No Z3 here.
#ifndef TASO_VERIFIER_SIGNATURE_H_
#define TASO_VERIFIER_SIGNATURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/op.h"
#include "core/tensor_type.h"

namespace taso::verifier {

// Integer encodings of parameters that are not plain integers.
inline constexpr int kPadSame = 0;
inline constexpr int kPadValid = 1;
inline constexpr int kActNone = 0;
inline constexpr int kActRelu = 1;
// A transpose permutation as one integer: rank*10000 + digits of the perm in
// base rank, so (1,0) is 20002 and ranks cannot collide.
int64_t PermutationCode(const std::vector<int>& perm);

struct OpSignature {
  std::string name;
  std::vector<int64_t> params;
};

// The signature of operator `kind`'s output `output` on operands of types
// `inputs`, or Unimplemented for operators the axioms do not model.
absl::StatusOr<OpSignature> SignatureOf(OpKind kind, const OpParams& params, const std::vector<TensorType>& inputs,
                                        int output);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_SIGNATURE_H_
