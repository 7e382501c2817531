#include "rules_db/lease_queue.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/rules.pb.h"

namespace taso::rules_db {
namespace {

using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);
const absl::Duration kMinute = absl::Minutes(1);

// Every class has one pair, (0, 1), standing for the rule "r-<fingerprint>".
absl::StatusOr<LeaseQueue::ExpectedPairs> OnePair(const std::string& fingerprint) {
  return LeaseQueue::ExpectedPairs{{{0, 1}, {"r-" + fingerprint, false}}};
}

PairVerdict Verdict(int source, int target, rules::RuleStatus status) {
  PairVerdict v;
  v.set_source_member(source);
  v.set_target_member(target);
  v.mutable_rule()->set_status(status);
  return v;
}

TEST(LeaseQueue, GrantLeasesPendingClassesFrontFirstUpToTheLimit) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a", "b", "c"}, 2, &next);
  EXPECT_EQ(queue.total(), 5);
  EXPECT_EQ(queue.verified(), 2);

  auto granted = queue.Grant("w1", 2, kMinute, kNow, OnePair);
  ASSERT_TRUE(granted.ok()) << granted.status();
  ASSERT_EQ(granted->size(), 2u);
  // "<job>/<hex fingerprint>/<number>": the format ReportVerdicts parses.
  EXPECT_EQ((*granted)[0].lease_id, "job/61/1");
  EXPECT_EQ((*granted)[0].fingerprint, "a");
  EXPECT_EQ((*granted)[1].lease_id, "job/62/2");
  EXPECT_EQ((*granted)[1].fingerprint, "b");
  EXPECT_EQ((*granted)[0].expires, kNow + kMinute);
  EXPECT_EQ(queue.pending(), 1);
  EXPECT_EQ(queue.leased(), 2);
  EXPECT_EQ(next, 3);

  const LeaseQueue::Lease* lease = queue.Held("job/61/1", "w1");
  ASSERT_NE(lease, nullptr);
  EXPECT_EQ(lease->fingerprint, "a");
  EXPECT_EQ(lease->expires, kNow + kMinute);
  EXPECT_EQ(lease->pairs.at({0, 1}).rule_id, "r-a");

  // Only what is left is granted, and nothing once all is leased.
  auto rest = queue.Grant("w2", 10, kMinute, kNow, OnePair);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].fingerprint, "c");
  auto none = queue.Grant("w3", 10, kMinute, kNow, OnePair);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_TRUE(queue.HasWork());  // leased classes are still work
}

TEST(LeaseQueue, OnlyTheWorkerHoldingALeaseIsRecognized) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a"}, 0, &next);
  auto granted = queue.Grant("w1", 1, kMinute, kNow, OnePair);
  ASSERT_TRUE(granted.ok());
  const std::string id = (*granted)[0].lease_id;
  EXPECT_NE(queue.Held(id, "w1"), nullptr);
  EXPECT_EQ(queue.Held(id, "intruder"), nullptr);
  EXPECT_EQ(queue.Held("job/61/99", "w1"), nullptr);
  EXPECT_EQ(queue.Held("", "w1"), nullptr);
}

TEST(LeaseQueue, ExpiredLeasesGoBackToThePendingFrontAndTheirIdsAreDead) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a", "b", "c"}, 0, &next);
  auto granted = queue.Grant("slow", 2, kMinute, kNow, OnePair);
  ASSERT_TRUE(granted.ok());
  const std::string old_a = (*granted)[0].lease_id;

  // Not yet: a lease lives until its expiry.
  queue.Expire(kNow + kMinute - absl::Nanoseconds(1));
  EXPECT_EQ(queue.leased(), 2);
  EXPECT_NE(queue.Held(old_a, "slow"), nullptr);

  queue.Expire(kNow + kMinute);
  EXPECT_EQ(queue.leased(), 0);
  EXPECT_EQ(queue.pending(), 3);
  EXPECT_TRUE(queue.HasWork());
  // The late worker's report finds no lease.
  EXPECT_EQ(queue.Held(old_a, "slow"), nullptr);

  // The expired classes are leased again before the one never leased, under
  // new ids.
  auto again = queue.Grant("fast", 3, kMinute, kNow + kMinute, OnePair);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 3u);
  EXPECT_EQ(std::set<std::string>({(*again)[0].fingerprint, (*again)[1].fingerprint}),
            std::set<std::string>({"a", "b"}));
  EXPECT_EQ((*again)[2].fingerprint, "c");
  for (const LeaseQueue::Granted& g : *again) {
    EXPECT_NE(g.lease_id, old_a);
    EXPECT_EQ(g.expires, kNow + 2 * kMinute);
  }
  EXPECT_EQ(queue.Held(old_a, "fast"), nullptr);
}

TEST(LeaseQueue, ARenewedLeaseOutlivesItsFirstExpiry) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a"}, 0, &next);
  auto granted = queue.Grant("w", 1, kMinute, kNow, OnePair);
  ASSERT_TRUE(granted.ok());
  const std::string id = (*granted)[0].lease_id;
  ASSERT_TRUE(queue.Renew(id, kNow + 2 * kMinute).ok());
  queue.Expire(kNow + kMinute);
  EXPECT_NE(queue.Held(id, "w"), nullptr);
  queue.Expire(kNow + 2 * kMinute);
  EXPECT_EQ(queue.Held(id, "w"), nullptr);
  EXPECT_FALSE(queue.Renew(id, kNow + 3 * kMinute).ok());
}

