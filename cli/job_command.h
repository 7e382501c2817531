// `taso job create|status|cancel`: a generation job shared by machines.
// `create` registers the job on every store (--store, all of them) and
// prints its id and the spec it used; each machine then runs some shards
// with `taso generate --job ID --shards-here LIST --store ...` (or one
// taso_generator per shard). A shard is done once every store has it done;
// the job is complete when all shards are. `cancel` stops its generators
// (a later `create` with the same spec, or `generate --shards-here`, resumes).
#ifndef TASO_CLI_JOB_COMMAND_H_
#define TASO_CLI_JOB_COMMAND_H_

#include <ostream>
#include <string>

namespace taso::cli {

struct JobOptions {
  std::string subcommand;  // create | status | cancel
  std::string store;       // every store of the job, comma-separated, any order
  std::string job_id;      // create: empty derives one from the spec
  std::string spec_path;   // create: empty: TASO's default spec
  int max_ops = 3;
  int shards = 2;
  bool json = false;
};

// Exit codes: 0 ok (status: whatever state); 1 error; 2 bad options or no
// such job; 3 a store unreachable.
int RunJob(const JobOptions& options, std::ostream& out, std::ostream& err);

}  // namespace taso::cli

#endif  // TASO_CLI_JOB_COMMAND_H_
