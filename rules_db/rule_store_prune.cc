// RuleStore's side of pruning a finished job from outside: the rules read
// back, the verdicts pruning exchanges written with the pruner's checkpoint,
// and the reduction table recorded (rule_store.h). The pruner itself runs in
// the caller (`taso rules prune`), in this process's database or over gRPC.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "rules_db/rule_store.h"
#include "storage/rocks_status.h"

namespace taso::rules_db {
namespace {

// Requests over gRPC, bounded so one call holds a bounded share of memory.
constexpr int kMaxRulesPerGet = 1000;
constexpr int kMaxPruneVerdicts = 100'000;

}  // namespace

absl::Status RuleStore::ForEachJobRule(const std::string& job_id,
                                       const std::function<absl::Status(const rules::Rule&)>& visit) {
  absl::Status inner;
  absl::Status s = ForEachRule([&](const rules::Rule& r) {
    if (r.provenance().job_id() != job_id) return true;
    inner = visit(r);
    return inner.ok();
  });
  return s.ok() ? inner : s;
}

absl::Status RuleStore::GetRules(const std::vector<std::string>& ids, std::vector<rules::Rule>& out) {
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  std::vector<rocksdb::Slice> keys(ids.begin(), ids.end());
  std::vector<rocksdb::ColumnFamilyHandle*> handles(ids.size(), families->rules);
  std::vector<std::string> values;
  const std::vector<rocksdb::Status> found = families->db->MultiGet(rocksdb::ReadOptions(), handles, keys, &values);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (found[i].IsNotFound()) return absl::NotFoundError(absl::StrCat("no rule '", ids[i], "'"));
    if (!found[i].ok()) return storage::FromRocks(found[i], "reading rules");
    rules::Rule& rule = out.emplace_back();
    if (!rule.ParseFromString(values[i])) return absl::DataLossError(absl::StrCat("stored rule ", ids[i], " is corrupt"));
  }
  return absl::OkStatus();
}

absl::Status RuleStore::StorePruning(const std::string& job_id, const std::vector<rules::Rule>& changed,
                                     const std::string& checkpoint) {
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  const Families& f = *families;
  rocksdb::WriteBatch batch;
  for (const rules::Rule& rule : changed) {
    std::string existing;
    rules::Rule stored;
    rocksdb::Status s = f.db->Get(rocksdb::ReadOptions(), f.rules, rule.id(), &existing);
    if (s.IsNotFound()) return absl::NotFoundError(absl::StrCat("no rule '", rule.id(), "' to prune"));
    if (!s.ok()) return storage::FromRocks(s, "reading a rule");
    if (!stored.ParseFromString(existing)) return absl::DataLossError(absl::StrCat("stored rule ", rule.id(), " is corrupt"));
    // Pruning only moves a proved rule between PROVED and PRUNED.
    if (stored.provenance().job_id() != job_id || !IsProvedStatus(stored.status()) ||
        !IsProvedStatus(rule.status())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rule ", rule.id(), " of job '", stored.provenance().job_id(), "' is ",
          rules::RuleStatus_Name(stored.status()), " and would become ", rules::RuleStatus_Name(rule.status()),
          ": pruning job '", job_id, "' only moves its rules between proved and pruned"));
    }
    // Only the verdict changes; the rest is the stored rule.
    stored.set_status(rule.status());
    stored.set_status_detail(rule.status_detail());
    PutPruningVerdict(f, stored, batch);
  }
  batch.Put(f.prune, job_id, checkpoint);
  return storage::FromRocks(f.db->Write(rocksdb::WriteOptions(), &batch), "storing pruned rules");
}

absl::StatusOr<std::string> RuleStore::PruneCheckpoint(const std::string& job_id) {
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  std::string value;
  rocksdb::Status s = families->db->Get(rocksdb::ReadOptions(), families->prune, job_id, &value);
  if (s.IsNotFound()) return std::string();
  if (!s.ok()) return storage::FromRocks(s, "reading the pruning checkpoint");
  return value;
}

