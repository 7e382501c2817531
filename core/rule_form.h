// A rule's form: its structure with variables written as "$", operators as
// the proof signatures Z3 sees (proof_signature.h), and the variables'
// pattern of first occurrences. Two rules with one form are the same law up
// to a renaming of their variables: the same proof problem with other names.
// Pruning matches proved rules by it (verifier/pruning.h), and the rule store
// proves a class of candidate pairs once per form (verifier/renaming_proof.h).
#ifndef TASO_CORE_RULE_FORM_H_
#define TASO_CORE_RULE_FORM_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "proto/rules.pb.h"

namespace taso {

// Nodes of one side replaced by a variable (pruning's common-subgraph
// reduction): node id -> placeholder variable name.
using FormSubstitution = std::map<int, std::string>;
// Variable name -> the name it is written as.
using VariableRenaming = std::map<std::string, std::string>;

// Two sides of an equation: roots of graph a equal roots of graph b.
struct PairView {
  const Graph* a;
  std::vector<TensorRef> ra;
  FormSubstitution sa;
  const Graph* b;
  std::vector<TensorRef> rb;
  FormSubstitution sb;
  PairView Reversed() const { return PairView{b, rb, sb, a, ra, sa}; }
};

struct Form {
  // Both sides, "=>" between them; a law holds whatever the shapes its
  // operators' signatures admit, so variables are only "$".
  std::string skeleton;
  std::vector<std::string> occurrences;      // variables in the order met
  std::map<std::string, std::string> groups;  // variable -> its type group, "[2,3]"
  std::vector<int> pattern;  // occurrence -> index of its variable's first occurrence
  // The operator nodes of each side in the order the skeleton writes them:
  // two pairs with one skeleton correspond node for node in this order.
  std::vector<int> emitted_a, emitted_b;
};

Form MakeForm(const PairView& p);

// MakeForm(p).groups without writing the form: the variables reached from
// the roots, by name, with their type groups. Pruning's first pass needs
// only these, and the skeleton's signatures were most of its cost.
std::map<std::string, std::string> VariableGroups(const PairView& p);

// One side as text with variables by (renamed) name; equal texts are equal
// computations.
std::string SideText(const Graph& g, const std::vector<TensorRef>& roots, const FormSubstitution& subst,
                     const VariableRenaming& rename);

// The form as one string: skeleton and pattern.
std::string FormKey(const Form& form);

// A rule's two graphs and its output pairs as roots on each side.
struct DecodedRule {
  Graph source, target;
  std::vector<TensorRef> source_roots, target_roots;  // in output-pair order
  int size = 0;  // operators in the larger side
  PairView View() const { return PairView{&source, source_roots, {}, &target, target_roots, {}}; }
};

// nullopt if a graph does not decode or an output pair names no output.
std::optional<DecodedRule> DecodeRule(const rules::Rule& rule);
// The same from graphs at hand and their (source output, target output)
// pairs: nullopt if a pair names no output or there is none.
std::optional<DecodedRule> DecodedFromGraphs(Graph source, Graph target,
                                             const std::vector<std::pair<int, int>>& outputs);

// Pruning's common-subgraph reductions of a pair (whose sa and sb are empty):
// for each operator on variables only that side a computes and side b
// computes too (the same operator, parameters and variables, one output),
// the pair with both made the one variable kCommonSubgraphVariable. When
// the reduction is a proved rule, the pair follows from it: the variable set
// to that operator's output.
inline constexpr char kCommonSubgraphVariable[] = "$common";
std::vector<PairView> CommonSubgraphReductions(const PairView& p);
// The pair without its output pairs whose two sides compute the same thing
// (the same text); nullopt if none does, or all do.
std::optional<PairView> DropIdenticalOutputs(const PairView& p);
// The smaller pairs a pair follows from, in the order pruning tries them:
// the pair without its identical outputs, then each common-subgraph
// reduction, and it without its identical outputs.
std::vector<PairView> SmallerRuleReductions(const PairView& p);
// Pruning's common-supergraph reduction of a pair (whose sa and sb are
// empty): with single outputs ending in the same operator whose operands are
// the same variables but for one, those two differing operands; nullopt if
// the pair is not of that shape.
std::optional<PairView> CommonSupergraphReduction(const PairView& p);
// The smaller pairs whose proof proves this one: SmallerRuleReductions, then
// the common-supergraph reduction.
std::vector<PairView> SmallerRulesImplying(const PairView& p);

// The renaming-invariant key of a pair: the smaller FormKey of its two
// directions, so a rule read right to left has the same key.
std::string RenamingKey(const PairView& p);
// RenamingKey, and the FormKey of the pair read the other way (the larger).
std::pair<std::string, std::string> RenamingKeyAndReversed(const PairView& p);

// Whether `specific` is `general` with some of its variables merged: the same
// skeleton, and every two occurrences of one variable of `general` are
// occurrences of one variable of `specific`. Then `specific`'s query is
// `general`'s with variables set equal, so a proof of `general` (whatever the
// values) is one of `specific`. Like a renaming, a merge may join variables
// of other type groups: the skeleton's signatures carry the shape facts a
// proof uses. A form is an instance of itself.
bool IsInstanceOf(const Form& specific, const Form& general);
// The same for two variable patterns of one skeleton (Form::pattern, or
// their characters: one occurrence each).
template <typename Pattern>
bool PatternIsInstanceOf(const Pattern& specific, const Pattern& general) {
  if (specific.size() != general.size()) return false;
  std::map<int, int> merged_into;  // general's variable -> specific's
  for (size_t i = 0; i < general.size(); ++i) {
    auto [it, inserted] = merged_into.emplace(static_cast<int>(general[i]), static_cast<int>(specific[i]));
    if (!inserted && it->second != static_cast<int>(specific[i])) return false;
  }
  return true;
}
// A pattern as bytes, one per occurrence (rules have far fewer than 256
// variable occurrences), for keeping millions of them.
std::string PackPattern(const std::vector<int>& pattern);
// A FormKey's skeleton and pattern; false if `key` is not one.
bool SplitFormKey(const std::string& key, std::string* skeleton, std::vector<int>* pattern);

}  // namespace taso

#endif  // TASO_CORE_RULE_FORM_H_
