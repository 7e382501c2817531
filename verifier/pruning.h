// TASO's redundancy pruning (its §4), applied to proved rules only and only
// where the more general rule is itself proved. Works on IR graphs, so it
// applies to imported rules as to generated ones.
//
//   renaming: a rule equal to another up to a renaming of its variables, or
//     an instance of a more general one (variables merged: TASO's
//     non-injective renaming), or the same rule read right to left.
//   common subgraph: both sides compute the same operator on the same
//     variables; with that operator's output made a fresh variable the pair
//     is a smaller proved rule.
//   common supergraph: both sides end in the same operator with the same
//     operands but one, and the differing operands are a smaller proved rule.
//
// A rule is matched against known ones two ways: by its structure with
// variables named by first occurrence and operators written as their Z3
// signature (equal structure is an equal proof; a merged-variable pattern is
// an instance), and by name, up to renaming variables of equal type, through
// a union-find of the sides of proved rules (so equalities compose).
#ifndef TASO_VERIFIER_PRUNING_H_
#define TASO_VERIFIER_PRUNING_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/rule_form.h"
#include "proto/rules.pb.h"
#include "records/reduction_table.h"

namespace taso::verifier {

// The table lives below the stages (records/reduction_table.h), so a store
// and the cluster client can hold it without including the verifier.
using records::PruneReason;
using records::ReductionTable;

// Marks redundant PROVED rules in `rules` as PRUNED, with status_detail
// naming the reason and the rule (by id) that implies them. Rules are taken
// smallest first; ties keep the first in the given order. Rules with other
// statuses are left alone and never used as the general rule. Rules whose
// graphs do not decode are left alone.
ReductionTable PruneRules(std::vector<rules::Rule>& rules);

// Where a proved rule comes in pruning order.
struct PruneOrderKey {
  bool decodes = false;  // rules whose graphs do not decode are left alone
  int size = 0;          // operators in its larger side
  int distinct_variables = 0;
};
// Whether `x` is pruned before `y`: smaller first, then more general (more
// distinct variables). Neither: the callers' order decides (id order).
bool PrunedBefore(const PruneOrderKey& x, const PruneOrderKey& y);

struct PruneVerdict {
  PruneReason reason;
  std::string detail;  // the status_detail: the reason and the rule(s) implying it
};

// What judging a rule needs that does not depend on the rules judged before
// it: its graphs decoded, its form and its sides' keys. Independent per rule
// and most of the work, so callers prepare rules on other threads while one
// thread judges them in order.
struct PreparedRule {
  std::optional<DecodedRule> decoded;  // nullopt: the graphs do not decode
  Form form;                           // MakeForm of the rule as written
  Hash128 source_side, target_side;    // its sides by name, as the union-find keys them
};
PreparedRule PrepareRule(const rules::Rule& rule);

// PruneRules one rule at a time, for callers that cannot hold every rule
// (verifier/streaming_pruning.h). What it keeps per rule seen is compact
// (hashes of its sides and skeleton, an id): about 200 bytes.
//   1. Survey every proved rule once, in any order (variable names by type,
//      which renamings range over; the rule's place in the order), then Seal.
//   2. Judge the decoding ones in pruning order (PrunedBefore, ties in id
//      order); a resumed run Learns the ones it judged before instead.
class PruneEngine {
 public:
  PruneEngine();
  ~PruneEngine();
  PruneEngine(const PruneEngine&) = delete;
  PruneEngine& operator=(const PruneEngine&) = delete;

  PruneOrderKey Survey(const rules::Rule& rule);
  void Seal();
  // Why `rule` is redundant given the rules judged or learned before it, if
  // it is; it is learned either way.
  std::optional<PruneVerdict> Judge(const rules::Rule& rule);
  // The same, from the rule's graphs decoded already (DecodeRule(rule)), or
  // the rule prepared already (PrepareRule(rule)).
  PruneOrderKey Survey(const std::optional<DecodedRule>& decoded);
  std::optional<PruneVerdict> Judge(const rules::Rule& rule, const PreparedRule& prepared);
  // Learns `rule` as Judge would, without judging it (a resumed run's rules
  // judged before).
  void Learn(const rules::Rule& rule);
  void Learn(const rules::Rule& rule, const PreparedRule& prepared);
  // What the known rules take in memory, roughly.
  int64_t ApproxBytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The renaming-invariant key of a rule (both directions give the same key);
// empty if the graphs do not decode.
std::string RuleRenamingKey(const rules::Rule& rule);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_PRUNING_H_
