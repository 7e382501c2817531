#include "rules_db/lease_queue.h"

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/rules.pb.h"

namespace taso::rules_db {
namespace {

using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);
const absl::Duration kMinute = absl::Minutes(1);

// Every class has one pair, (0, 1), standing for the rule "r-<fingerprint>".
LeaseQueue::ExpectedPairs OnePair(const std::string& fingerprint) {
  return LeaseQueue::ExpectedPairs{{{0, 1}, {"r-" + fingerprint, false}}};
}

// Both steps of leasing at once, as the store takes them: up to `max_classes`
// reserved, each read as OnePair, all granted.
std::vector<LeaseQueue::Granted> GrantRead(LeaseQueue& queue, const std::string& worker_id, int max_classes,
                                           absl::Time now) {
  std::vector<LeaseQueue::ReadClass> read;
  for (std::string& fp : queue.Reserve(max_classes)) {
    LeaseQueue::ExpectedPairs pairs = OnePair(fp);
    read.push_back({std::move(fp), std::move(pairs)});
  }
  return queue.Grant(worker_id, std::move(read), kMinute, now);
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

  auto granted = GrantRead(queue, "w1", 2, kNow);
  ASSERT_EQ(granted.size(), 2u);
  // "<job>/<hex fingerprint>/<number>": the format ReportVerdicts parses.
  EXPECT_EQ(granted[0].lease_id, "job/61/1");
  EXPECT_EQ(granted[0].fingerprint, "a");
  EXPECT_EQ(granted[1].lease_id, "job/62/2");
  EXPECT_EQ(granted[1].fingerprint, "b");
  EXPECT_EQ(granted[0].expires, kNow + kMinute);
  EXPECT_EQ(queue.pending(), 1);
  EXPECT_EQ(queue.leased(), 2);
  EXPECT_EQ(next, 3);

  const LeaseQueue::Lease* lease = queue.Held("job/61/1", "w1");
  ASSERT_NE(lease, nullptr);
  EXPECT_EQ(lease->fingerprint, "a");
  EXPECT_EQ(lease->expires, kNow + kMinute);
  EXPECT_EQ(lease->pairs.at({0, 1}).rule_id, "r-a");

  // Only what is left is granted, and nothing once all is leased.
  auto rest = GrantRead(queue, "w2", 10, kNow);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].fingerprint, "c");
  auto none = GrantRead(queue, "w3", 10, kNow);
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(queue.HasWork());  // leased classes are still work
}

TEST(LeaseQueue, OnlyTheWorkerHoldingALeaseIsRecognized) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a"}, 0, &next);
  auto granted = GrantRead(queue, "w1", 1, kNow);
  const std::string id = granted[0].lease_id;
  EXPECT_NE(queue.Held(id, "w1"), nullptr);
  EXPECT_EQ(queue.Held(id, "intruder"), nullptr);
  EXPECT_EQ(queue.Held("job/61/99", "w1"), nullptr);
  EXPECT_EQ(queue.Held("", "w1"), nullptr);
}

TEST(LeaseQueue, ExpiredLeasesGoBackToThePendingFrontAndTheirIdsAreDead) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a", "b", "c"}, 0, &next);
  auto granted = GrantRead(queue, "slow", 2, kNow);
  const std::string old_a = granted[0].lease_id;

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
  auto again = GrantRead(queue, "fast", 3, kNow + kMinute);
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(std::set<std::string>({again[0].fingerprint, again[1].fingerprint}),
            std::set<std::string>({"a", "b"}));
  EXPECT_EQ(again[2].fingerprint, "c");
  for (const LeaseQueue::Granted& g : again) {
    EXPECT_NE(g.lease_id, old_a);
    EXPECT_EQ(g.expires, kNow + 2 * kMinute);
  }
  EXPECT_EQ(queue.Held(old_a, "fast"), nullptr);
}

TEST(LeaseQueue, ARenewedLeaseOutlivesItsFirstExpiry) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a"}, 0, &next);
  auto granted = GrantRead(queue, "w", 1, kNow);
  const std::string id = granted[0].lease_id;
  ASSERT_TRUE(queue.Renew(id, kNow + 2 * kMinute).ok());
  queue.Expire(kNow + kMinute);
  EXPECT_NE(queue.Held(id, "w"), nullptr);
  queue.Expire(kNow + 2 * kMinute);
  EXPECT_EQ(queue.Held(id, "w"), nullptr);
  EXPECT_FALSE(queue.Renew(id, kNow + 3 * kMinute).ok());
}