TEST(LeaseQueue, AReadErrorLeavesTheClassPendingAndKeepsEarlierLeases) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a", "b", "c"}, 0, &next);
  auto failing_on_b = [](const std::string& fp) -> absl::StatusOr<LeaseQueue::ExpectedPairs> {
    if (fp == "b") return absl::DataLossError("class b is corrupt");
    return OnePair(fp);
  };
  auto granted = queue.Grant("w", 3, kMinute, kNow, failing_on_b);
  EXPECT_EQ(granted.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(queue.leased(), 1);   // a
  EXPECT_EQ(queue.pending(), 2);  // b, c
  EXPECT_NE(queue.Held("job/61/1", "w"), nullptr);

  // b is still first in line, and no lease number was spent on it.
  auto retry = queue.Grant("w", 1, kMinute, kNow, OnePair);
  ASSERT_TRUE(retry.ok());
  ASSERT_EQ(retry->size(), 1u);
  EXPECT_EQ((*retry)[0].lease_id, "job/62/2");
}

TEST(LeaseQueue, QueuesSharingACounterNeverRepeatANumber) {
  int64_t next = 7;
  LeaseQueue first("j1", {"a"}, 0, &next);
  LeaseQueue second("j2", {"a"}, 0, &next);
  auto one = first.Grant("w", 1, kMinute, kNow, OnePair);
  auto two = second.Grant("w", 1, kMinute, kNow, OnePair);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ((*one)[0].lease_id, "j1/61/7");
  EXPECT_EQ((*two)[0].lease_id, "j2/61/8");
}

TEST(LeaseQueue, AVerdictMustBeAboutAPairOfTheLeasedClass) {
  LeaseQueue::Lease lease{"a", "w", kNow + kMinute, {{{0, 1}, {"r01", false}}, {{0, 2}, {"r02", true}}}};

  EXPECT_TRUE(LeaseQueue::CheckVerdict(lease, Verdict(0, 1, rules::RULE_STATUS_PROVED), "r01").ok());
  // A rejected pair may be reported as anything but proved.
  EXPECT_TRUE(LeaseQueue::CheckVerdict(lease, Verdict(0, 2, rules::RULE_STATUS_REFUTED), "r02").ok());

  absl::Status no_pair = LeaseQueue::CheckVerdict(lease, Verdict(1, 2, rules::RULE_STATUS_PROVED), "r12");
  EXPECT_EQ(no_pair.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_pair.message(), HasSubstr("verdict for pair (1, 2): the leased class has no such candidate pair"));

  absl::Status other_rule = LeaseQueue::CheckVerdict(lease, Verdict(0, 1, rules::RULE_STATUS_PROVED), "r99");
  EXPECT_EQ(other_rule.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(other_rule.message(), HasSubstr("its rule r99 is not the pair's rule r01"));

  absl::Status pruned = LeaseQueue::CheckVerdict(lease, Verdict(0, 1, rules::RULE_STATUS_PRUNED), "r01");
  EXPECT_EQ(pruned.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pruned.message(), HasSubstr("pruned is the store's status"));

  absl::Status rejected = LeaseQueue::CheckVerdict(lease, Verdict(0, 2, rules::RULE_STATUS_PROVED), "r02");
  EXPECT_EQ(rejected.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rejected.message(), HasSubstr("re-check rejected this pair"));
}

TEST(LeaseQueue, CompletingALeaseCountsItsClassOnce) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a", "b"}, 1, &next);
  auto granted = queue.Grant("w", 2, kMinute, kNow, OnePair);
  ASSERT_TRUE(granted.ok());
  const std::string a = (*granted)[0].lease_id;
  const std::string b = (*granted)[1].lease_id;

  ASSERT_TRUE(queue.Complete(a).ok());
  EXPECT_EQ(queue.verified(), 2);
  EXPECT_EQ(queue.leased(), 1);
  EXPECT_EQ(queue.Held(a, "w"), nullptr);
  // A second report completing the same lease is not counted again.
  EXPECT_FALSE(queue.Complete(a).ok());
  EXPECT_EQ(queue.verified(), 2);

  // A completed class never comes back, even once every lease has expired.
  queue.Expire(kNow + 10 * kMinute);
  EXPECT_EQ(queue.pending(), 1);  // b only
  EXPECT_FALSE(queue.Complete(b).ok());  // expired: b is pending again
  auto b_again = queue.Grant("w", 2, kMinute, kNow + 10 * kMinute, OnePair);
  ASSERT_TRUE(b_again.ok());
  ASSERT_EQ(b_again->size(), 1u);
  EXPECT_EQ((*b_again)[0].fingerprint, "b");
  ASSERT_TRUE(queue.Complete((*b_again)[0].lease_id).ok());
  EXPECT_EQ(queue.verified(), queue.total());
  EXPECT_FALSE(queue.HasWork());
}

}  // namespace
}  // namespace taso::rules_db
