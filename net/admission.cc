#include "net/admission.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace taso::net {

AdmissionGate::AdmissionGate(int max_running, int max_waiting)
    : max_running_(std::max(1, max_running)), max_waiting_(std::max(0, max_waiting)) {}

AdmissionGate::Ticket::~Ticket() {
  if (gate_ != nullptr) gate_->Leave();
}

absl::StatusOr<AdmissionGate::Ticket> AdmissionGate::Enter(absl::Time deadline,
                                                          const std::function<bool()>& cancelled) {
  absl::MutexLock lock(&mu_);
  if (SlotFreeNow()) {
    ++counters_.running;
    ++counters_.admitted;
    return Ticket(this);
  }
  if (counters_.waiting >= max_waiting_) return Refuse();
  const int64_t arrival = next_arrival_++;
  ++counters_.waiting;
  // Called by the mutex with mu_ held.
  auto my_turn = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return counters_.running < max_running_ && next_admitted_ == arrival;
  };
  // Woken by Leave; the short timeout polls `cancelled`, which has no
  // notification of its own.
  while (!my_turn()) {
    const absl::Time now = absl::Now();
    const bool gone = cancelled != nullptr && cancelled();
    if (now >= deadline || gone) {
      --counters_.waiting;
      ++counters_.abandoned;
      // Let the next arrival take this place in the line.
      if (next_admitted_ == arrival) {
        AdvanceLine();
      } else {
        skipped_.insert(arrival);
      }
      return gone ? absl::CancelledError("the caller went away while waiting for a free slot")
                  : absl::DeadlineExceededError(absl::StrCat(
                        "waited for a free slot until the deadline (", counters_.running,
                        " calls running); give the call a longer deadline or retry later"));
    }
    mu_.AwaitWithDeadline(absl::Condition(&my_turn), std::min(deadline, now + absl::Milliseconds(100)));
  }
  --counters_.waiting;
  ++counters_.running;
  ++counters_.admitted;
  AdvanceLine();
  return Ticket(this);
}

void AdmissionGate::AdvanceLine() {
  ++next_admitted_;
  while (skipped_.erase(next_admitted_) > 0) ++next_admitted_;
}

void AdmissionGate::Leave() {
  absl::MutexLock lock(&mu_);
  --counters_.running;
}

absl::Status AdmissionGate::RefuseIfFull() {
  absl::MutexLock lock(&mu_);
  if (SlotFreeNow() || counters_.waiting < max_waiting_) return absl::OkStatus();
  return Refuse();
}

absl::Status AdmissionGate::Refuse() {
  ++counters_.rejected;
  return absl::ResourceExhaustedError(absl::StrCat(
      "the server is busy: ", counters_.running, " calls running and ", counters_.waiting,
      " waiting, its limits (taso_optimizer --max_concurrent ", max_running_, " --max_queued ", max_waiting_,
      "); retry later or send to another replica"));
}

AdmissionGate::Counters AdmissionGate::counters() const {
  absl::MutexLock lock(&mu_);
  return counters_;
}

}  // namespace taso::net