TEST(LeaseQueue, ReservedClassesGoToNoOtherWorkerAndKeepTheJobOpen) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a", "b", "c"}, 0, &next);
  const std::vector<std::string> reserved = queue.Reserve(2);
  EXPECT_EQ(reserved, std::vector<std::string>({"a", "b"}));
  // While the store reads them, another worker is given only what is left,
  // and the reserved ones still count as pending work, not as leases.
  auto other = GrantRead(queue, "w2", 3, kNow);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].fingerprint, "c");
  EXPECT_EQ(queue.pending(), 2);
  EXPECT_EQ(queue.leased(), 1);
  ASSERT_TRUE(queue.Complete(other[0].lease_id).ok());
  queue.Expire(kNow + 10 * kMinute);  // no lease to expire: reservations are not leases
  EXPECT_TRUE(queue.HasWork());
  EXPECT_EQ(queue.pending(), 2);

  auto granted = queue.Grant("w1", {{"a", OnePair("a")}, {"b", OnePair("b")}}, kMinute, kNow);
  ASSERT_EQ(granted.size(), 2u);
  EXPECT_EQ(granted[0].lease_id, "job/61/2");
  EXPECT_EQ(granted[1].lease_id, "job/62/3");
  EXPECT_EQ(queue.pending(), 0);
  EXPECT_EQ(queue.leased(), 2);
  EXPECT_EQ(queue.Held("job/62/3", "w1")->pairs.at({0, 1}).rule_id, "r-b");
}

TEST(LeaseQueue, UnreservedClassesAreFirstInLineAgainWithNoLeaseNumberSpent) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a", "b", "c"}, 0, &next);
  const std::vector<std::string> reserved = queue.Reserve(2);
  // A read of b failed: the store puts both back.
  queue.Unreserve(reserved);
  EXPECT_EQ(queue.pending(), 3);
  EXPECT_EQ(queue.leased(), 0);
  EXPECT_EQ(next, 1);

  auto retry = GrantRead(queue, "w", 3, kNow);
  ASSERT_EQ(retry.size(), 3u);
  EXPECT_EQ(retry[0].lease_id, "job/61/1");
  EXPECT_EQ(retry[1].fingerprint, "b");
  EXPECT_EQ(retry[2].fingerprint, "c");
  for (const LeaseQueue::Granted& g : retry) ASSERT_TRUE(queue.Complete(g.lease_id).ok());
  EXPECT_EQ(queue.verified(), queue.total());
  EXPECT_FALSE(queue.HasWork());
}

TEST(LeaseQueue, QueuesSharingACounterNeverRepeatANumber) {
  int64_t next = 7;
  LeaseQueue first("j1", {"a"}, 0, &next);
  LeaseQueue second("j2", {"a"}, 0, &next);
  auto one = GrantRead(first, "w", 1, kNow);
  auto two = GrantRead(second, "w", 1, kNow);
  EXPECT_EQ(one[0].lease_id, "j1/61/7");
  EXPECT_EQ(two[0].lease_id, "j2/61/8");
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
  auto granted = GrantRead(queue, "w", 2, kNow);
  const std::string a = granted[0].lease_id;
  const std::string b = granted[1].lease_id;

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
  auto b_again = GrantRead(queue, "w", 2, kNow + 10 * kMinute);
  ASSERT_EQ(b_again.size(), 1u);
  EXPECT_EQ(b_again[0].fingerprint, "b");
  ASSERT_TRUE(queue.Complete(b_again[0].lease_id).ok());
  EXPECT_EQ(queue.verified(), queue.total());
  EXPECT_FALSE(queue.HasWork());
}