absl::Status RuleStore::RecordPruning(const std::string& job_id, const PruneCounts& counts, int store_shards) {
  if (absl::Status s = RequireDone(job_id); !s.ok()) return s;
  auto job = hash_store_->GetJob(job_id);
  if (!job.ok()) return job.status();
  Verification v = job->verification();
  records::RecordReduction(counts, v);
  v.set_pruned_store_shards(store_shards);
  v.clear_note();
  return hash_store_->UpdateVerification(job_id, JOB_STATE_DONE, v);
}

absl::StatusOr<GetRulesResponse> RuleStore::GetRules(const GetRulesRequest& request) {
  if (request.ids_size() > kMaxRulesPerGet) {
    return absl::InvalidArgumentError(
        absl::StrCat("GetRules asks for ", request.ids_size(), " rules; at most ", kMaxRulesPerGet, " per call"));
  }
  std::vector<std::string> ids(request.ids().begin(), request.ids().end());
  std::vector<rules::Rule> found;
  if (absl::Status s = GetRules(ids, found); !s.ok()) return s;
  GetRulesResponse response;
  for (rules::Rule& r : found) *response.add_rules() = std::move(r);
  return response;
}

absl::StatusOr<GetPruneCheckpointResponse> RuleStore::GetPruneCheckpoint(const GetPruneCheckpointRequest& request) {
  auto checkpoint = PruneCheckpoint(request.job_id());
  if (!checkpoint.ok()) return checkpoint.status();
  GetPruneCheckpointResponse response;
  response.set_checkpoint(std::move(*checkpoint));
  return response;
}

absl::StatusOr<StorePruningResponse> RuleStore::StorePruning(const StorePruningRequest& request) {
  if (request.verdicts_size() > kMaxPruneVerdicts) {
    return absl::InvalidArgumentError(absl::StrCat("StorePruning carries ", request.verdicts_size(),
                                                   " verdicts; at most ", kMaxPruneVerdicts,
                                                   " per call (a smaller --batch-rules)"));
  }
  if (absl::Status s = RequireDone(request.job_id()); !s.ok()) return s;
  std::vector<rules::Rule> changed;
  changed.reserve(request.verdicts_size());
  for (const PruneVerdict& v : request.verdicts()) {
    rules::Rule& r = changed.emplace_back();
    r.set_id(v.rule_id());
    r.set_status(v.status());
    r.set_status_detail(v.status_detail());
  }
  if (absl::Status s = StorePruning(request.job_id(), changed, request.checkpoint()); !s.ok()) return s;
  StorePruningResponse response;
  response.set_rules_written(request.verdicts_size());
  return response;
}

absl::StatusOr<Job> RuleStore::RecordPruning(const RecordPruningRequest& request) {
  const int shards = hash_store_->info().store_count();
  if (request.store_shards() != shards) {
    return absl::InvalidArgumentError(absl::StrCat("a pruning over ", request.store_shards(),
                                                   " store shard(s) is recorded, but this store is one of ", shards,
                                                   ": prune every shard of the job as one set"));
  }
  const PruneCounts counts = records::RecordedReduction(request.reduction());
  if (absl::Status s = RecordPruning(request.job_id(), counts, shards); !s.ok()) return s;
  return hash_store_->GetJob(request.job_id());
}

absl::Status RuleStore::RequireDone(const std::string& job_id) {
  auto job = hash_store_->GetJob(job_id);
  if (!job.ok()) return job.status();
  if (job->state() != JOB_STATE_DONE) {
    return absl::FailedPreconditionError(absl::StrCat("job '", job_id, "' is ", JobState_Name(job->state()),
                                                      ", not DONE: finish `taso verify` before pruning it"));
  }
  return absl::OkStatus();
}

}  // namespace taso::rules_db
