// Admission control for a service whose calls are expensive (a search takes
// a core for up to its time limit): at most `max_running` calls run at once,
// up to `max_waiting` more wait in arrival order, and the rest are refused
// at once with RESOURCE_EXHAUSTED, so an overloaded server answers quickly
// instead of timing every caller out.
#ifndef TASO_NET_ADMISSION_H_
#define TASO_NET_ADMISSION_H_

#include <cstdint>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace taso::net {

class AdmissionGate {
 public:
  // A slot held while the call runs; released when destroyed.
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept : gate_(other.gate_) { other.gate_ = nullptr; }
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket();

   private:
    friend class AdmissionGate;
    explicit Ticket(AdmissionGate* gate) : gate_(gate) {}
    AdmissionGate* gate_;
  };

  struct Counters {
    int running = 0;
    int waiting = 0;
    int64_t admitted = 0;
    int64_t rejected = 0;   // the queue was full
    int64_t abandoned = 0;  // the deadline passed or the caller went away while waiting
  };

  // max_running >= 1; max_waiting >= 0.
  AdmissionGate(int max_running, int max_waiting);

  // Waits for a slot until `deadline`; `cancelled` (may be null) is polled
  // while waiting. RESOURCE_EXHAUSTED when the queue is full,
  // DEADLINE_EXCEEDED or CANCELLED when the wait ends without a slot; each
  // message says what the caller can change.
  absl::StatusOr<Ticket> Enter(absl::Time deadline, const std::function<bool()>& cancelled);

  Counters counters() const;
  // RESOURCE_EXHAUSTED (counted, as Enter says it) when Enter would refuse
  // now: no slot free and the queue full. A caller that must not block (a
  // callback reactor) refuses with it before handing the call to a thread.
  absl::Status RefuseIfFull();

 private:
  void Leave();
  absl::Status Refuse() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A slot is free and nobody waits ahead: a call entering now runs at once.
  bool SlotFreeNow() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return counters_.running < max_running_ && counters_.waiting == 0;
  }
  // The head of the line was admitted or gave up: the next waiter's turn.
  void AdvanceLine() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int max_running_;
  const int max_waiting_;
  mutable absl::Mutex mu_;
  Counters counters_ ABSL_GUARDED_BY(mu_);
  // Arrival numbers, so waiters are admitted first come, first served.
  int64_t next_arrival_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t next_admitted_ ABSL_GUARDED_BY(mu_) = 0;
  // Arrivals that gave up while others were ahead of them; skipped when the
  // line reaches them.
  absl::flat_hash_set<int64_t> skipped_ ABSL_GUARDED_BY(mu_);
};

}  // namespace taso::net

#endif  // TASO_NET_ADMISSION_H_
