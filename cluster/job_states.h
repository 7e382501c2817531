// A generation job as every store shard has it, merged (`taso job status`):
// a shard is done once every store has it done; the job is complete once
// every store has finished its slice (GENERATED, VERIFYING or DONE).
#ifndef TASO_CLUSTER_JOB_STATES_H_
#define TASO_CLUSTER_JOB_STATES_H_

#include <vector>

#include "proto/rules_db.pb.h"

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

}  // namespace taso::cluster

#endif  // TASO_CLUSTER_JOB_STATES_H_
