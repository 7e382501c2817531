// Tensat-style equality saturation: the input graph becomes an e-graph, every
// rewrite is applied at every match in rounds (search all rules, then apply
// all matches, then rebuild) until nothing changes or a limit is hit, and the
// cheapest program the e-graph represents is extracted (ILP with CBC, greedy
// as the fallback and CBC's cutoff).
//
// An application is skipped when its right side does not type-check on the
// bound classes' types, when it would change an output's dims or dtype, or
// when it would make a class reachable from itself through the right side's
// e-nodes (a bound class that already reaches a matched class): such e-nodes
// could never be extracted and only blow the e-graph up (Tensat's
// pre-filtering). Cycles made by unions through the pattern's own e-nodes
// stay; extraction never chooses a cyclic program.
//
// Multi-output rules match many more places (pairs of matches), so, as in
// Tensat, they only run in the first `multi_pattern_iteration_limit` rounds;
// those instantiated at the graph's own shapes (RewriteRule::
// exact_variable_types: structural merges) match few places and run in every
// round under the rule scheduler, like single-output rules.
#ifndef TASO_OPTIMIZER_EQSAT_EQSAT_H_
#define TASO_OPTIMIZER_EQSAT_EQSAT_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/graph.h"
#include "optimizer/passes/cost_model.h"
#include "optimizer/eqsat/egraph.h"
#include "optimizer/eqsat/extract.h"
#include "optimizer/search/progress.h"
#include "optimizer/search/search_control.h"
#include "optimizer/rewrite/rewrite_rule.h"
#include "optimizer/search/search_report.h"

