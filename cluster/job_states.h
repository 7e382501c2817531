// A generation job as every store shard has it, fetched and merged. Each
// store holds its slice of a job's fingerprints, so each has its own view of
// the job: its state, its shards' progress, its verification counts.
//   MergeJobStates (`taso job status`): a shard is done once every store has
//     it done; the job is complete once every store has finished its slice
//     (GENERATED, VERIFYING or DONE).
//   MergeShardJobs (`taso verify`, `taso rules stats`): one job, as far as
//     its least advanced store, with the verification counts summed.
#ifndef TASO_CLUSTER_JOB_STATES_H_
#define TASO_CLUSTER_JOB_STATES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/rules_db.pb.h"
#include "records/store_shards.h"

namespace taso::cluster {

struct MergedJobStates {
  int shards = 0;                             // the job's shard count (store 0's view)
  std::vector<int> done;                      // shards done on every store
  std::vector<int> pending;                   // the rest, in shard order
  std::vector<rules_db::JobState> states;     // each store's state, by store index
  bool complete = true;                       // every store has finished its slice
};

// `views`: the job as each store returned it, in store-index order; not empty.
MergedJobStates MergeJobStates(const std::vector<rules_db::Job>& views);

// How far a job is along GENERATING → FINALIZING → GENERATED → VERIFYING →
// DONE; failed, cancelled and unknown states rank below all of them.
int JobStateRank(rules_db::JobState state);

// Adds one store's verdict counts to `into`: classes and verdicts summed,
// wall time the longest, the first note kept. The reduction table (after_*,
// pruned_*) is left alone: it is a property of the union, not a sum.
void AddVerification(const rules_db::Verification& shard, rules_db::Verification& into);

// `views` (not empty) as one job: store 0's job with the least advanced
// state of all and every store's verification counts added.
rules_db::Job MergeShardJobs(const std::vector<rules_db::Job>& views);

// The job `job_id` as each store has it, in store-index order; the first
// failing store's error (naming it) otherwise.
absl::StatusOr<std::vector<rules_db::Job>> FetchJobViews(const std::vector<records::StoreShard>& stores,
                                                         const std::string& job_id,
                                                         absl::Duration deadline = absl::Seconds(10));

}  // namespace taso::cluster

#endif  // TASO_CLUSTER_JOB_STATES_H_
