#include "cluster/job_states.h"

#include "gtest/gtest.h"

namespace taso::cluster {
namespace {

rules_db::Job View(rules_db::JobState state, std::vector<bool> done) {
  rules_db::Job job;
  job.set_id("j");
  job.set_num_shards(3);
  job.set_state(state);
  for (bool d : done) job.add_shards()->set_done(d);
  return job;
}

TEST(JobStatesTest, AShardIsDoneWhenEveryStoreHasItDone) {
  auto merged = MergeJobStates({View(rules_db::JOB_STATE_GENERATED, {true, true, false}),
                                View(rules_db::JOB_STATE_GENERATING, {true, false, false})});
  EXPECT_EQ(merged.shards, 3);
  EXPECT_EQ(merged.done, std::vector<int>({0}));
  EXPECT_EQ(merged.pending, std::vector<int>({1, 2}));
  EXPECT_EQ(merged.states, std::vector<rules_db::JobState>(
                               {rules_db::JOB_STATE_GENERATED, rules_db::JOB_STATE_GENERATING}));
  EXPECT_FALSE(merged.complete);
}

TEST(JobStatesTest, CompleteOnceEveryStoreFinishedItsSlice) {
  auto merged = MergeJobStates({View(rules_db::JOB_STATE_DONE, {true, true, true}),
                                View(rules_db::JOB_STATE_VERIFYING, {true, true, true}),
                                View(rules_db::JOB_STATE_GENERATED, {true, true, true})});
  EXPECT_EQ(merged.done, std::vector<int>({0, 1, 2}));
  EXPECT_TRUE(merged.pending.empty());
  EXPECT_TRUE(merged.complete);
}

TEST(JobStatesTest, AStoreMissingAShardsProgressHasItPending) {
  auto merged = MergeJobStates({View(rules_db::JOB_STATE_GENERATING, {true, true, true}),
                                View(rules_db::JOB_STATE_GENERATING, {true})});
  EXPECT_EQ(merged.done, std::vector<int>({0}));
  EXPECT_EQ(merged.pending, std::vector<int>({1, 2}));
}

}  // namespace
}  // namespace taso::cluster
