// One generator shard as a client of the hash store(s): enumerates its slice
// of the tree and streams packed (fingerprint, graph) records, routed to the
// store shard that owns each fingerprint.
//
// Resuming: each batch carries the shard's enumeration cursor and the store
// commits both together, so after any failure (this process killed, a store
// killed, the network gone) the worker asks the stores where they stand and
// re-enumerates from the smallest cursor. Records are idempotent in the store,
// so what a store already had is harmless to resend. The shard reports done
// only after every stream has closed cleanly, i.e. after every batch is stored.
#ifndef TASO_GENERATOR_WORKER_H_
#define TASO_GENERATOR_WORKER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace taso::generator {

// Progress for --metrics_listen, updated as the worker runs; all monotone
// except done_fraction.
struct WorkerCounters {
  std::atomic<int64_t> batches_sent{0};   // one per store per flush
  std::atomic<int64_t> records_sent{0};   // graphs streamed (a resume may resend some)
  std::atomic<int64_t> attempts{0};       // connections to the stores, the first included
  std::atomic<double> done_fraction{0};   // of this shard's enumeration
};

struct WorkerOptions {
  // Store shard addresses in any order: the worker asks each its index.
  std::vector<std::string> stores;
  std::string job_id;
  int shard = 0;
  int num_shards = 1;
  int batch_records = 50000;
  // Keep retrying an unreachable store for this long before giving up.
  absl::Duration retry_for = absl::Minutes(5);
  absl::Duration progress_interval = absl::Seconds(1);
  std::function<void(const std::string&)> log;  // one line per event; may be empty
  WorkerCounters* counters = nullptr;            // may be null; must outlive RunWorker
};

// Returns OK once the shard is complete and stored. Errors that retrying
// cannot fix (bad job, full disk) return at once; an unreachable store
// returns Unavailable after `retry_for`.
absl::Status RunWorker(const WorkerOptions& options);

}  // namespace taso::generator

#endif  // TASO_GENERATOR_WORKER_H_
