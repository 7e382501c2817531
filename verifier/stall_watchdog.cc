#include "verifier/stall_watchdog.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace taso::verifier {

StallWatchdog::StallWatchdog(int slots, absl::Duration limit, std::function<void(const Stall&)> on_stall)
    : limit_(limit),
      on_stall_(std::move(on_stall)),
      clocks_(static_cast<size_t>(std::max(0, slots))),
      work_(clocks_.size()) {
  thread_ = std::thread([this] { Run(); });
}

StallWatchdog::~StallWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void StallWatchdog::Watch(int slot, std::function<double()> seconds_in_query) {
  std::lock_guard<std::mutex> lock(mu_);
  clocks_.at(static_cast<size_t>(slot)) = std::move(seconds_in_query);
}

void StallWatchdog::Describe(int slot, std::string work) {
  std::lock_guard<std::mutex> lock(mu_);
  work_.at(static_cast<size_t>(slot)) = std::move(work);
}

void StallWatchdog::Run() {
  // A few looks per limit, at least one a second: a stall is caught within
  // about a quarter of the limit past it.
  const absl::Duration period = std::clamp(limit_ / 4, absl::Milliseconds(5), absl::Seconds(1));
  const double limit_seconds = absl::ToDoubleSeconds(limit_);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_ && !fired_) {
    wake_.wait_for(lock, absl::ToChronoNanoseconds(period), [this] { return stopping_; });
    if (stopping_) return;
    for (size_t slot = 0; slot < clocks_.size(); ++slot) {
      if (!clocks_[slot]) continue;
      const double seconds = clocks_[slot]();
      if (seconds <= limit_seconds) continue;
      fired_ = true;
      Stall stall{static_cast<int>(slot), seconds, work_[slot]};
      lock.unlock();  // on_stall may take its time (or never return)
      on_stall_(stall);
      return;
    }
  }
}

}  // namespace taso::verifier
