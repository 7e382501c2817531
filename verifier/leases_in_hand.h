// What each thread of a verifier worker holds of the store's: the leases it
// has not started, the class it is proving, and the finished classes it has
// not yet reported. A worker that stops (SIGTERM) or stalls gives back from
// here everything it has not finished, so that the store counts an expiry
// (towards giving a class up) only against the class that stalled, not
// against the classes that happened to be leased with it.
//
// Only books: no RPC, thread-safe, the worker sends what it takes.
#ifndef TASO_VERIFIER_LEASES_IN_HAND_H_
#define TASO_VERIFIER_LEASES_IN_HAND_H_

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "proto/rules_db.pb.h"

namespace taso::verifier {

class LeasesInHand {
 public:
  using Report = rules_db::ReportVerdictsRequest;

  explicit LeasesInHand(int threads);

  // `thread` leased `lease_ids` from store shard `shard` as `worker_id`, at `at`.
  void Leased(int thread, int shard, const std::string& worker_id, const std::vector<std::string>& lease_ids,
              absl::Time at);
  // It begins proving one of them. False when that lease was handed back
  // meanwhile (TakeOverdue): the thread skips it.
  bool Started(int thread, const std::string& lease_id);
  // It has finished the class it was proving: `complete` is its report, to
  // send; null when the class was lost (its lease expired on the way).
  void Finished(int thread, const Report* complete);

  // The complete reports of `thread` not yet sent, emptied.
  std::vector<Report> TakeFinished(int thread);
  // Releases (rules_db.proto: ReportVerdictsRequest.release) of the leases
  // `thread` has not started, which it then no longer holds.
  std::vector<Report> TakeUnstarted(int thread);

  // What a thread hands back while it is still busy with a batch leased
  // before some time: the classes it finished, to report, and releases of
  // the leases it has not started. Those would otherwise expire behind a
  // slow class (a lease is renewed only by a report on its own class), each
  // expiry counting towards the store giving the class up.
  struct HandBack {
    int thread = 0;
    int shard = 0;
    std::vector<Report> finished;
    std::vector<Report> releases;
  };
  // Every thread's batch leased before `leased_before` with something to
  // hand back, emptied of it.
  std::vector<HandBack> TakeOverdue(absl::Time leased_before);

  // What every thread holds, to send before the worker ends because thread
  // `stalled` is stuck: all finished reports, and a release of every lease
  // but the one `stalled` is proving (-1: none is stuck), by store shard.
  // The books are empty afterwards.
  std::map<int, std::vector<Report>> GiveBackAllBut(int stalled);

 private:
  struct Held {
    int shard = 0;
    std::string worker_id;
    std::vector<std::string> unstarted;
    std::string current;  // empty: none
    std::vector<Report> finished;
    absl::Time leased_at = absl::InfinitePast();
  };
  Report Release(const Held& held, const std::string& lease_id) const;

  std::mutex mu_;
  std::vector<Held> threads_;
};

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_LEASES_IN_HAND_H_
