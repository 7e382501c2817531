// `taso verify`: prove a generation job's candidates and build its rule set.
// Without --store it starts the local store on --db (as `taso generate` left
// it) and M taso_verifier processes on loopback; a verifier that dies is
// restarted, and the classes it held go back to the queue when their leases
// expire. When every class has verdicts the store prunes the proved rules;
// a job it does not prune as one set (above taso_rules_db --prune_max_rules,
// or over several store shards) is pruned here, streaming, as `taso rules
// prune --store` does. The summary prints TASO's reduction table.
#ifndef TASO_CLI_VERIFY_COMMAND_H_
#define TASO_CLI_VERIFY_COMMAND_H_

#include <ostream>
#include <string>

namespace taso::cli {

struct VerifyOptions {
  std::string store;           // empty: start the local store on `db`
  std::string db = "taso-db";
  std::string job_id;          // empty: the only generated job
  int workers = 2;             // taso_verifier processes
  int threads = 1;             // prover threads per process
  int64_t lease_ms = 30'000;
  bool prove_once_per_form = true;  // the local store's --prove_once_per_form
  bool prove_from_smaller = true;   // the local store's --prove_from_smaller
  int64_t rlimit = 20'000'000;
  // Passed on when set (>= 0), else the programs' own defaults: a verifier
  // whose Z3 query runs past stall_s ends and is restarted (taso_verifier
  // --stall_s); the local store gives a class up once its lease expired
  // max_lease_expiries times (taso_rules_db --max_lease_expiries).
  double stall_s = -1;
  int max_lease_expiries = -1;
  bool json = false;
  int max_restarts = 3;        // per worker
  // Pruning the rules when the stores did not (false: `taso rules prune` does it).
  bool prune = true;
  int64_t prune_memory_limit_mb = 4096;
  int64_t prune_batch_rules = 20'000;
};

// Exit codes: 0 done; 1 verification failed (message on `err`); 2 bad
// options or no such job; 3 the store was unreachable; 130 interrupted
// (rerun to resume: verdicts already reported are kept).
int RunVerify(const VerifyOptions& options, std::ostream& out, std::ostream& err);

}  // namespace taso::cli

#endif  // TASO_CLI_VERIFY_COMMAND_H_
