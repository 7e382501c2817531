#include "net/admission.h"

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace taso::net {
namespace {

absl::Time Later() { return absl::Now() + absl::Seconds(30); }

TEST(AdmissionGate, RunsUpToTheLimitQueuesTheNextAndRefusesBeyond) {
  AdmissionGate gate(/*max_running=*/2, /*max_waiting=*/1);
  auto a = gate.Enter(Later(), nullptr);
  auto b = gate.Enter(Later(), nullptr);
  ASSERT_TRUE(a.ok() && b.ok());
  std::atomic<bool> admitted{false};
  std::thread waiter([&] {
    auto c = gate.Enter(Later(), nullptr);
    admitted = c.ok();
  });
  while (gate.counters().waiting == 0) absl::SleepFor(absl::Milliseconds(1));
  // Two running, one waiting: the fourth is refused at once, saying why.
  auto d = gate.Enter(Later(), nullptr);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(d.status().message().find("--max_concurrent 2 --max_queued 1"), std::string::npos) << d.status();
  EXPECT_FALSE(admitted);
  { auto released = std::move(*a); }  // a call finishes: the waiter runs
  waiter.join();
  EXPECT_TRUE(admitted);
  const AdmissionGate::Counters c = gate.counters();
  EXPECT_EQ(c.admitted, 3);
  EXPECT_EQ(c.rejected, 1);
  EXPECT_EQ(c.running, 1);  // b; the waiter's ticket ended with its thread
}

// What a caller that must not block asks first: refused only when Enter
// would refuse, with the same message, counted the same.
TEST(AdmissionGate, RefuseIfFullRefusesOnlyWhenNoSlotAndNoQueuePlaceIsLeft) {
  AdmissionGate gate(/*max_running=*/1, /*max_waiting=*/0);
  EXPECT_TRUE(gate.RefuseIfFull().ok());
  auto a = gate.Enter(Later(), nullptr);
  ASSERT_TRUE(a.ok());
  const absl::Status full = gate.RefuseIfFull();
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.message().find("--max_concurrent 1 --max_queued 0"), std::string::npos) << full;
  EXPECT_EQ(gate.counters().rejected, 1);
  { auto released = std::move(*a); }
  EXPECT_TRUE(gate.RefuseIfFull().ok());
  AdmissionGate queued(/*max_running=*/1, /*max_waiting=*/1);
  auto b = queued.Enter(Later(), nullptr);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(queued.RefuseIfFull().ok()) << "a queue place is left";
}

TEST(AdmissionGate, AWaiterGivesUpAtItsDeadlineOrWhenCancelled) {
  AdmissionGate gate(1, 4);
  auto held = gate.Enter(Later(), nullptr);
  ASSERT_TRUE(held.ok());
  auto late = gate.Enter(absl::Now() + absl::Milliseconds(50), nullptr);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);
  std::atomic<bool> gone{false};
  std::thread canceller([&] {
    absl::SleepFor(absl::Milliseconds(50));
    gone = true;
  });
  auto cancelled = gate.Enter(Later(), [&] { return gone.load(); });
  canceller.join();
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(gate.counters().abandoned, 2);
  EXPECT_EQ(gate.counters().waiting, 0);
  // The line still moves: the next caller gets the slot once it is free.
  { auto released = std::move(*held); }
  EXPECT_TRUE(gate.Enter(Later(), nullptr).ok());
}

TEST(AdmissionGate, WaitersAreAdmittedInArrivalOrderEvenWhenOneGivesUp) {
  AdmissionGate gate(1, 8);
  std::optional<AdmissionGate::Ticket> held;
  held.emplace(std::move(*gate.Enter(Later(), nullptr)));
  std::mutex order_mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  std::atomic<bool> second_gives_up{false};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      auto t = gate.Enter(Later(), [&, i] { return i == 1 && second_gives_up.load(); });
      if (!t.ok()) return;
      std::lock_guard<std::mutex> lock(order_mu);
      order.push_back(i);
    });
    // Arrive one after another.
    while (gate.counters().waiting < i + 1) absl::SleepFor(absl::Milliseconds(1));
  }
  second_gives_up = true;
  while (gate.counters().abandoned == 0) absl::SleepFor(absl::Milliseconds(1));
  held.reset();
  for (auto& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 2, 3}));
}

}  // namespace
}  // namespace taso::net
