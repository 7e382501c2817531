// The rules of one job on every store shard, reached over gRPC, as the
// streaming pruner reads and writes them (verifier/streaming_pruning.h):
// source i is store shard i. This is how `taso rules prune --store` prunes a
// job where the stores run (a Kubernetes Job beside the store pods): the
// stores keep serving, the rules are read with the read role (ListRules,
// GetRules), and only what pruning exchanges goes back (StorePruning, by id:
// PROVED <-> PRUNED with the checkpoint; admin role). Every call is retried
// while a store is unavailable; each is idempotent.
#ifndef TASO_CLI_REMOTE_PRUNE_SOURCE_H_
#define TASO_CLI_REMOTE_PRUNE_SOURCE_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "net/retry.h"
#include "proto/rules_db.pb.h"
#include "records/reduction_table.h"
#include "records/store_shards.h"
#include "verifier/streaming_pruning.h"

namespace taso::cli {

class RemotePruneSource : public verifier::PruneSource {
 public:
  // `shards` in store-index order; `restart`: ignore stored checkpoints.
  RemotePruneSource(std::vector<records::StoreShard> shards, std::string job_id, bool restart,
                    net::RetryPolicy retry = {});

  int source_count() const override { return static_cast<int>(shards_.size()); }
  absl::Status ForEach(int source, const std::function<absl::Status(const rules::Rule&)>& visit) override;
  absl::Status Fetch(int source, const std::vector<std::string>& ids, std::vector<rules::Rule>& out) override;
  absl::Status Commit(int source, const std::vector<rules::Rule>& changed, const std::string& checkpoint) override;
  absl::StatusOr<std::string> Checkpoint(int source) override;

  // Records the reduction table in the job on every shard.
  absl::Status RecordPruning(const records::ReductionTable& table);

 private:
  // One RPC on `source`'s RuleDb, with a deadline, retried while unavailable.
  template <typename Request, typename Response, typename Method>
  absl::Status Call(int source, Method method, const Request& request, Response& response, absl::Duration deadline);

  std::vector<records::StoreShard> shards_;
  std::string job_id_;
  bool restart_;
  net::RetryPolicy retry_;
};

}  // namespace taso::cli

#endif  // TASO_CLI_REMOTE_PRUNE_SOURCE_H_
