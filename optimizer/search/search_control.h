// What bounds and watches a search, whichever search it is: the caller's
// time limit, its cancellation and its progress observer. Each search's
// options extend it, so the pipeline hands all three on in one assignment
// and a new one reaches both searches from here.
#ifndef TASO_OPTIMIZER_SEARCH_SEARCH_CONTROL_H_
#define TASO_OPTIMIZER_SEARCH_SEARCH_CONTROL_H_

#include <functional>

#include "absl/time/time.h"
#include "optimizer/search/progress.h"

namespace taso::optimizer {

struct SearchControl {
  absl::Duration time_limit = absl::Seconds(60);
  // Polled with the time limit: true stops the search as the limit would
  // (the caller went away; the service's SIGTERM drain ran out).
  std::function<bool()> cancelled;
  // Told the search's state as it changes; not owned, may be null.
  ProgressObserver* progress = nullptr;
};

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_SEARCH_SEARCH_CONTROL_H_
