// `taso rules prune [--job ID] [--db DIR | --store A,B,C [--wait]] [--memory-limit-mb N] [--batch-rules N]
// [--restart] [--json]`:
// prunes a finished job's proved rules over every store shard as one set, a
// batch at a time (verifier/streaming_pruning.h), for jobs the stores do not
// prune themselves: more rules than `taso_rules_db --prune_max_rules` (size
// 4: 2.8M), or spread over several shards. Resumes where a killed run
// stopped. Prints TASO's reduction table, the time and the peak RSS.
#ifndef TASO_CLI_PRUNE_COMMAND_H_
#define TASO_CLI_PRUNE_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "verifier/streaming_pruning.h"

namespace taso::cli {

struct PruneCommandOptions {
  std::string db = "taso-db";  // the store-N databases, opened in this process
  // Or the stores' addresses, every shard (comma-separated): pruned over
  // gRPC while they serve (read role to read, admin to write the statuses).
  std::string store;
  std::string job_id;          // empty: the one DONE job
  int64_t memory_limit_mb = 4096;
  int64_t batch_rules = 20'000;
  bool restart = false;        // ignore a stored checkpoint
  bool wait = false;           // --store: wait until the job is DONE on every shard
  absl::Duration wait_poll = absl::Seconds(30);
  bool json = false;
  // Starts the progress lines written to `err` ("taso rules prune: N of M
  // rules judged").
  std::string progress_label = "taso rules prune";
};

// One pruning of a job over every shard, for callers that report it
// themselves (`taso verify` prunes what its stores did not).
struct PruneJobResult {
  // OK, or why it stopped, with the code it stopped on (PERMISSION_DENIED:
  // a token that may read but not write statuses).
  absl::Status status;
  int exit_code = 0;  // RunRulesPrune's for `status`
  bool stopped_midway = false;  // a rerun resumes from the stores' checkpoint
  std::string job_id;
  int store_shards = 0;
  verifier::StreamingPruneResult pruned;
  double seconds = 0;
};
PruneJobResult PruneJob(const PruneCommandOptions& options, std::ostream& err);

// Exit codes: 0 pruned; 1 error (a run stopped midway resumes on rerun); 2 bad
// options, no database, or no finished job.
int RunRulesPrune(const PruneCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace taso::cli

#endif  // TASO_CLI_PRUNE_COMMAND_H_
