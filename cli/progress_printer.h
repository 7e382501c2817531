// Progress lines for a long `taso optimize` on stderr: one when each phase
// starts, and one every few seconds while a phase goes on (the search's
// elapsed time and best cost so far), so a user or a CI log sees it is alive.
#ifndef TASO_CLI_PROGRESS_PRINTER_H_
#define TASO_CLI_PROGRESS_PRINTER_H_

#include <condition_variable>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "optimizer/search/progress.h"

namespace taso::cli {

class ProgressPrinter final : public optimizer::ProgressObserver {
 public:
  // Lines go to `out` prefixed with `prefix` ("taso optimize"); `every` is the
  // longest gap between two lines; `search` names the search and its limit
  // ("backtrack, limit 60 s") for the search's lines.
  ProgressPrinter(std::ostream& out, std::string prefix, absl::Duration every, std::string search);
  ~ProgressPrinter() override;

  void EnterPhase(optimizer::OptimizePhase phase) override;
  void SearchUpdate(const optimizer::SearchProgress& now) override;
  // A phase this process only waits through (a taso_optimizer's search).
  void Waiting(std::string what);

 private:
  void PrintLocked();  // the current phase's line; mutex_ held
  void Tick();         // the thread: a line whenever `every_` passes without one

  std::ostream& out_;
  const std::string prefix_, search_;
  const absl::Duration every_;
  const absl::Time start_ = absl::Now();
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::string phase_;
  absl::Time phase_start_ = start_;
  absl::Time last_line_ = start_;
  bool searching_ = false;
  optimizer::SearchProgress search_state_;
  std::thread ticker_;
};

}  // namespace taso::cli

#endif  // TASO_CLI_PROGRESS_PRINTER_H_
