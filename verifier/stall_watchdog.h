// Watches a verifier's proofs from a thread of its own. Z3 does not check
// its resource limit or its timeout everywhere (quantifier instantiation
// can run for minutes past both, growing to gigabytes), and a thread inside
// Z3 cannot be stopped from outside. So once a query has run past `limit`,
// the watchdog calls `on_stall` once, with what the stalled thread had in
// hand; the verifier then ends itself (worker.h), its lease expires, and the
// store leases the class again or gives it up (rules_db/lease_queue.h).
#ifndef TASO_VERIFIER_STALL_WATCHDOG_H_
#define TASO_VERIFIER_STALL_WATCHDOG_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"

namespace taso::verifier {

class StallWatchdog {
 public:
  struct Stall {
    int slot = 0;
    double seconds = 0;  // how long the query had run
    std::string work;    // what the slot had in hand (Describe)
  };

  // `slots` watched clocks (a verifier thread each), none set yet.
  StallWatchdog(int slots, absl::Duration limit, std::function<void(const Stall&)> on_stall);
  // Stops watching (without calling on_stall).
  ~StallWatchdog();
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;

  // The clock of `slot`: seconds its current query has run, 0 when none
  // runs. Called from the watchdog's thread until replaced; an empty one
  // stops watching the slot.
  void Watch(int slot, std::function<double()> seconds_in_query);
  // What `slot` is working on, for the stall's message.
  void Describe(int slot, std::string work);

 private:
  void Run();

  const absl::Duration limit_;
  const std::function<void(const Stall&)> on_stall_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool fired_ = false;
  std::vector<std::function<double()>> clocks_;
  std::vector<std::string> work_;
  std::thread thread_;
};

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_STALL_WATCHDOG_H_
