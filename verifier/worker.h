// A verifier worker as a client of the rule database: leases candidate
// classes, proves their pairs, and reports one verdict per pair, each a rule
// with its status. Pairs the store's re-check rejected are reported as
// REJECTED_PRECHECK with the store's reason, so every pair ends up with a
// verdict. Long classes send partial reports, which renew the lease; a
// worker that dies simply lets its leases expire, and the classes go to
// another worker. One that stops or stalls gives back what it holds first
// (leases_in_hand.h).
#ifndef TASO_VERIFIER_WORKER_H_
#define TASO_VERIFIER_WORKER_H_

#include <atomic>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "verifier/prover.h"

namespace taso::verifier {

struct VerifierWorkerOptions {
  // Rule database address, or every store shard's, comma-separated, in any
  // order: the worker takes classes from each in turn.
  std::string store;
  std::string job_id;    // empty: whichever job has work
  std::string worker_id;
  int threads = 1;       // each with its own prover and lease
  int64_t lease_ms = 60'000;
  // A thread still busy with a batch of leases after this long hands back
  // what it has not started (and reports what it finished), so that one
  // slow class does not hold the rest of its batch until their leases
  // expire. Zero: a third of lease_ms, when finished classes are reported
  // early too.
  absl::Duration hand_back_after = absl::ZeroDuration();
  ProverOptions prover;
  // Return once no job has work left (else keep polling for new jobs).
  bool exit_when_done = true;
  absl::Duration poll_interval = absl::Milliseconds(200);
  absl::Duration retry_for = absl::Minutes(2);  // an unreachable store
  std::function<void(const std::string&)> log;
  // True once the worker should stop (e.g. after SIGTERM): each thread
  // finishes and reports the class it is proving, takes no new lease, and
  // the run returns ok. Classes leased but not started are released: the
  // store leases them again at once, and does not count an expiry.
  std::function<bool()> stop;
  // A Z3 query that runs longer than this stalls the verifier (zero: no
  // watchdog; stall_watchdog.h). on_stall is then called once, from the
  // watchdog's thread, with a message naming the class and pair in hand.
  // Unset, it reports the classes finished, releases every lease but the
  // stuck thread's, logs, and ends the process with kStalledExitCode: a
  // thread inside Z3 cannot be stopped, and the stuck class's lease must
  // expire so that it goes to another verifier (or, after expiring too
  // often, is given up by the store).
  // Five minutes, thirty times the 10-s timeout: a size-4 run on glibc had
  // a query run past one minute twice and then get through; the stalls
  // this is for ran over five.
  absl::Duration stall_after = absl::Minutes(5);
  std::function<void(const std::string&)> on_stall;
};

// The exit code of a verifier ended by its stall watchdog (EX_TEMPFAIL):
// its supervisor starts it again without counting a failure.
inline constexpr int kStalledExitCode = 75;

struct VerifierCounters {
  std::atomic<int64_t> classes{0};
  std::atomic<int64_t> proved{0};
  std::atomic<int64_t> refuted{0};
  std::atomic<int64_t> timeout{0};
  std::atomic<int64_t> unknown{0};
  std::atomic<int64_t> rejected_precheck{0};
  std::atomic<int64_t> errors{0};
  std::atomic<int64_t> prover_renewals{0};  // fresh Z3 contexts (ProverOptions::renew_above_mib)
};

absl::Status RunVerifierWorker(const VerifierWorkerOptions& options, VerifierCounters& counters);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_WORKER_H_