TEST(LeaseQueue, AClassWhoseLeaseExpiresTooOftenIsGivenUpNotLeasedAgain) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a", "b"}, 0, &next, /*max_expiries=*/2);
  absl::Time now = kNow;
  // a's first lease expires: it is first in line again.
  auto first = GrantRead(queue, "w", 1, now);
  ASSERT_EQ(first[0].fingerprint, "a");
  now += 2 * kMinute;
  queue.Expire(now);
  EXPECT_TRUE(queue.TakeGivenUp().empty());
  auto second = GrantRead(queue, "w", 1, now);
  ASSERT_EQ(second[0].fingerprint, "a");
  // The second expiry gives it up: b is leased next, a never again.
  now += 2 * kMinute;
  queue.Expire(now);
  EXPECT_EQ(queue.pending(), 2);  // b, and a until it is settled
  EXPECT_TRUE(queue.HasWork());
  auto third = GrantRead(queue, "w", 2, now);
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].fingerprint, "b");
  ASSERT_TRUE(queue.Complete(third[0].lease_id).ok());

  // Taken once; a store that could not write it puts it back, to take again.
  auto given_up = queue.TakeGivenUp();
  ASSERT_EQ(given_up.size(), 1u);
  EXPECT_EQ(given_up[0], (std::pair<std::string, int>("a", 2)));
  EXPECT_TRUE(queue.TakeGivenUp().empty());
  EXPECT_TRUE(queue.HasWork());
  queue.Unsettle(given_up);
  given_up = queue.TakeGivenUp();
  ASSERT_EQ(given_up.size(), 1u);
  queue.Settled("a");
  EXPECT_EQ(queue.verified(), queue.total());
  EXPECT_EQ(queue.pending(), 0);
  EXPECT_FALSE(queue.HasWork());
}

TEST(LeaseQueue, WithoutALimitAClassIsLeasedAgainAfterEveryExpiry) {
  int64_t next = 1;
  LeaseQueue queue("job", {"a"}, 0, &next);
  absl::Time now = kNow;
  for (int i = 0; i < 10; ++i) {
    auto granted = GrantRead(queue, "w", 1, now);
    ASSERT_EQ(granted.size(), 1u) << "expiry " << i;
    now += 2 * kMinute;
    queue.Expire(now);
    EXPECT_TRUE(queue.TakeGivenUp().empty());
  }
}

TEST(LeaseQueue, ACompletedClassStartsItsExpiryCountAfresh) {
  // Counts are per class and only of expiries in a row before its verdict:
  // a class completed after one expiry leaves nothing behind.
  int64_t next = 1;
  LeaseQueue queue("job", {"a", "b"}, 0, &next, /*max_expiries=*/2);
  auto first = GrantRead(queue, "w", 2, kNow);
  queue.Expire(kNow + 2 * kMinute);
  auto again = GrantRead(queue, "w", 2, kNow + 2 * kMinute);
  ASSERT_EQ(again.size(), 2u);
  ASSERT_TRUE(queue.Complete(again[0].lease_id).ok());
  queue.Expire(kNow + 4 * kMinute);  // the other class's second expiry
  auto given_up = queue.TakeGivenUp();
  ASSERT_EQ(given_up.size(), 1u);
  EXPECT_EQ(given_up[0].first, again[1].fingerprint);
}

TEST(LeaseQueue, AReleasedClassIsFirstInLineAndNotCountedAsAnExpiry) {
  // A worker stopping with classes it has not started gives them back: they
  // are leased again at once, and however often that happens, never given up.
  int64_t next = 1;
  LeaseQueue queue("job", {"a", "b", "c"}, 0, &next, /*max_expiries=*/1);
  for (int i = 0; i < 3; ++i) {
    auto granted = GrantRead(queue, "w", 2, kNow);
    ASSERT_EQ(granted.size(), 2u);
    EXPECT_EQ(granted[0].fingerprint, "a") << "round " << i;
    EXPECT_EQ(granted[1].fingerprint, "b") << "round " << i;
    ASSERT_TRUE(queue.Release(granted[1].lease_id).ok());
    ASSERT_TRUE(queue.Release(granted[0].lease_id).ok());
    EXPECT_EQ(queue.Held(granted[0].lease_id, "w"), nullptr);
    EXPECT_FALSE(queue.Release(granted[0].lease_id).ok());  // not held any more
    EXPECT_EQ(queue.leased(), 0);
    EXPECT_EQ(queue.pending(), 3);
    queue.Expire(kNow + 10 * kMinute);
    EXPECT_TRUE(queue.TakeGivenUp().empty()) << "round " << i;
  }
  // An expiry still counts: with a limit of one, the first gives a class up.
  auto granted = GrantRead(queue, "w", 1, kNow);
  queue.Expire(kNow + 2 * kMinute);
  auto given_up = queue.TakeGivenUp();
  ASSERT_EQ(given_up.size(), 1u);
  EXPECT_EQ(given_up[0].first, "a");
}

}  // namespace
}  // namespace taso::rules_db
