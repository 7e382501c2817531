// `taso generate`: start or resume a generation job. Without --store it runs
// everything on this machine: one store process per store shard (RocksDB
// under --db) and one taso_generator process per shard, on loopback. A worker
// that dies is restarted and resumes from its stored cursor. With
// --shards-here it runs only some shards of a job created elsewhere, so
// several machines share one job.
#ifndef TASO_CLI_GENERATE_COMMAND_H_
#define TASO_CLI_GENERATE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace taso::cli {

struct GenerateOptions {
  int max_ops = 3;
  int shards = 2;
  std::vector<std::string> stores;  // empty: start local stores
  std::string db = "taso-db";       // local stores' directory
  int store_shards = 1;             // local stores to start
  std::string spec_path;            // empty: TASO's default spec
  std::string job_id;               // empty: derived from the spec, size and shards
  bool json = false;
  int max_restarts = 3;             // per worker
  int batch_records = 50000;
  // Run only these shards of an existing job (`taso job create`) against
  // --store; the job's spec and shard count come from the stores. Empty:
  // create the job and run every shard here.
  std::vector<int> shards_here;
};

// Exit codes: 0 done; 1 the job failed (message on `err`); 2 bad options;
// 3 a store was unreachable; 130 interrupted (rerun to resume).
int RunGenerate(const GenerateOptions& options, std::ostream& out, std::ostream& err);

}  // namespace taso::cli

#endif  // TASO_CLI_GENERATE_COMMAND_H_
