#include "cluster/job_states.h"

#include <algorithm>

#include "grpcpp/grpcpp.h"
#include "net/grpc_status.h"
#include "proto/rules_db.grpc.pb.h"

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
    merged.complete = merged.complete && JobStateRank(v.state()) >= JobStateRank(rules_db::JOB_STATE_GENERATED);
  }
  return merged;
}

int JobStateRank(rules_db::JobState state) {
  switch (state) {
    case rules_db::JOB_STATE_GENERATING: return 1;
    case rules_db::JOB_STATE_FINALIZING: return 2;
    case rules_db::JOB_STATE_GENERATED: return 3;
    case rules_db::JOB_STATE_VERIFYING: return 4;
    case rules_db::JOB_STATE_DONE: return 5;
    default: return 0;
  }
}

void AddVerification(const rules_db::Verification& shard, rules_db::Verification& into) {
  into.set_classes_total(into.classes_total() + shard.classes_total());
  into.set_classes_verified(into.classes_verified() + shard.classes_verified());
  into.set_classes_given_up(into.classes_given_up() + shard.classes_given_up());
  into.set_rules_proved(into.rules_proved() + shard.rules_proved());
  into.set_rules_refuted(into.rules_refuted() + shard.rules_refuted());
  into.set_rules_timeout(into.rules_timeout() + shard.rules_timeout());
  into.set_rules_unknown(into.rules_unknown() + shard.rules_unknown());
  into.set_rules_rejected_precheck(into.rules_rejected_precheck() + shard.rules_rejected_precheck());
  into.set_rules_proved_as_renaming(into.rules_proved_as_renaming() + shard.rules_proved_as_renaming());
  into.set_renamings_proved_alone(into.renamings_proved_alone() + shard.renamings_proved_alone());
  into.set_rules_proved_from_smaller(into.rules_proved_from_smaller() + shard.rules_proved_from_smaller());
  into.set_derive_seconds(std::max(into.derive_seconds(), shard.derive_seconds()));
  into.set_wall_seconds(std::max(into.wall_seconds(), shard.wall_seconds()));
  if (into.note().empty()) into.set_note(shard.note());
  // One failed shard fails the union; otherwise it is at its slowest shard's stage.
  auto rank = [](rules_db::FinishStage stage) {
    switch (stage) {
      case rules_db::FINISH_STAGE_FAILED: return 3;
      case rules_db::FINISH_STAGE_DERIVING: return 2;
      case rules_db::FINISH_STAGE_PRUNING: return 1;
      default: return 0;
    }
  };
  if (rank(shard.finish_stage()) > rank(into.finish_stage())) {
    into.set_finish_stage(shard.finish_stage());
    into.set_finish_error(shard.finish_error());
  }
}

rules_db::Job MergeShardJobs(const std::vector<rules_db::Job>& views) {
  rules_db::Job merged = views[0];
  for (size_t i = 1; i < views.size(); ++i) {
    if (JobStateRank(views[i].state()) < JobStateRank(merged.state())) merged.set_state(views[i].state());
    AddVerification(views[i].verification(), *merged.mutable_verification());
  }
  return merged;
}

absl::StatusOr<std::vector<rules_db::Job>> FetchJobViews(const std::vector<records::StoreShard>& stores,
                                                         const std::string& job_id, absl::Duration deadline) {
  std::vector<rules_db::Job> views;
  for (const records::StoreShard& store : stores) {
    auto stub = rules_db::HashStore::NewStub(store.channel);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    rules_db::GetJobRequest request;
    request.set_job_id(job_id);
    rules_db::Job job;
    absl::Status s = net::FromGrpc(stub->GetJob(&context, request, &job), "store " + store.address);
    if (!s.ok()) return s;
    views.push_back(std::move(job));
  }
  return views;
}

}  // namespace taso::cluster
