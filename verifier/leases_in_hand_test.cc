#include "verifier/leases_in_hand.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace taso::verifier {
namespace {

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
  books.Leased(0, 0, "w/0", {"a", "b", "c"});
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
  books.Leased(0, 0, "w/0", {"a1", "a2", "a3"});
  books.Started(0, "a1");
  const auto a1 = Complete("a1");
  books.Finished(0, &a1);
  books.Started(0, "a2");  // stuck in Z3 here
  books.Leased(1, 1, "w/1", {"b1", "b2"});
  books.Started(1, "b1");  // proving, unfinished: no fault of its own
  books.Leased(2, 0, "w/2", {});

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

}  // namespace
}  // namespace taso::verifier
