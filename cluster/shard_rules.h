// The rules of every store shard as one set, pruned together.
//
// Why the reader prunes: each store prunes a finished job's proved rules
// when its own last class is verified, but it only holds its slice of the
// fingerprints, so a rule implied by a rule on another shard stays PROVED
// there. Pruning is a pure function of a job's proved set (smallest first,
// ties by id), and cheap next to proving it, so whichever process reads the
// union (`taso rules`, `taso verify`) runs the same pruner over it: the
// result is exactly what one store holding the whole job would have kept.
// No store needs another's rules, and PRUNED stays a status no client can
// write into a store. What the stores persist is their per-shard view; the
// union view is what `taso rules list|export|stats` print for several
// shards (export it to give an optimizer the pruned set as --rules FILE).
// A job `taso rules prune` pruned as one set (every shard says so:
// Verification.pruned_store_shards) is not pruned again: its stored
// statuses are the union's already.
//
// The pruner is the verifier's (verifier/pruning.h), handed in by the
// caller (cli wires it, as taso_rules_db hands a store its pruner): this
// package never includes a stage.
#ifndef TASO_CLUSTER_SHARD_RULES_H_
#define TASO_CLUSTER_SHARD_RULES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/store_set.h"
#include "proto/rules.pb.h"
#include "records/reduction_table.h"

namespace taso::cluster {

using records::ReductionTable;

// Marks the redundant PROVED rules among one job's rules as PRUNED (with
// the reason in status_detail), leaving every other rule alone, and says
// what it removed: the verifier's PruneRules, handed in by the caller.
using UnionPruner = std::function<ReductionTable(std::vector<rules::Rule>& rules)>;

struct ShardRules {
  std::vector<rules::Rule> rules;  // every status, in id order
  // Per pruned job: its reduction table over the union.
  std::map<std::string, ReductionTable> tables;
};

// Every rule of `job_id` (all jobs when empty) from every shard; the rules
// of each job that is DONE on every shard are pruned again as one set by
// `prune` (which must be set), unless `taso rules prune` did so already.
absl::StatusOr<ShardRules> FetchPrunedUnion(const StoreSet& stores, const std::string& job_id,
                                            const UnionPruner& prune);

}  // namespace taso::cluster

#endif  // TASO_CLUSTER_SHARD_RULES_H_
