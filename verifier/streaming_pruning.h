// PruneRules for jobs too large to hold in memory (size 4: 2.8M proved
// rules, about 10 KB each decoded), with the same result.
//
// Two passes over the rules where they are stored:
//   1. every rule once, in the store's order: a proved (or earlier pruned)
//      rule leaves its place in pruning order (size, generality, id) and its
//      variables; about 40 bytes each.
//   2. the rules fetched back in pruning order, a batch at a time, judged by
//      PruneEngine (which keeps hashes, not graphs, of what it has seen); the
//      rules whose status changes are written back with a checkpoint, in one
//      write per source. The next batch is fetched and decoded on a second
//      thread meanwhile, so two batches are in memory at once.
// A run that is killed resumes from the checkpoint: pass 1 again, then the
// rules before the checkpoint are only learned (their statuses are stored),
// which is what makes the engine's state the same as if it had not stopped.
// The checkpoint names the set it was made for (a digest of the ids), so a
// set that changed since starts over.
//
// Several sources (store shards) are pruned as one set: each rule is read
// from and written back to the source that holds it.
#ifndef TASO_VERIFIER_STREAMING_PRUNING_H_
#define TASO_VERIFIER_STREAMING_PRUNING_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/rules.pb.h"
#include "verifier/pruning.h"

namespace taso::verifier {

// Where the rules are: implemented by whoever holds the stores.
class PruneSource {
 public:
  virtual ~PruneSource() = default;
  virtual int source_count() const = 0;
  // Every rule of the job on `source`, in any order (the same each time).
  virtual absl::Status ForEach(int source, const std::function<absl::Status(const rules::Rule&)>& visit) = 0;
  // The rules with these ids on `source`, in the same order. Called from a
  // second thread, while Commit may run (on other rules).
  virtual absl::Status Fetch(int source, const std::vector<std::string>& ids, std::vector<rules::Rule>& out) = 0;
  // Stores `changed` on `source` together with `checkpoint`, atomically.
  virtual absl::Status Commit(int source, const std::vector<rules::Rule>& changed, const std::string& checkpoint) = 0;
  // The checkpoint last committed on `source`; empty if none.
  virtual absl::StatusOr<std::string> Checkpoint(int source) = 0;
};

struct StreamingPruneOptions {
  int64_t batch_rules = 20'000;  // rules fetched, judged and committed at a time
  // Refuse to go on when the pruner's own state (order and known rules) and
  // two batches would pass this.
  int64_t memory_limit_mb = 4096;
  // Called after each committed batch: rules done (judged or learned), of total.
  std::function<void(int64_t done, int64_t total)> progress;
};

struct StreamingPruneResult {
  ReductionTable table;
  int64_t resumed_at = 0;      // rules learned from an earlier run's checkpoint
  int64_t rules_written = 0;   // rules whose status changed, this run
  int64_t batches = 0;
  int64_t state_bytes = 0;     // the pruner's own state at the end, roughly
};

absl::StatusOr<StreamingPruneResult> PruneStreaming(PruneSource& source, const StreamingPruneOptions& options = {});

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_STREAMING_PRUNING_H_
