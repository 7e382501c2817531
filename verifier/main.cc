// taso_verifier: proves candidate rules against the operator axioms.
//   taso_verifier --store HOST:PORT [--threads N] [--job ID]   lease and prove a job's candidates
// Exit codes: 0 no work left; 1 an error retrying cannot fix (see the
// message); 2 bad flags; 3 the rule database stayed unreachable.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_cat.h"
#include "core/version.h"
#include "verifier/worker.h"

ABSL_FLAG(std::string, store, "", "rule database (taso_rules_db) address");
ABSL_FLAG(std::string, job, "", "verify this job only; empty: whichever job has work");
ABSL_FLAG(int32_t, threads, 1, "prover threads, each holding its own lease");
ABSL_FLAG(std::string, worker_id, "", "name in leases and provenance; default host:pid");
ABSL_FLAG(int64_t, lease_ms, 60000, "lease length; a class not reported within it goes to another worker");
ABSL_FLAG(int64_t, rlimit, 20000000, "Z3 resource limit per proof (deterministic; 0: none)");
ABSL_FLAG(int32_t, timeout_ms, 10000, "wall-clock limit per proof query");
ABSL_FLAG(bool, wait, false, "keep polling for new jobs instead of exiting when no work is left");
ABSL_FLAG(int32_t, retry_seconds, 120, "keep retrying an unreachable rule database this long");
ABSL_FLAG(bool, quiet, false, "do not log expired leases to stderr");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "proves candidate rules with Z3\n"
      "  taso_verifier --store HOST:PORT [--threads N] [--job ID]");
  absl::FlagsUsageConfig usage_config;
  usage_config.version_string = [] { return std::string("taso_verifier ") + taso::kVersion + "\n"; };
  absl::SetFlagsUsageConfig(usage_config);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 1) {
    std::cerr << "error: unexpected argument '" << args[1] << "' (try --help)\n";
    return 2;
  }
  taso::verifier::VerifierWorkerOptions options;
  options.store = absl::GetFlag(FLAGS_store);
  options.job_id = absl::GetFlag(FLAGS_job);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.lease_ms = absl::GetFlag(FLAGS_lease_ms);
  options.prover.rlimit = static_cast<uint64_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_rlimit)));
  options.prover.timeout_ms = static_cast<uint32_t>(std::max(0, absl::GetFlag(FLAGS_timeout_ms)));
  options.exit_when_done = !absl::GetFlag(FLAGS_wait);
  options.retry_for = absl::Seconds(absl::GetFlag(FLAGS_retry_seconds));
  options.worker_id = absl::GetFlag(FLAGS_worker_id);
  if (options.worker_id.empty()) {
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    options.worker_id = absl::StrCat(host, ":", getpid());
  }
  if (options.store.empty()) {
    std::cerr << "error: --store is required (try --help)\n";
    return 2;
  }
  if (options.threads < 1 || options.threads > 256) {
    std::cerr << "error: --threads must be in 1..256\n";
    return 2;
  }
  if (options.lease_ms < 1000) {
    std::cerr << "error: --lease_ms must be at least 1000\n";
    return 2;
  }
  if (!absl::GetFlag(FLAGS_quiet)) {
    options.log = [](const std::string& line) { std::fprintf(stderr, "taso_verifier: %s\n", line.c_str()); };
  }
  taso::verifier::VerifierCounters counters;
  absl::Status s = taso::verifier::RunVerifierWorker(options, counters);
  std::fprintf(stderr, "taso_verifier: %lld classes; %lld proved, %lld refuted, %lld timeout, %lld unknown, %lld rejected by the re-check\n",
               (long long)counters.classes.load(), (long long)counters.proved.load(), (long long)counters.refuted.load(),
               (long long)counters.timeout.load(), (long long)counters.unknown.load(),
               (long long)counters.rejected_precheck.load());
  if (!s.ok()) {
    std::cerr << "taso_verifier: error: " << s.message() << "\n";
    return s.code() == absl::StatusCode::kUnavailable ? 3 : 1;
  }
  return 0;
}
