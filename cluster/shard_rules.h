// The rules of every store shard as one set, pruned together.
//
// Why the reader may prune: each store prunes a finished job's proved rules
// when its own last class is verified, but it only holds its slice of the
// fingerprints, so a rule implied by a rule on another shard stays PROVED
// there. Pruning is a pure function of a job's proved set (smallest first,
// ties by id). `taso verify` and `taso rules prune` prune a job over all the
// shards, in bounded memory, and record it in every shard
// (Verification.pruned_store_shards): from then on the stored statuses are
// the union's and a reader streams them, the filter applied in each store,
// merged by rule id (StreamShardRules). A job DONE on every shard but not
// pruned as one set (`taso verify --noprune`, verifier processes run by
// hand) has no union statuses stored: FetchAndPruneJobs reads all of its
// rules and prunes them in memory, exactly as one store holding the whole
// job would have, which is only for jobs small enough (the caller bounds it
// by ShardJobs::UnprunedProved), and the stream takes that job's rules
// from there (ReplacedJobs).
//
// The pruner is the verifier's (verifier/pruning.h), handed in by the
// caller (cli wires it, as taso_rules_db hands a store its pruner): this
// package never includes a stage.
#ifndef TASO_CLUSTER_SHARD_RULES_H_
#define TASO_CLUSTER_SHARD_RULES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/store_set.h"
#include "proto/rules.pb.h"
#include "proto/rules_db.pb.h"
#include "records/reduction_table.h"

namespace taso::cluster {

using records::ReductionTable;

// Marks the redundant PROVED rules among one job's rules as PRUNED (with
// the reason in status_detail), leaving every other rule alone, and says
// what it removed: the verifier's PruneRules, handed in by the caller.
using UnionPruner = std::function<ReductionTable(std::vector<rules::Rule>& rules)>;

// What the shards say of their jobs.
struct ShardJobs {
  std::set<std::string> done;  // DONE on every shard: their pruning is final
  // Pruned as one set on every shard: the stored statuses are the union's
  // already, with this table.
  std::map<std::string, ReductionTable> pruned_as_union;
  std::map<std::string, int64_t> proved;  // rules proved, summed over the shards
  // Each job as every shard has it, in store order, and the job ids in the
  // order they were first listed (the first store's, then new ones).
  std::map<std::string, std::vector<rules_db::Job>> views;
  std::vector<std::string> order;

  // The jobs `job_id` names (every job when empty) that are DONE on every
  // shard and not pruned as one set: their stored statuses are not the
  // union's, which a reader must compute.
  std::vector<std::string> Unpruned(const std::string& job_id) const;
  // The proved rules of those jobs: what FetchAndPruneJobs holds and prunes.
  int64_t UnprunedProved(const std::string& job_id) const;
};
// Every job of every shard (all pages of each store's list).
absl::StatusOr<ShardJobs> ListShardJobs(const StoreSet& stores);

// Rules a reader computed for some jobs (their union statuses), standing
// for those jobs' stored rules in a stream: already filtered, in id order.
struct ReplacedJobs {
  std::set<std::string> jobs;
  std::vector<rules::Rule> rules;
};

// The rules `request` selects from every shard (its filter applied in each
// store, its paging ignored), merged in rule id order, a rule stored on two
// shards (a hand import into each) once, until `visit` returns false; the
// rules of `replaced->jobs` come from `replaced` instead of the stores.
// Holds one page per shard. DATA_LOSS if a store answers out of id order.
absl::Status StreamShardRules(const StoreSet& stores, rules_db::ListRulesRequest request,
                              const std::function<bool(const rules::Rule&)>& visit,
                              const ReplacedJobs* replaced = nullptr);

// The merge under StreamShardRules, over any paged sources: `next_page(i)`
// gives source i's next page in id order, empty when it has no more.
using PageReader = std::function<absl::StatusOr<std::vector<rules::Rule>>(size_t source)>;
absl::Status MergeById(size_t sources, const PageReader& next_page,
                       const std::function<bool(const rules::Rule&)>& visit);

struct PrunedJobs {
  std::vector<rules::Rule> rules;  // every status, in id order
  std::map<std::string, ReductionTable> tables;  // per job: its table over the union
  // Per status: the union's count minus the stored one (rules that the
  // stores hold PROVED and the union PRUNED, or back).
  std::map<rules::RuleStatus, int64_t> status_delta;
};

// Every rule of `jobs` (each DONE on every shard and not pruned as one set:
// ShardJobs::Unpruned) from every shard, in memory, each job's pruned again
// as one set by `prune` (which must be set).
absl::StatusOr<PrunedJobs> FetchAndPruneJobs(const StoreSet& stores, const std::vector<std::string>& jobs,
                                             const UnionPruner& prune);

}  // namespace taso::cluster

#endif  // TASO_CLUSTER_SHARD_RULES_H_
