// Matching a rewrite's left side in an e-graph. A pattern node binds to an
// e-class (variables to any tensor class, whatever its shape: rules are
// shape-polymorphic); an operator pattern node matches a class holding an
// e-node of the same operation whose children match its inputs. A pattern
// output read from a multi-output operator matches through a get-item e-node.
//
// Single-output patterns are found by e-matching from every class that holds
// the root's operation. Multi-output patterns are matched one output at a
// time and the per-output matches are joined where they agree on every
// pattern node they share (the variables, and e.g. a split both outputs read).
#ifndef TASO_OPTIMIZER_EQSAT_EMATCH_H_
#define TASO_OPTIMIZER_EQSAT_EMATCH_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/eqsat/egraph.h"
#include "optimizer/rewrite/rewrite_rule.h"

namespace taso::optimizer {

// Classes by the operations of their e-nodes, built once per iteration.
class EMatchIndex {
 public:
  explicit EMatchIndex(const EGraph& egraph);
  const EGraph& egraph() const { return egraph_; }
  // Classes holding an e-node of the operation, ascending.
  const std::vector<EClassId>& classes_with(int op) const;
  // The operations some class holds, ascending.
  std::vector<int> ops() const;

 private:
  const EGraph& egraph_;
  std::map<int, std::vector<EClassId>> by_op_;
  std::vector<EClassId> empty_;
};

// A rule's left side prepared for one e-graph (its operations interned).
class CompiledPattern {
 public:
  CompiledPattern(const RewriteRule& rule, EGraph& egraph);
  const RewriteRule& rule() const { return *rule_; }
  bool multi_output() const { return rule_->lhs().outputs().size() > 1; }
  // Operation index of a pattern operator node (-1 for variables).
  int op_of(int pattern_node) const { return ops_[pattern_node]; }
  int item_op(int index) const { return item_ops_[index]; }
  bool yields_tuple(int pattern_node) const { return tuple_[pattern_node]; }
  // The operation of the first operator output's producer: every match has
  // a class holding it. -1 when no output is an operator's (no matches).
  int root_op() const { return root_op_; }

 private:
  const RewriteRule* rule_;
  std::vector<int> ops_;
  std::vector<bool> tuple_;
  std::vector<int> item_ops_;  // get-item operation of each output index used
  int root_op_ = -1;
};

// Patterns by their root operation, so that a round only searches the
// patterns whose root operation the e-graph holds (thousands of rules, few
// of which can match a given model).
class PatternIndex {
 public:
  // `patterns[i]` is pattern i; null entries are never candidates.
  explicit PatternIndex(const std::vector<const CompiledPattern*>& patterns);
  // Indices of the patterns whose root operation some class holds, ascending.
  std::vector<int> Candidates(const EMatchIndex& index) const;

 private:
  std::map<int, std::vector<int>> by_root_op_;
};

struct EMatch {
  std::vector<EClassId> outputs;            // class each lhs output matched, in order
  std::map<std::string, EClassId> binding;  // variable name -> class
  std::vector<EClassId> classes;            // class of each lhs node (a tuple class for a multi-output operator)
};

// The facts the rule's proof left open, as the matched operators bind them
// (their signatures depend only on their inputs' types, which the classes
// give); nullopt when operators the proof kept equal disagree here.
std::optional<FactBinding> MatchedFacts(const RewriteRule& rule, const EGraph& egraph, const EMatch& match);

// Distinct matches of the pattern, at most `limit`. Weight variables only
// bind constant classes; a multi-output match never sends two outputs to
// one class (that would merge nothing new). `truncated` is set when the
// limit cut the enumeration short.
std::vector<EMatch> FindEMatches(const CompiledPattern& pattern, const EMatchIndex& index, int limit,
                                 bool* truncated = nullptr);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_EQSAT_EMATCH_H_
