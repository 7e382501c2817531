// Calling a peer again until it answers: the one retry loop of the workers
// that stream to or lease from a store they may temporarily lose.
#ifndef TASO_NET_RETRY_H_
#define TASO_NET_RETRY_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace taso::net {

// Unavailable only: the peer is down or unreachable.
bool IsUnavailable(const absl::Status& status);

struct RetryPolicy {
  // Give up once this long has passed without progress.
  absl::Duration retry_for = absl::Minutes(2);
  // The first wait, doubled (by `multiplier`) after each failure up to
  // `max_backoff`, and reset when an attempt made progress.
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(5);
  double multiplier = 2;
  // Which errors are worth another attempt; others end the loop at once.
  std::function<bool(const absl::Status&)> retryable = IsUnavailable;
  // Told of each error about to be retried and the wait before it (a log).
  std::function<void(const absl::Status&, absl::Duration)> on_retry;
};

// Calls `attempt` until it returns ok, returns an error `policy.retryable`
// rejects, or `policy.retry_for` passes without progress; returns the last
// result. `attempt` sets its argument to true when it got somewhere (e.g.
// stored a batch) before failing, which restarts the clock and the backoff.
absl::Status RetryWithBackoff(const RetryPolicy& policy, const std::function<absl::Status(bool& progressed)>& attempt);

// As above for a single call that either succeeds or makes no progress.
absl::Status RetryWithBackoff(const RetryPolicy& policy, const std::function<absl::Status()>& call);

}  // namespace taso::net

#endif  // TASO_NET_RETRY_H_
