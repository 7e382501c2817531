// The backoff scheduler's bookkeeping: bans, their growth, lifting them, and
// the behaviour without backoff.
#include "optimizer/eqsat/rule_scheduler.h"

#include "gtest/gtest.h"

namespace taso::optimizer {
namespace {

TEST(RuleSchedulerTest, ARuleOverItsLimitSitsOutABanThatDoublesEachTime) {
  RuleSchedulerOptions options;
  options.match_limit = 10;
  options.ban_length = 2;
  RuleScheduler s(2, options);
  EXPECT_EQ(s.SearchLimit(0), 11);  // one more, so that exceeding shows
  EXPECT_TRUE(s.Admit(1, 0, false));
  EXPECT_FALSE(s.Admit(0, 0, true));
  EXPECT_EQ(s.bans(), 1);
  EXPECT_EQ(s.SearchLimit(0), 21);
  EXPECT_FALSE(s.Searchable(0, 1));
  EXPECT_FALSE(s.Searchable(0, 2));
  EXPECT_TRUE(s.Searchable(0, 3));
  EXPECT_TRUE(s.Searchable(1, 1));
  EXPECT_TRUE(s.Pending(0));
  EXPECT_TRUE(s.Pending(2));
  EXPECT_FALSE(s.Pending(3));
  EXPECT_FALSE(s.Admit(0, 3, true));  // the second ban lasts 4 rounds
  EXPECT_FALSE(s.Searchable(0, 7));
  EXPECT_TRUE(s.Searchable(0, 8));
  EXPECT_EQ(s.SearchLimit(0), 41);
  s.LiftBans(4);
  EXPECT_TRUE(s.Searchable(0, 4));
  EXPECT_FALSE(s.Pending(4));
  EXPECT_EQ(s.bans(), 2);
}

TEST(RuleSchedulerTest, RulesThatMayNotBeBannedAndNoBackoffAreCutShort) {
  RuleSchedulerOptions options;
  options.match_limit = 10;
  RuleScheduler s(1, options);
  EXPECT_TRUE(s.Admit(0, 0, true, /*may_ban=*/false));
  EXPECT_TRUE(s.Searchable(0, 1));
  EXPECT_TRUE(s.Pending(0));
  EXPECT_EQ(s.bans(), 0);
  options.backoff = false;
  options.match_limit = 5;
  RuleScheduler old(1, options);
  EXPECT_EQ(old.SearchLimit(0), 5);
  EXPECT_TRUE(old.Admit(0, 0, true));
  EXPECT_EQ(old.SearchLimit(0), 10);
  EXPECT_TRUE(old.Pending(0));
  EXPECT_FALSE(old.Pending(1));
  EXPECT_EQ(old.bans(), 0);
}

TEST(RuleSchedulerTest, AHeldRuleSitsOutABanWithoutRaisingItsLimit) {
  RuleSchedulerOptions options;
  options.match_limit = 10;
  options.ban_length = 2;
  RuleScheduler s(1, options);
  s.Hold(0, 0);
  EXPECT_EQ(s.bans(), 1);
  EXPECT_EQ(s.holds(), 1);
  EXPECT_EQ(s.SearchLimit(0), 11);  // it kept within its limit
  EXPECT_FALSE(s.Searchable(0, 2));
  EXPECT_TRUE(s.Searchable(0, 3));
  EXPECT_TRUE(s.Pending(2));
  s.Hold(0, 3);  // the second lasts twice as long
  EXPECT_FALSE(s.Searchable(0, 7));
  EXPECT_TRUE(s.Searchable(0, 8));
}

TEST(RuleSchedulerTest, ARoundMayFillHalfTheRoomLeft) {
  EXPECT_EQ(RoundRoom(0, 50000), 25000);
  EXPECT_EQ(RoundRoom(40000, 50000), 5000);
  EXPECT_EQ(RoundRoom(50001, 50000), 0);
}

}  // namespace
}  // namespace taso::optimizer
