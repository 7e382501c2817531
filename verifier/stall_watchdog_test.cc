#include "verifier/stall_watchdog.h"

#include <atomic>
#include <mutex>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "testing/graph_builder.h"
#include "verifier/prover.h"

namespace taso::verifier {
namespace {

// Records the stalls reported, for the test to wait on.
struct Stalls {
  std::mutex mu;
  std::vector<StallWatchdog::Stall> seen;
  std::function<void(const StallWatchdog::Stall&)> Sink() {
    return [this](const StallWatchdog::Stall& s) {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(s);
    };
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return seen.size();
  }
};

TEST(StallWatchdog, ReportsTheFirstSlotPastTheLimitOnceWithWhatItHadInHand) {
  Stalls stalls;
  std::atomic<double> slow{0}, quick{0};
  {
    StallWatchdog watchdog(3, absl::Milliseconds(100), stalls.Sink());
    watchdog.Watch(0, [&] { return quick.load(); });
    watchdog.Watch(2, [&] { return slow.load(); });
    watchdog.Describe(2, "lease j/ab/7, pair (0, 1)");
    quick = 0.05;  // under the limit
    absl::SleepFor(absl::Milliseconds(300));
    EXPECT_EQ(stalls.size(), 0u);
    quick = 0.7;  // first, so that any look sees it past the limit
    slow = 0.5;   // both past it: one report, of the lowest slot, looked at first
    for (int i = 0; i < 200 && stalls.size() == 0; ++i) absl::SleepFor(absl::Milliseconds(10));
    absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls.seen[0].slot, 0);
  EXPECT_DOUBLE_EQ(stalls.seen[0].seconds, 0.7);
}

TEST(StallWatchdog, NamesTheWorkOfTheStalledSlotAndIgnoresSlotsNoLongerWatched) {
  Stalls stalls;
  std::atomic<double> a{5}, b{0};
  {
    StallWatchdog watchdog(2, absl::Milliseconds(50), stalls.Sink());
    watchdog.Watch(0, [&] { return a.load(); });
    watchdog.Watch(0, nullptr);  // its thread ended
    watchdog.Watch(1, [&] { return b.load(); });
    watchdog.Describe(1, "lease j/cd/9, pair (2, 3)");
    absl::SleepFor(absl::Milliseconds(200));
    EXPECT_EQ(stalls.size(), 0u);
    b = 1;
    for (int i = 0; i < 200 && stalls.size() == 0; ++i) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls.seen[0].slot, 1);
  EXPECT_EQ(stalls.seen[0].work, "lease j/cd/9, pair (2, 3)");
}

// The prover's clock runs while a real query does and reads 0 between them.
TEST(StallWatchdog, AProverReadsZeroOutsideQueriesAndItsQueryTimeInOne) {
  auto prover = Prover::Create();
  ASSERT_TRUE(prover.ok()) << prover.status();
  EXPECT_EQ((*prover)->SecondsInQuery(), 0);
  Stalls stalls;
  {
    // Any query runs longer than a microsecond: the watchdog sees it.
    StallWatchdog watchdog(1, absl::Microseconds(1), stalls.Sink());
    Prover* p = prover->get();
    watchdog.Watch(0, [p] { return p->SecondsInQuery(); });
    ::taso::testing::GraphBuilder a, b;
    {
      auto x = a.In("x", {4, 4}), y = a.In("y", {4, 4});
      a.Out(a.Op(OpKind::kEwAdd, {x, y}));
    }
    {
      auto x = b.In("x", {4, 4}), y = b.In("y", {4, 4});
      b.Out(b.Op(OpKind::kEwAdd, {y, x}));
    }
    for (int i = 0; i < 2000 && stalls.size() == 0; ++i) {
      auto proof = (*prover)->Prove(a.graph, b.graph, {{0, 0}});
      ASSERT_TRUE(proof.ok()) << proof.status();
      EXPECT_EQ(proof->outcome, ProofOutcome::kProved);
    }
    watchdog.Watch(0, nullptr);
  }
  EXPECT_EQ((*prover)->SecondsInQuery(), 0);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_GT(stalls.seen[0].seconds, 0);
}

}  // namespace
}  // namespace taso::verifier
