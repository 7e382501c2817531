// The verification queue of one job, in memory: which of its candidate
// classes are pending, which are leased to which verifier worker and until
// when, and how many are verified. The rule store (rule_store.h) keeps one
// per job it serves, reads the classes and writes the verdicts; this class
// only keeps the books, so it holds no storage and no lock (the store's
// mutex guards it).
//
// A class is pending until a report completes it. A lease that expires (its
// worker died or stalled) puts its class back at the front of the queue, so
// it is the next one leased; a report under an expired lease is refused.
// A class whose lease expired `max_expiries` times (each verifier holding it
// died, stalled or was stopped) is given up instead: the store ends it
// without a proof (TakeGivenUp, Settled), so one class no verifier can get
// through does not stop the job. A lease its worker releases (it is
// stopping with classes it has not started) is not counted.
// A lease covers the candidate pairs of its class only: each carries the
// rule every pair stands for, and a verdict about anything else is refused.
#ifndef TASO_RULES_DB_LEASE_QUEUE_H_
#define TASO_RULES_DB_LEASE_QUEUE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/rules_db.pb.h"

namespace taso::rules_db {

// "verdict for pair (S, T)", naming a verdict in errors.
std::string VerdictName(const PairVerdict& verdict);

class LeaseQueue {
 public:
  // What a verdict for one candidate pair of a leased class must be about.
  struct ExpectedPair {
    std::string rule_id;    // RuleId of the pair's graphs and output mapping
    bool rejected = false;  // the store's re-check rejected it
  };
  using MemberPair = std::pair<int, int>;  // (source member, target member)
  using ExpectedPairs = std::map<MemberPair, ExpectedPair>;

  struct Lease {
    std::string fingerprint;
    std::string worker_id;
    absl::Time expires;
    ExpectedPairs pairs;
  };

  // One lease Grant made.
  struct Granted {
    std::string lease_id;
    std::string fingerprint;
    absl::Time expires;
  };

  // `pending`: the classes without a verified marker, in the order they are
  // to be leased; `verified`: how many have one. Lease numbers are drawn
  // from `next_lease_number`, which the store shares between its queues so
  // that no two leases it grants while it runs have the same number.
  // `max_expiries`: how many times a class's lease may expire before it
  // is given up (0: never).
  LeaseQueue(std::string job_id, std::deque<std::string> pending, int64_t verified, int64_t* next_lease_number,
             int max_expiries = 0);

  // Puts the class of every lease that expired by `now` back in front of the
  // pending ones, or among the given-up ones once it expired max_expiries
  // times. Call it before the other methods that take a time, so they see
  // the queue as of `now`.
  void Expire(absl::Time now);

  // The classes given up since the last call, with how many times each
  // one's lease expired. They stay pending until Settled (the store wrote
  // their verdicts) or Unsettle (it could not: they are given up again).
  std::vector<std::pair<std::string, int>> TakeGivenUp();
  void Settled(const std::string& fingerprint);
  void Unsettle(const std::vector<std::pair<std::string, int>>& classes);

  // A reserved class as the store read it: what its pairs' verdicts must be about.
  struct ReadClass {
    std::string fingerprint;
    ExpectedPairs pairs;
  };

  // Leasing takes two steps, so that the store reads the classes (a disk
  // read and a rule id per pair) without holding its lock. Reserve takes up
  // to `max_classes` pending classes, front first, out of the line: no other
  // worker is given them, and the job is not done while they are out. Then
  // either Grant leases them (each read) or Unreserve puts them back in front.
  std::vector<std::string> Reserve(int max_classes);
  // Leases reserved classes to `worker_id` until now + `duration`.
  std::vector<Granted> Grant(const std::string& worker_id, std::vector<ReadClass> classes, absl::Duration duration,
                             absl::Time now);
  // Puts reserved classes that could not be read back in front, in their order.
  void Unreserve(const std::vector<std::string>& fingerprints);

  // The lease `lease_id` if `worker_id` holds it; null when it expired (and
  // was taken back by Expire), was completed, or is someone else's.
  const Lease* Held(const std::string& lease_id, const std::string& worker_id) const;

  // Refuses a verdict that is not about its pair of the leased class (whose
  // rule is `rule_id`), or that claims what only the store may say.
  static absl::Status CheckVerdict(const Lease& lease, const PairVerdict& verdict, const std::string& rule_id);

  // Extends a held lease to `expires` (a partial report is a heartbeat).
  absl::Status Renew(const std::string& lease_id, absl::Time expires);
  // Releases a held lease for good: its class is verified.
  absl::Status Complete(const std::string& lease_id);
  // Ends a held lease unfinished, at its worker's request: the class goes
  // back in front of the pending ones, as after an expiry, but the worker
  // said it was not the class's fault, so it is not counted as one.
  absl::Status Release(const std::string& lease_id);

  int64_t total() const { return total_; }
  int64_t verified() const { return verified_; }
  // Reserved and given-up classes count as pending: they are being read
  // for a lease, or their verdicts written.
  int64_t pending() const {
    return static_cast<int64_t>(pending_.size() + given_up_.size()) + reserved_ + settling_;
  }
  int64_t leased() const { return static_cast<int64_t>(leases_.size()); }
  // Some class is still waiting for a lease, being read for one, held under
  // one, or given up and not yet settled.
  bool HasWork() const {
    return !pending_.empty() || reserved_ > 0 || !leases_.empty() || !given_up_.empty() || settling_ > 0;
  }

 private:
  std::string job_id_;  // the first part of every lease id
  std::deque<std::string> pending_;      // fingerprints
  std::map<std::string, Lease> leases_;  // lease id -> lease
  int64_t reserved_ = 0;                 // taken by Reserve, not yet granted or put back
  int max_expiries_ = 0;
  std::map<std::string, int> expiries_;  // fingerprint -> expiries so far (classes that had one)
  std::vector<std::pair<std::string, int>> given_up_;  // not yet taken
  int64_t settling_ = 0;                                // taken, not yet settled
  int64_t total_ = 0;
  int64_t verified_ = 0;
  int64_t* next_lease_number_;
};

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_LEASE_QUEUE_H_
