// The rules of one job on every store shard, opened in this process, as the
// streaming pruner reads and writes them (verifier/streaming_pruning.h):
// source i is store shard i. The stores' databases are opened directly, so
// the union is pruned without a server in between and PRUNED is still only
// ever written by a process that holds the database.
#ifndef TASO_CLI_STORE_PRUNE_SOURCE_H_
#define TASO_CLI_STORE_PRUNE_SOURCE_H_

#include <string>
#include <vector>

#include "rules_db/rule_store.h"
#include "verifier/streaming_pruning.h"

namespace taso::cli {

class StorePruneSource : public verifier::PruneSource {
 public:
  // `shards` in store-index order; `restart`: ignore stored checkpoints.
  StorePruneSource(std::vector<rules_db::RuleStore*> shards, std::string job_id, bool restart)
      : shards_(std::move(shards)), job_id_(std::move(job_id)), restart_(restart) {}

  int source_count() const override { return static_cast<int>(shards_.size()); }
  absl::Status ForEach(int source, const std::function<absl::Status(const rules::Rule&)>& visit) override {
    return shards_[source]->ForEachJobRule(job_id_, visit);
  }
  absl::Status Fetch(int source, const std::vector<std::string>& ids, std::vector<rules::Rule>& out) override {
    return shards_[source]->GetRules(ids, out);
  }
  absl::Status Commit(int source, const std::vector<rules::Rule>& changed, const std::string& checkpoint) override {
    return shards_[source]->StorePruning(job_id_, changed, checkpoint);
  }
  absl::StatusOr<std::string> Checkpoint(int source) override {
    if (restart_) return std::string();
    return shards_[source]->PruneCheckpoint(job_id_);
  }

 private:
  std::vector<rules_db::RuleStore*> shards_;
  std::string job_id_;
  bool restart_;
};

}  // namespace taso::cli

#endif  // TASO_CLI_STORE_PRUNE_SOURCE_H_
