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
#include <map>
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

// In recorded side conditions, a negative parameter is a fact variable (the
// proof held whatever its value, -1 - p numbering the variables); every real
// parameter is non-negative. A variable met twice stands for one value: the
// proof assumed those facts equal.
inline bool IsFactVariable(int64_t param) { return param < 0; }
inline int64_t FactVariable(int index) { return -1 - static_cast<int64_t>(index); }
// The values a rule's fact variables took at one match.
using FactBinding = std::map<int64_t, int64_t>;

// Shape facts a proof may not need, so the verifier tries to prove a rule
// with them left open (side_conditions.h): a concat's equal halves, a
// convolution's group count. kConcatUnequalHalves and kConcatEqualHalves open
// only the concats whose halves differ (are equal): a law stated for equal
// halves needs those closed while the others may stay open.
enum class OpenFacts { kNone, kConcatHalves, kConvGroups, kAll, kConcatUnequalHalves, kConcatEqualHalves };
// The parameter of a signature that is such a fact, or -1.
int OpenFactIndex(const std::string& name, OpenFacts facts);


struct ProofSignature {
  std::string name;
  std::vector<int64_t> params;

  bool operator==(const ProofSignature& o) const { return name == o.name && params == o.params; }
  bool operator!=(const ProofSignature& o) const { return !(*this == o); }
  // Whether `actual` is this recorded signature. A fact variable admits any
  // value when `binding` is null; otherwise its first value is bound and
  // later ones must equal it.
  bool Admits(const ProofSignature& actual, FactBinding* binding = nullptr) const;
  std::string ToString() const;  // "conv2d(1,1,0,0,1)", "concat(1,?0)"
};

// Fact variables of one rule, by (function, value): facts equal in the rule
// share one, so a proof with them open shows the law wherever they are
// equal, not only at the value they had.
using FactVariables = std::map<std::pair<std::string, int64_t>, int>;
// Whether `which` opens a fact of `sig` (one not open already).
bool OpensFact(OpenFacts which, const ProofSignature& sig);
// Replaces the fact `which` opens in `sig`, if any, by its fact variable.
void OpenFact(OpenFacts which, FactVariables& vars, ProofSignature& sig);

// Whether every recorded signature admits its actual one.
bool SignaturesAdmit(const std::vector<ProofSignature>& recorded, const std::vector<ProofSignature>& actual,
                     FactBinding* binding = nullptr);

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
