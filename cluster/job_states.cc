#include "cluster/job_states.h"

namespace taso::cluster {

MergedJobStates MergeJobStates(const std::vector<rules_db::Job>& views) {
  MergedJobStates merged;
  merged.shards = views[0].num_shards();
  for (int s = 0; s < merged.shards; ++s) {
    bool all = true;
    for (const rules_db::Job& v : views) all = all && s < v.shards_size() && v.shards(s).done();
    (all ? merged.done : merged.pending).push_back(s);
  }
  for (const rules_db::Job& v : views) {
    merged.states.push_back(v.state());
    merged.complete = merged.complete && (v.state() == rules_db::JOB_STATE_GENERATED ||
                                          v.state() == rules_db::JOB_STATE_VERIFYING ||
                                          v.state() == rules_db::JOB_STATE_DONE);
  }
  return merged;
}

}  // namespace taso::cluster
