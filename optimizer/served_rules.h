// The rules a long-running optimizer (taso_optimizer) searches with. Rules
// from a file or the built-in set are fixed; rules from rule databases are
// fetched again when the stores' jobs change (a job verified after the
// optimizer started), so a served optimizer picks up new rules without a
// restart. The check is made on a request, at most once per interval, and
// reads only the stores' job lists; the rules are fetched only when those
// changed.
#ifndef TASO_OPTIMIZER_SERVED_RULES_H_
#define TASO_OPTIMIZER_SERVED_RULES_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "optimizer/rewrite/rewrite_rule.h"

namespace taso::optimizer {

class ServedRules {
 public:
  using Log = std::function<void(const std::string&)>;
  // Where stored rules come from: the stores' job list in a comparable form
  // (changes when a job does), and the rules themselves. Tests hand in their
  // own; FromStores uses the stores' RPCs.
  struct StoreReader {
    std::function<absl::StatusOr<std::string>()> jobs_version;
    std::function<absl::StatusOr<RuleSet>()> fetch;
  };

  // Rules that never change (a file, the built-in set).
  explicit ServedRules(RuleSet fixed);
  // Rules from stores, read now and again whenever their jobs change, looked
  // at no more often than `check_every`. While the stores hold no proved rule
  // the built-in set is served (its provenance says so). Unavailable when a
  // store is unreachable at start; later failures keep the rules in hand and
  // are logged. Rules over the reader's limit (ResourceExhausted: an
  // unpruned size-4 job) are not fetched again until the jobs change (the
  // pruning of that job does); at start the built-in set is served meanwhile.
  static absl::StatusOr<std::unique_ptr<ServedRules>> FromStores(StoreReader reader, absl::Duration check_every,
                                                                 Log log);

  // The rules to search with now; each request holds its own reference, so
  // a refresh never changes the rules of a search in flight.
  std::shared_ptr<const RuleSet> Current();

 private:
  ServedRules() = default;
  absl::Status Refresh(const std::string& version);  // fetches and swaps in the rules

  std::mutex mutex_;
  std::shared_ptr<const RuleSet> rules_;
  StoreReader reader_;  // empty for fixed rules
  absl::Duration check_every_;
  absl::Time last_check_ = absl::InfinitePast();
  std::string version_;
  Log log_;
};

// The StoreReader of the stores at `address` (every shard, comma-separated):
// their finished jobs (ListJobs) and FetchRules, up to `max_rules`.
ServedRules::StoreReader StoreRulesReader(const std::string& address, int max_ops, int64_t max_rules);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_SERVED_RULES_H_
