#include "net/retry.h"

#include "gtest/gtest.h"

namespace taso::net {
namespace {

RetryPolicy Fast() {
  RetryPolicy policy;
  policy.initial_backoff = absl::Milliseconds(1);
  policy.max_backoff = absl::Milliseconds(4);
  policy.retry_for = absl::Milliseconds(200);
  return policy;
}

TEST(RetryTest, RetriesUnavailableUntilItSucceeds) {
  int calls = 0;
  absl::Status s = RetryWithBackoff(Fast(), [&] {
    return ++calls < 3 ? absl::UnavailableError("down") : absl::OkStatus();
  });
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(calls, 3);
}

TEST(RetryTest, StopsAtAnErrorThatIsNotRetryable) {
  int calls = 0;
  absl::Status s = RetryWithBackoff(Fast(), [&] {
    ++calls;
    return absl::InvalidArgumentError("bad");
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(calls, 1);
}

TEST(RetryTest, GivesUpAfterRetryForWithoutProgressAndReportsEachRetry) {
  int retries = 0;
  RetryPolicy policy = Fast();
  policy.on_retry = [&](const absl::Status&, absl::Duration wait) {
    ++retries;
    EXPECT_LE(wait, absl::Milliseconds(4));
  };
  absl::Status s = RetryWithBackoff(policy, [] { return absl::UnavailableError("down"); });
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_GT(retries, 10);
}

TEST(RetryTest, ProgressRestartsTheClock) {
  RetryPolicy policy = Fast();
  policy.retry_for = absl::Milliseconds(30);
  const absl::Time start = absl::Now();
  int calls = 0;
  absl::Status s = RetryWithBackoff(policy, [&](bool& progressed) {
    progressed = true;
    absl::SleepFor(absl::Milliseconds(10));
    return ++calls < 10 ? absl::UnavailableError("down") : absl::OkStatus();
  });
  EXPECT_TRUE(s.ok());
  EXPECT_GT(absl::Now() - start, policy.retry_for);
}

}  // namespace
}  // namespace taso::net