namespace taso::optimizer {

// SearchControl's time_limit: Saturate's own; EqsatSearch's whole search's,
// shared by exploration (at most `exploration_share` of it), costing the
// e-graph's e-nodes (profiling operators the rewrites made) and extraction,
// whose ILP gets what is left (at most ilp_time_limit) if that is at least
// `ilp_min_time`; otherwise greedy's program is used and the report says so.
// `cancelled` ends exploration as the limit would; `progress` is told the
// e-graph's size after each round, and when extraction starts.
struct EqsatOptions : SearchControl {
  // Rounds: egg's default. The e-graph's room (node_limit) and the time
  // limit are what end a search of a large model; 15 rounds ended the
  // suite's transformer layer and NAS-RNN cell before either.
  int iteration_limit = 30;
  int multi_pattern_iteration_limit = 2;  // Tensat's k_multi: small, multi-output rules explode
  int node_limit = 50000;                 // e-nodes
  // Polled before each round: true ends saturation (kGoalReached), e.g. once
  // the two sides of a rule being derived share a class.
  std::function<bool(const EGraph&)> goal;
  double exploration_share = 0.5;
  // Kept for the ILP: costing stops (what is not costed is not chosen) when
  // only this share of the time limit is left.
  double ilp_share = 0.25;
  absl::Duration ilp_min_time = absl::Seconds(0.5);
  bool use_ilp = true;
  // Pruning and building the model included; CBC may overrun it by a
  // fraction of a second. Out of time, the ILP returns the best acyclic
  // choice it has, at worst greedy's.
  absl::Duration ilp_time_limit = absl::Seconds(60);
  // Larger e-graphs are extracted greedily. The pruned, tightened ILP
  // (extract.h) solves ResNet-50's and Inception-v3's ~24,000-e-node e-graphs
  // to optimality in 1-3 s with ~60 MB over the problem, and two of each at
  // once (~95,000 e-nodes, costs perturbed) in ~10-15 s with ~180 MB. The
  // model before it returned greedy's choice at 20 s, and at 60 s grew CBC
  // to 10 GB (~170 MB/s) on ResNet-50 (bench/extract_run.sh).
  int ilp_max_enodes = 60000;
  // The ILP runs in a child process whose memory may grow by at most this
  // much (IlpSettings::child_memory_mb; 0: no cap); past it the greedy
  // program is used and the report says why.
  int64_t ilp_memory_mb = IlpSettings().child_memory_mb;
  // Rule scheduling (rule_scheduler.h): each rule may have
  // `max_matches_per_rule` matches in a round at first. With the backoff
  // scheduler, a rule with more is not applied and is banned for
  // `backoff_ban_length` rounds; each ban doubles the rule's limit and its
  // next ban's length (egg's BackoffScheduler), so a few prolific rules
  // (commutativity, associativity) cannot fill the e-graph in a few rounds.
  // Multi-output rules, which only run in their first rounds, and every rule
  // without the scheduler are applied up to their limit instead, the limit
  // doubling (larger limits let multi-output rules flood the e-graph in their
  // few rounds). Saturation needs a round that changed nothing with no rule
  // banned. With the scheduler a round also adds at most half the room left
  // under node_limit (RoundRoom): rules go fewest matches first, and one that
  // would not fit applies what fits and is banned (RuleScheduler::Hold).
  bool backoff_scheduler = true;
  int max_matches_per_rule = 1000;
  int backoff_ban_length = 5;
  // When set, Extract writes the costed e-graph here first, as egraph-serialize
  // JSON (egraph_json.h): the problem its extractors solve, for `taso egraph
  // extract` and other people's extractors.
  std::string dump_egraph;
};

// What one rule did over a saturation: how often it was searched, the
// matches found (up to its search limit) and tried, the applications that
// changed the e-graph and the e-nodes they added, and its bans.
struct RuleActivity {
  int rounds = 0;
  long matches = 0;
  long tried = 0;  // matches applied, whether or not they changed anything
  int applied = 0;
  long enodes = 0;
  int bans = 0;
};

// What saturation leaves for extraction: the e-graph, why growing it stopped,
// and which rule application created each e-node.
struct Saturation {
  EGraph egraph;
  std::vector<EClassId> roots;  // the input graph's outputs, in order
  int input_enodes = 0;         // e-node ids below this are the input graph's
  SearchStop stop_reason = SearchStop::kUnspecified;
  std::string stop_detail;  // "saturated", "node limit N", "time limit S", "iteration limit N"
  int iterations = 0;
  int generated = 0;  // e-nodes added by rewrites
  int rejected = 0;   // applications skipped (types, dims, cycles)
  int rule_bans = 0;  // times the backoff scheduler banned a rule
  // Applications that added an e-node or merged two classes, by rule name.
  std::map<std::string, int> rules_applied;
  std::map<std::string, RuleActivity> activity;  // by rule name, rules searched at least once
  // Per e-node id: the application that created it (-1: the input's, or
  // found existing); per application: its rule's name (owned by the rules).
  std::vector<int> created_by;
  std::vector<const std::string*> applied_rule;
};

// The `n` rules that added the most e-nodes, with their figures: "r1: 900
// e-nodes from 300 applications of 1200 matches, 2 bans; ...".
std::string MostProlificRules(const Saturation& saturation, int n);

// Grows the e-graph of `graph` by `rules` until saturated or a limit of
// `options` (iterations, e-nodes, time) is hit.
absl::StatusOr<Saturation> Saturate(const Graph& graph, const std::vector<RewriteRule>& rules,
                                    const EqsatOptions& options = {});

// The program extraction chose from an e-graph.
struct ExtractedProgram {
  std::optional<Graph> graph;      // none when no program could be built
  std::optional<Extraction> used;  // the extraction `graph` was built from (its cost_ms: the objective)
  ExtractionOutcome status = ExtractionOutcome::kNotRun;
  // "ilp optimal", "ilp (time limit, best found)", "ilp (best found)",
  // "greedy (ilp failed: ...)", "greedy" or "none (...)".
  std::string detail;
  std::string failure;  // why no program was built
  // The ILP's outcome, incumbent, bound and gap (SearchReport's fields), and
  // the time it was given (zero when not run).
  IlpVerdict ilp = IlpVerdict::kNotApplicable;
  double ilp_incumbent_ms = 0, ilp_bound_ms = 0, ilp_gap = 0;
  absl::Duration ilp_time_limit;
  absl::Duration costing_time;     // ENodeCosts: the cost model's (profiler's) share
  int unpriced = 0;                // operators not costed by the deadline (never chosen)
  absl::Duration extraction_time;  // greedy, the ILP and building the graph
  int sharing_moves = 0;           // kept by ImproveBySharing before the ILP
};

// The cheapest program of the saturated e-graph: the ILP when asked for and
// it succeeds, else greedy's. `original` supplies the inputs and weights.
// Costing stops options.ilp_share of the time limit before `deadline`; the
// ILP runs until `deadline` (at most options.ilp_time_limit), and not at all
// when less than options.ilp_min_time is left.
absl::StatusOr<ExtractedProgram> Extract(const Saturation& saturation, const Graph& original, CostModel& cost,
                                         const EqsatOptions& options = {},
                                         absl::Time deadline = absl::InfiniteFuture());

struct EqsatResult {
  Graph best;
  // expanded: rounds run; generated: e-nodes added by rewrites; rejected:
  // applications skipped (types, dims, cycles); rule_bans: the backoff
  // scheduler's bans; rules_applied: applications
  // that added an e-node or merged two classes, by rule name; stop_reason:
  // saturation's; extraction: how the program was chosen.
  SearchReport report;
  // Applications whose new e-nodes the returned program uses, by rule name
  // (empty when the input is returned): what the result owes to each rule.
  std::map<std::string, int> rules_used;
  int iterations = 0;
  int enodes = 0;
  int eclasses = 0;
};

// Saturate, then Extract, within options.time_limit in all (see
// EqsatOptions::time_limit); never returns a program dearer than the input.
absl::StatusOr<EqsatResult> EqsatSearch(const Graph& graph, const std::vector<RewriteRule>& rules, CostModel& cost,
                                        const EqsatOptions& options = {});

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_EQSAT_EQSAT_H_
