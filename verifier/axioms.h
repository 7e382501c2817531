// The operator axioms every proof starts from: TASO's set (taso-facts.md
// §3.2) with its two known-wrong laws left out and its shape blind spots
// closed by parameters. Each axiom is a universally quantified equation over
// the vocabulary of symbols.h, true for every well-typed instance; an
// ill-typed application (shapes that do not fit) denotes an unspecified
// tensor, which is why the facts a law depends on (convolution groups,
// strides, kernel sizes, matmul rank) are function parameters rather than
// assumptions.
//
// Differences from TASO's list, on purpose:
//   - concat associativity and the grouped-conv concat law stay out (false:
//     the first changes the split tree, the second needs equal shapes); the
//     second is in, in the form whose signature says the halves are equal:
//     two dense convolutions side by side are one with two groups.
//   - convolution carries its group count: the channel-concat laws hold only
//     for dense convolutions (groups = 1) and say so.
//   - the enlarge law needs stride 1 (SAME padding of a larger kernel shifts
//     the window otherwise).
//   - "avg_pool(const_iconv) = const_pool" is a shape error in TASO (a CxC
//     weight against a Cx1 one); it is stated per layout instead.
//   - relu folds into matmul as into conv; TASO's three lemmas are axioms.
//   - laws TASO reached only through transposes or lacked: matmul distributes
//     over ewadd and row-concat on the left, scalars move through matmul's
//     left operand and average pooling, average pooling is additive.
//   - what the constants' values give, where generated pairs needed it: the
//     identity matrix and kernel are 0/1 and diagonal, max pooling keeps a
//     uniform constant and commutes with adding one, and the identity kernel
//     fed to a convolution as data only moves the weight's entries.
#ifndef TASO_VERIFIER_AXIOMS_H_
#define TASO_VERIFIER_AXIOMS_H_

#include <set>
#include <string>
#include <vector>

#include "verifier/symbols.h"
#include "z3++.h"

namespace taso::verifier {

struct AxiomInfo {
  std::string name;         // stable: stored in proofs' axioms_used
  std::string description;  // the law in the notation of taso-facts.md
};

// The axiom list, in a fixed order.
const std::vector<AxiomInfo>& AxiomList();
// A hash of the list (names and descriptions): proofs record it, so proofs
// made under another axiom set can be found and redone.
std::string AxiomSetVersion();

// Which terms instantiate an axiom during a proof: its E-matching patterns.
// A proof starts from well-typed terms and stays among them only if every
// instance whose pattern matches a well-typed term has both sides well-typed;
// otherwise it equates a real tensor with an unspecified one, which other laws
// can turn into a false equation between real tensors (matmul_concat_sum, read
// right to left with halves of any shape, did). A law is therefore only used
// from a side whose typing implies the other's; axiom validation checks it.
enum class Fires {
  kFromEitherSide,  // from each side that binds every variable
  kFromLeft,        // only where the left side is in the proof: rewrites left to right
  kFromRight,       // only where the right side is
};

// The smallest subterms of lhs or rhs that mention every one of `vars` (and
// are applications): what an E-matching instance can start from.
std::vector<z3::expr> MinimalTriggers(const std::vector<z3::expr>& vars, const z3::expr& lhs, const z3::expr& rhs);

struct BuiltAxiom {
  AxiomInfo info;
  // Quantified with explicit patterns (Fires), so the prover and axiom
  // validation read the same triggers.
  z3::expr formula;
  std::set<std::string> functions;  // function names the formula uses
};

// Builds every axiom (or those named in `only`, if non-empty) in `symbols`'
// context. Unknown names in `only` are an InvalidArgument error. `skip`
// leaves axioms out (the redundancy check, tests of wrong axioms).
absl::StatusOr<std::vector<BuiltAxiom>> BuildAxioms(Symbols& symbols, const std::set<std::string>& only = {},
                                                     const std::set<std::string>& skip = {});

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_AXIOMS_H_
