#include "cluster/supervisor.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "gtest/gtest.h"

namespace taso::cluster {
namespace {

std::string Log(const std::string& name) { return std::string(std::getenv("TEST_TMPDIR")) + "/" + name + ".log"; }

// Reaps until every child has exited once; in child order, since children
// started together may exit in any order (a loaded machine reorders them).
std::vector<Supervisor::Exit> ReapAll(Supervisor& supervisor, size_t want) {
  std::vector<Supervisor::Exit> exits;
  for (int i = 0; i < 500 && exits.size() < want; ++i) {
    for (const auto& e : supervisor.Reap()) exits.push_back(e);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::sort(exits.begin(), exits.end(),
            [](const Supervisor::Exit& a, const Supervisor::Exit& b) { return a.child < b.child; });
  return exits;
}

TEST(SupervisorTest, VerdictsFollowTheCodeAndTheBudget) {
  Supervisor supervisor("/bin/sh", /*max_restarts=*/1, /*fatal_codes=*/{1});
  ASSERT_EQ(*supervisor.Start({"-c", "exit 0"}, Log("ok")), 0);
  ASSERT_EQ(*supervisor.Start({"-c", "exit 1"}, Log("fatal")), 1);
  ASSERT_EQ(*supervisor.Start({"-c", "echo crashed; exit 2"}, Log("crash")), 2);
  auto exits = ReapAll(supervisor, 3);
  ASSERT_EQ(exits.size(), 3u);
  EXPECT_EQ(exits[0].verdict, Supervisor::Verdict::kFinished);
  EXPECT_EQ(exits[1].verdict, Supervisor::Verdict::kGiveUp);
  EXPECT_EQ(exits[0].child, 0);
  EXPECT_EQ(exits[2].verdict, Supervisor::Verdict::kRestart);
  EXPECT_EQ(exits[2].code, 2);
  EXPECT_FALSE(supervisor.all_finished());

  ASSERT_TRUE(supervisor.Restart(2).ok());
  EXPECT_EQ(supervisor.restarts(2), 1);
  exits = ReapAll(supervisor, 1);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].verdict, Supervisor::Verdict::kGiveUp);  // out of restarts
  EXPECT_EQ(supervisor.running(), 0);
}

TEST(SupervisorTest, ARelaunchCodeStartsTheChildAgainWithoutUsingItsBudget) {
  Supervisor supervisor("/bin/sh", /*max_restarts=*/0, /*fatal_codes=*/{}, /*relaunch_codes=*/{75});
  ASSERT_EQ(*supervisor.Start({"-c", "exit 75"}, Log("stalled")), 0);
  for (int round = 0; round < 3; ++round) {
    auto exits = ReapAll(supervisor, 1);
    ASSERT_EQ(exits.size(), 1u);
    EXPECT_EQ(exits[0].code, 75);
    EXPECT_EQ(exits[0].verdict, Supervisor::Verdict::kRelaunch) << "round " << round;
    ASSERT_TRUE(supervisor.Relaunch(0).ok());
  }
  EXPECT_EQ(supervisor.restarts(0), 0);
}

TEST(SupervisorTest, StopAllEndsRunningChildren) {
  Supervisor supervisor("/bin/sh", 3);
  ASSERT_TRUE(supervisor.Start({"-c", "sleep 30"}, Log("sleep")).ok());
  EXPECT_EQ(supervisor.running(), 1);
  supervisor.StopAll(SIGTERM, 2000);
  EXPECT_EQ(supervisor.running(), 0);
}

TEST(SupervisorTest, AllFinishedAfterEveryChildExitedZero) {
  Supervisor supervisor("/bin/sh", 3);
  ASSERT_TRUE(supervisor.Start({"-c", "exit 0"}, Log("a")).ok());
  ASSERT_TRUE(supervisor.Start({"-c", "exit 0"}, Log("b")).ok());
  ReapAll(supervisor, 2);
  EXPECT_TRUE(supervisor.all_finished());
  ASSERT_TRUE(supervisor.Relaunch(0).ok());
  EXPECT_FALSE(supervisor.all_finished());
  EXPECT_EQ(supervisor.restarts(0), 0);
}

}  // namespace
}  // namespace taso::cluster
