#include "verifier/leases_in_hand.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace taso::verifier {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);

std::vector<std::string> Ids(const std::vector<LeasesInHand::Report>& reports) {
  std::vector<std::string> ids;
  for (const auto& r : reports) ids.push_back(r.lease_id());
  return ids;
}

LeasesInHand::Report Complete(const std::string& lease_id) {
  LeasesInHand::Report r;
  r.set_lease_id(lease_id);
  r.set_complete(true);
  return r;
}

TEST(LeasesInHand, AStoppingThreadReleasesOnlyTheLeasesItHasNotStarted) {
  LeasesInHand books(1);
  books.Leased(0, 0, "w/0", {"a", "b", "c"}, kT0);
  books.Started(0, "a");
  const auto done = Complete("a");
  books.Finished(0, &done);
  books.Started(0, "b");
  books.Finished(0, nullptr);  // b's lease expired on the way: nothing to send
  EXPECT_EQ(Ids(books.TakeFinished(0)), std::vector<std::string>{"a"});
  EXPECT_TRUE(books.TakeFinished(0).empty());
  const auto releases = books.TakeUnstarted(0);
  ASSERT_EQ(Ids(releases), std::vector<std::string>{"c"});
  EXPECT_EQ(releases[0].worker_id(), "w/0");
  EXPECT_FALSE(releases[0].complete());
  EXPECT_TRUE(releases[0].release());
  EXPECT_TRUE(releases[0].verdicts().empty());
  EXPECT_TRUE(books.TakeUnstarted(0).empty());
}

TEST(LeasesInHand, AStalledWorkerGivesBackAllButTheClassThatStuck) {
  LeasesInHand books(3);
  books.Leased(0, 0, "w/0", {"a1", "a2", "a3"}, kT0);
  books.Started(0, "a1");
  const auto a1 = Complete("a1");
  books.Finished(0, &a1);
  books.Started(0, "a2");  // stuck in Z3 here
  books.Leased(1, 1, "w/1", {"b1", "b2"}, kT0);
  books.Started(1, "b1");  // proving, unfinished: no fault of its own
  books.Leased(2, 0, "w/2", {}, kT0);

  auto by_shard = books.GiveBackAllBut(/*stalled=*/0);
  ASSERT_EQ(by_shard.size(), 2u);
  // Shard 0: a1's report, a3's release; a2, the class that stalled, is left
  // to expire and be counted.
  EXPECT_EQ(Ids(by_shard[0]), (std::vector<std::string>{"a1", "a3"}));
  EXPECT_TRUE(by_shard[0][0].complete());
  EXPECT_TRUE(by_shard[0][1].release());
  EXPECT_EQ(Ids(by_shard[1]), (std::vector<std::string>{"b2", "b1"}));
  for (const auto& r : by_shard[1]) {
    EXPECT_TRUE(r.release());
    EXPECT_EQ(r.worker_id(), "w/1");
  }
  EXPECT_TRUE(books.GiveBackAllBut(0).empty()) << "given back once";
}

TEST(LeasesInHand, ABatchBehindASlowClassIsHandedBackAndItsThreadSkipsWhatWent) {
  LeasesInHand books(2);
  books.Leased(0, 1, "w/0", {"a1", "a2", "a3", "a4"}, kT0);
  ASSERT_TRUE(books.Started(0, "a1"));
  const auto a1 = Complete("a1");
  books.Finished(0, &a1);
  ASSERT_TRUE(books.Started(0, "a2"));  // slow
  books.Leased(1, 0, "w/1", {"b1", "b2"}, kT0 + absl::Seconds(30));
  ASSERT_TRUE(books.Started(1, "b1"));

  EXPECT_TRUE(books.TakeOverdue(kT0).empty()) << "leased at the limit, not before it";
  auto overdue = books.TakeOverdue(kT0 + absl::Seconds(20));
  ASSERT_EQ(overdue.size(), 1u) << "thread 1's batch is younger";
  EXPECT_EQ(overdue[0].thread, 0);
  EXPECT_EQ(overdue[0].shard, 1);
  EXPECT_EQ(Ids(overdue[0].finished), std::vector<std::string>{"a1"});
  EXPECT_TRUE(overdue[0].finished[0].complete());
  EXPECT_EQ(Ids(overdue[0].releases), (std::vector<std::string>{"a3", "a4"}));
  for (const auto& r : overdue[0].releases) {
    EXPECT_TRUE(r.release());
    EXPECT_EQ(r.worker_id(), "w/0");
  }
  EXPECT_TRUE(books.TakeOverdue(kT0 + absl::Seconds(20)).empty()) << "handed back once";

  books.Finished(0, nullptr);
  EXPECT_FALSE(books.Started(0, "a3")) << "released: the thread must not prove it under a lease it gave up";
  EXPECT_FALSE(books.Started(0, "a4"));
  EXPECT_TRUE(books.TakeUnstarted(0).empty());
  // The class in progress when the batch went is the thread's still: a stall
  // now leaves only it to expire.
  auto by_shard = books.GiveBackAllBut(/*stalled=*/1);
  ASSERT_EQ(by_shard.size(), 1u);
  EXPECT_EQ(Ids(by_shard[0]), std::vector<std::string>{"b2"});
}

}  // namespace
}  // namespace taso::verifier
