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

rules_db::Job Verified(rules_db::JobState state, int classes, int proved, double seconds, std::string note) {
  rules_db::Job job = View(state, {true, true, true});
  rules_db::Verification* v = job.mutable_verification();
  v->set_classes_total(classes);
  v->set_classes_verified(classes - 1);
  v->set_classes_given_up(1);
  v->set_rules_proved(proved);
  v->set_rules_refuted(1);
  v->set_rules_timeout(2);
  v->set_rules_unknown(3);
  v->set_rules_rejected_precheck(4);
  v->set_after_renaming(proved);
  v->set_wall_seconds(seconds);
  v->set_note(note);
  return job;
}

TEST(JobStatesTest, ShardJobsMergeAsFarAsTheLeastAdvancedWithVerdictsSummed) {
  const rules_db::Job merged = MergeShardJobs({Verified(rules_db::JOB_STATE_DONE, 10, 5, 3.0, ""),
                                               Verified(rules_db::JOB_STATE_VERIFYING, 20, 7, 9.0, "second"),
                                               Verified(rules_db::JOB_STATE_DONE, 30, 11, 1.0, "third")});
  EXPECT_EQ(merged.state(), rules_db::JOB_STATE_VERIFYING);
  const rules_db::Verification& v = merged.verification();
  EXPECT_EQ(v.classes_total(), 60);
  EXPECT_EQ(v.classes_verified(), 57);
  EXPECT_EQ(v.classes_given_up(), 3);
  EXPECT_EQ(v.rules_proved(), 23);
  EXPECT_EQ(v.rules_refuted(), 3);
  EXPECT_EQ(v.rules_timeout(), 6);
  EXPECT_EQ(v.rules_unknown(), 9);
  EXPECT_EQ(v.rules_rejected_precheck(), 12);
  EXPECT_EQ(v.wall_seconds(), 9.0);
  EXPECT_EQ(v.note(), "second");
  // The reduction table belongs to the union: not summed.
  EXPECT_EQ(v.after_renaming(), 5);
}

TEST(JobStatesTest, DoneOnlyWhenEveryStoreIsDone) {
  EXPECT_EQ(MergeShardJobs({Verified(rules_db::JOB_STATE_DONE, 1, 1, 0, ""),
                            Verified(rules_db::JOB_STATE_DONE, 1, 1, 0, "")}).state(),
            rules_db::JOB_STATE_DONE);
  // A failed store holds the merged job back below every working state.
  EXPECT_EQ(MergeShardJobs({Verified(rules_db::JOB_STATE_DONE, 1, 1, 0, ""),
                            Verified(rules_db::JOB_STATE_FAILED, 1, 1, 0, "")}).state(),
            rules_db::JOB_STATE_FAILED);
}

TEST(JobStatesTest, TheUnionFinishesAtItsSlowestShardAndFailsWithAnyShard) {
  auto at = [](rules_db::FinishStage stage, std::string error = "") {
    rules_db::Job job = Verified(rules_db::JOB_STATE_VERIFYING, 1, 1, 0, "");
    job.mutable_verification()->set_finish_stage(stage);
    job.mutable_verification()->set_finish_error(error);
    return job;
  };
  rules_db::Job done = Verified(rules_db::JOB_STATE_DONE, 1, 1, 0, "");
  EXPECT_EQ(MergeShardJobs({done, at(rules_db::FINISH_STAGE_PRUNING)}).verification().finish_stage(),
            rules_db::FINISH_STAGE_PRUNING);
  EXPECT_EQ(MergeShardJobs({at(rules_db::FINISH_STAGE_PRUNING), at(rules_db::FINISH_STAGE_DERIVING), done})
                .verification()
                .finish_stage(),
            rules_db::FINISH_STAGE_DERIVING);
  const rules_db::Job failed = MergeShardJobs(
      {at(rules_db::FINISH_STAGE_DERIVING), at(rules_db::FINISH_STAGE_FAILED, "disk full"), done});
  EXPECT_EQ(failed.verification().finish_stage(), rules_db::FINISH_STAGE_FAILED);
  EXPECT_EQ(failed.verification().finish_error(), "disk full");
}

TEST(JobStatesTest, StatesRankAlongTheJobsLife) {
  const std::vector<rules_db::JobState> life = {rules_db::JOB_STATE_GENERATING, rules_db::JOB_STATE_FINALIZING,
                                                rules_db::JOB_STATE_GENERATED, rules_db::JOB_STATE_VERIFYING,
                                                rules_db::JOB_STATE_DONE};
  for (size_t i = 1; i < life.size(); ++i) EXPECT_LT(JobStateRank(life[i - 1]), JobStateRank(life[i]));
  EXPECT_LT(JobStateRank(rules_db::JOB_STATE_CANCELLED), JobStateRank(life[0]));
  EXPECT_LT(JobStateRank(rules_db::JOB_STATE_FAILED), JobStateRank(life[0]));
}

}  // namespace
}  // namespace taso::cluster
