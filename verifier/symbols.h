// The Z3 vocabulary the verifier reasons in: one uninterpreted sort for every
// tensor, integer parameters, and one function per (operator, output index).
// Shapes are not part of the sort; where a law depends on them it carries the
// parameter that matters (kernel sizes, strides, axes) instead.
//
// The z3 C++ API throws z3::exception; nothing here lets one escape: term
// building returns absl::Status for operators the model does not cover.
#ifndef TASO_VERIFIER_SYMBOLS_H_
#define TASO_VERIFIER_SYMBOLS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/op.h"
#include "core/proof_signature.h"
#include "core/side_conditions.h"
#include "z3++.h"

namespace taso::verifier {

class Symbols {
 public:
  explicit Symbols(z3::context& ctx);

  z3::context& ctx() { return ctx_; }
  const z3::sort& tensor() const { return tensor_; }

  // `name` applied to integer `params` then tensor `args`. The function is
  // declared on first use with that arity; asking for the same name with a
  // different arity is a programming error and throws.
  z3::expr Apply(const std::string& name, const std::vector<z3::expr>& params,
                 const std::vector<z3::expr>& args);

  // A free tensor variable of a rule (graph input or weight), by name.
  z3::expr Variable(const std::string& name);

  // A prefix for names no other call returns.
  std::string FreshPrefix(const std::string& stem);

  // Parses SMT-LIB2 assertions over this vocabulary: the tensor sort "T" and
  // every function declared so far. Throws z3::exception on bad text.
  z3::expr_vector ParseSmt2(const std::string& text);

  // Names of every function applied so far (for relevance filtering).
  const std::map<std::string, z3::func_decl>& functions() const { return functions_; }

 private:
  z3::context& ctx_;
  z3::sort tensor_;
  std::map<std::string, z3::func_decl> functions_;
  std::map<std::string, z3::expr> variables_;
  int fresh_ = 0;
};

// The outputs of `graph` as terms. Graph inputs and weights become variables
// named after the node, so two graphs over the same names share them.
// `used_functions`, if given, collects the function names the terms use;
// `conditions`, if given, receives the signature every node stood for (the
// facts a proof over these terms assumes: side_conditions.h).
//
// `open`, if given, leaves shape facts open: each fact it names becomes an
// integer constant, one per (function, value) across every graph built with
// the same scope, and a fact variable in the conditions. A proof over such
// terms holds whatever those values are, as long as facts equal here stay
// equal, which is what the shared variable records.
struct OpenFactScope {
  OpenFacts which = OpenFacts::kNone;
  std::string prefix;                                   // of the constants' names
  FactVariables vars;
};
absl::StatusOr<std::vector<z3::expr>> GraphTerms(Symbols& symbols, const Graph& graph,
                                                 std::set<std::string>* used_functions = nullptr,
                                                 GraphConditions* conditions = nullptr,
                                                 OpenFactScope* open = nullptr);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_SYMBOLS_H_
