#include "cli/progress_printer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace taso::cli {

ProgressPrinter::ProgressPrinter(std::ostream& out, std::string prefix, absl::Duration every, std::string search)
    : out_(out), prefix_(std::move(prefix)), search_(std::move(search)), every_(every) {
  ticker_ = std::thread([this] { Tick(); });
}

ProgressPrinter::~ProgressPrinter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  ticker_.join();
}

void ProgressPrinter::EnterPhase(optimizer::OptimizePhase phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  searching_ = phase == optimizer::OptimizePhase::kSearch;
  phase_ = searching_ ? absl::StrCat(optimizer::PhaseName(phase), " (", search_, ")") : optimizer::PhaseName(phase);
  phase_start_ = absl::Now();
  search_state_ = {};
  PrintLocked();
}

void ProgressPrinter::SearchUpdate(const optimizer::SearchProgress& now) {
  std::lock_guard<std::mutex> lock(mutex_);
  search_state_ = now;
}

void ProgressPrinter::Waiting(std::string what) {
  std::lock_guard<std::mutex> lock(mutex_);
  searching_ = false;
  phase_ = std::move(what);
  phase_start_ = absl::Now();
  PrintLocked();
}

void ProgressPrinter::PrintLocked() {
  const absl::Time now = absl::Now();
  std::string line = absl::StrFormat("%s: [%5.1f s] %s", prefix_, absl::ToDoubleSeconds(now - start_), phase_);
  const double in_phase = absl::ToDoubleSeconds(now - phase_start_);
  if (in_phase >= 1) absl::StrAppendFormat(&line, ", %.0f s in", in_phase);
  const optimizer::SearchProgress& s = search_state_;
  if (searching_ && s.graphs_expanded > 0) {
    absl::StrAppend(&line, ", ", s.graphs_expanded, " graphs expanded, ", s.graphs_generated, " costed");
  }
  if (searching_ && s.iterations > 0) absl::StrAppend(&line, ", ", s.iterations, " rounds, ", s.enodes, " e-nodes");
  if (searching_ && s.best_cost_ms > 0) {
    absl::StrAppendFormat(&line, ", best %.4f ms (from %.4f ms)", s.best_cost_ms, s.initial_cost_ms);
  }
  out_ << line << std::endl;
  last_line_ = now;
}

void ProgressPrinter::Tick() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    const absl::Duration left = last_line_ + every_ - absl::Now();
    if (left > absl::ZeroDuration()) {
      wake_.wait_for(lock, absl::ToChronoMilliseconds(left) + std::chrono::milliseconds(1));
      continue;
    }
    if (!phase_.empty()) PrintLocked();
    else last_line_ = absl::Now();
  }
}

}  // namespace taso::cli
