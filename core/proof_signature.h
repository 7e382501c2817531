// How a proof names an operator application: a function name and its integer
// parameters. Shape facts that laws depend on are part of it: a convolution's
// group count, a matmul's rank (laws are for rank 2), whether an element-wise
// operator broadcasts (laws are for equal shapes), whether a concat joins two
// halves of equal shape (the grouped-convolution law needs it), and a scalar
// times a scalar is an element-wise product.
//
// Two applications with the same signature are the same function to Z3. That
// is what makes a proof portable: a rule proved on the generator's shapes
// holds on any host tensors where every operator keeps the signature it had in
// the proof (side_conditions.h), and it is what makes pruning by structure
// sound. No Z3 here: the verifier builds terms from these, the optimizer checks
// them on host graphs.
#ifndef TASO_CORE_PROOF_SIGNATURE_H_
#define TASO_CORE_PROOF_SIGNATURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/op.h"
#include "core/tensor_type.h"

namespace taso {

// Bumped whenever a signature's meaning changes, so conditions recorded under
// another vocabulary are recognised and not trusted. 2: concat records
// whether its halves have equal shapes.
inline constexpr int kProofSignatureVersion = 2;

// Integer encodings of parameters that are not plain integers.
inline constexpr int kPadSame = 0;
inline constexpr int kPadValid = 1;
inline constexpr int kActNone = 0;
inline constexpr int kActRelu = 1;
// A transpose permutation as one integer: rank*10000 + digits of the perm in
// base rank, so (1,0) is 20002 and ranks cannot collide.
int64_t PermutationCode(const std::vector<int>& perm);

struct ProofSignature {
  std::string name;
  std::vector<int64_t> params;

  bool operator==(const ProofSignature& o) const { return name == o.name && params == o.params; }
  bool operator!=(const ProofSignature& o) const { return !(*this == o); }
  std::string ToString() const;  // "conv2d(1,1,0,0,1)"
};

// The signature of operator `kind`'s output `output` on operands of types
// `inputs`, or Unimplemented for operators the axioms do not model. A concat
// of more than two operands has no single signature: see NodeSignatures.
absl::StatusOr<ProofSignature> ProofSignatureOf(OpKind kind, const OpParams& params,
                                                const std::vector<TensorType>& inputs, int output);

// Every signature one node stands for in a proof: one per output, except an
// n-ary concat, which nests to the left as its split tree records
// (concat(concat(a,b),c)) and has one signature per nesting, innermost first.
absl::StatusOr<std::vector<ProofSignature>> NodeSignatures(OpKind kind, const OpParams& params,
                                                           const std::vector<TensorType>& inputs, int num_outputs);

}  // namespace taso

#endif  // TASO_CORE_PROOF_SIGNATURE_H_
