// Proves that two graphs compute equal outputs from the operator axioms:
// for the mapped outputs (s_i, t_i), axioms ∧ (s_1≠t_1 ∨ ... ∨ s_n≠t_n) must
// be unsat. Every axiom is asserted behind its own Boolean guard, so the
// unsat core names the axioms the proof used.
//
// A Prover owns a Z3 context and is not thread-safe: give each worker thread
// its own. Queries are bounded by a resource limit (deterministic across
// machines) and a wall-clock timeout (a backstop: Z3 does not check it
// everywhere during quantifier instantiation).
#ifndef TASO_VERIFIER_PROVER_H_
#define TASO_VERIFIER_PROVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/side_conditions.h"

namespace taso::verifier {

enum class ProofOutcome {
  kProved,   // unsat: the axioms entail the equality
  kRefuted,  // sat: Z3 found a model of the axioms where the outputs differ
  kTimeout,  // resource limit or wall-clock timeout
  kUnknown,  // Z3 gave up (incomplete quantifier reasoning)
};
const char* ProofOutcomeName(ProofOutcome outcome);

// The solver as proofs record it ("z3 4.8.12"): proofs are only comparable
// under the same one.
const char* SolverName();

struct ProofResult {
  ProofOutcome outcome = ProofOutcome::kUnknown;
  std::vector<std::string> axioms_used;  // sorted; PROVED only
  double seconds = 0;
  std::string detail;  // Z3's reason when not proved; the attempts made
  // The signature every operator of both sides stood for: what the proof
  // assumed about shapes, and where it holds.
  RuleConditions conditions;
};

struct ProverOptions {
  // Z3 resource units per query (its "rlimit"); 0: none.
  uint64_t rlimit = 20'000'000;
  uint32_t timeout_ms = 10'000;
  // Try first with only the axioms whose operators all occur in the pair,
  // under `relevant_rlimit`, then, if that fails, with every axiom.
  bool relevance_filter = true;
  uint64_t relevant_rlimit = 2'000'000;
  // Model-based quantifier instantiation. Proofs here come from E-matching;
  // MBQI mostly spends the budget looking for counter-models.
  bool mbqi = false;
  // Leave these axioms out entirely (redundancy checks, tests).
  std::set<std::string> skip_axioms;
  // Extra axioms, as SMT-LIB2 assertions over the vocabulary of symbols.h
  // (tests of deliberately wrong axioms). Each is named "extra<k>".
  std::vector<std::string> extra_axioms_smt2;
  // After a proof, start over with a fresh Z3 context once the process's
  // Z3 allocations exceed this many MiB (0: never). One context kept for
  // millions of queries holds on to what its heaviest queries took (a size-4
  // verifier reached 2.7 GiB); a fresh one costs a few milliseconds.
  uint64_t renew_above_mib = 512;
};

// What Z3 has allocated in this process, over every context, in MiB.
double SolverMemoryMib();

// What the first prover made in this process took in Z3 (a context with
// the axioms), in MiB; 0 before one was made.
double SolverContextMib();

// Caps what Z3 may allocate in this process, over every context and thread
// (0: no cap). A query that would pass it stops (Z3 checks the cap as it
// allocates, unlike its rlimit and timeout, which some quantifier loops do
// not check) and counts as out of budget: ProofOutcome::kTimeout, with
// "memout" in its detail; the prover then starts over with a fresh context.
// A size-4 verifier had one pair's query grow to 1.8 GiB and run for five
// minutes, three times, until the stall watchdog gave up its classes.
void SetSolverMemoryLimitMib(uint64_t mib);

class Prover {
 public:
  // ResourceExhausted when Z3 cannot start a context under the memory cap.
  static absl::StatusOr<std::unique_ptr<Prover>> Create(const ProverOptions& options = {});
  ~Prover();

  // `outputs` pairs a source output index with a target output index. The
  // graphs name their free variables (inputs and weights) the same way; a
  // name means the same tensor on both sides. InvalidArgument if an index is
  // out of range; Unimplemented if an operator has no axioms;
  // ResourceExhausted (a message starting "memout") when Z3 has no room for a
  // fresh context under the memory cap, which the next call tries again.
  //
  // A proved rule's conditions are the most general the prover could show:
  // where a proof also goes through with a concat's equal halves or a
  // convolution's group count left open, they hold fact variables instead
  // (core/proof_signature.h), so the rule applies to uneven concats or
  // grouped convolutions too, wherever facts the proof kept equal are equal.
  absl::StatusOr<ProofResult> Prove(const Graph& source, const Graph& target,
                                    const std::vector<std::pair<int, int>>& outputs);

  // Checks a proof someone else claims: one attempt with the facts `open`
  // leaves open and only the axioms named in `axioms` (the claim's unsat
  // core; an unknown name makes it UNKNOWN). A core is a small problem, so
  // this costs a fraction of Prove; what it proves is proved all the same,
  // and its conditions are derived here, from the graphs and `open`.
  absl::StatusOr<ProofResult> CheckClaim(const Graph& source, const Graph& target,
                                         const std::vector<std::pair<int, int>>& outputs, OpenFacts open,
                                         const std::vector<std::string>& axioms);

  const std::string& axiom_set_version() const;

  // How many times this prover started over with a fresh context
  // (ProverOptions::renew_above_mib).
  int64_t renewals() const { return renewals_; }
  // How many Z3 queries this prover has made (each stage of each attempt).
  int64_t queries() const { return queries_; }

  // How long the Z3 query running now has run, in seconds; 0 when none is.
  // Safe to call from another thread (a watchdog: Z3 does not check its
  // limits everywhere, so a query can run far past them).
  double SecondsInQuery() const;

 private:
  struct Impl;
  explicit Prover(std::unique_ptr<Impl> impl);
  static absl::StatusOr<std::unique_ptr<Impl>> CreateImpl(const ProverOptions& options);
  // Prove, before any renewal.
  absl::StatusOr<ProofResult> ProveGeneral(const Graph& source, const Graph& target,
                                           const std::vector<std::pair<int, int>>& outputs);
  // A fresh context when Z3's memory is above the bound, a query ran out
  // of memory, or the last renewal found no room (then impl_ is null until
  // one succeeds).
  void RenewIfLarge();
  // One proof attempt with the facts named by `open` left open: the axioms
  // in `only` when given (CheckClaim), else the relevant ones, then all.
  absl::StatusOr<ProofResult> ProveWith(const Graph& source, const Graph& target,
                                        const std::vector<std::pair<int, int>>& outputs, OpenFacts open,
                                        const std::vector<std::string>* only = nullptr);
  const ProverOptions options_;
  const std::string version_;
  std::unique_ptr<Impl> impl_;
  absl::Status no_context_;  // why the last renewal made no context
  // A query ran out of Z3's memory cap: the context is not used again.
  bool out_of_memory_ = false;
  int64_t renewals_ = 0;
  int64_t queries_ = 0;
  std::atomic<int64_t> query_started_ns_{0};  // steady clock; 0: no query running
};

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_PROVER_H_
