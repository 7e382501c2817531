#include "net/retry.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace taso::net {

bool IsUnavailable(const absl::Status& status) { return status.code() == absl::StatusCode::kUnavailable; }

absl::Status RetryWithBackoff(const RetryPolicy& policy, const std::function<absl::Status(bool& progressed)>& attempt) {
  absl::Time last_progress = absl::Now();
  absl::Duration backoff = policy.initial_backoff;
  while (true) {
    bool progressed = false;
    absl::Status s = attempt(progressed);
    if (s.ok()) return s;
    if (progressed) {
      last_progress = absl::Now();
      backoff = policy.initial_backoff;
    }
    if (!policy.retryable(s) || absl::Now() - last_progress > policy.retry_for) return s;
    if (policy.on_retry) policy.on_retry(s, backoff);
    absl::SleepFor(backoff);
    backoff = std::min(backoff * policy.multiplier, policy.max_backoff);
  }
}

absl::Status RetryWithBackoff(const RetryPolicy& policy, const std::function<absl::Status()>& call) {
  return RetryWithBackoff(policy, [&call](bool&) { return call(); });
}

}  // namespace taso::net
