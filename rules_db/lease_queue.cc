#include "rules_db/lease_queue.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "proto/rules.pb.h"

namespace taso::rules_db {

LeaseQueue::LeaseQueue(std::string job_id, std::deque<std::string> pending, int64_t verified,
                       int64_t* next_lease_number, int max_expiries)
    : job_id_(std::move(job_id)),
      pending_(std::move(pending)),
      max_expiries_(max_expiries),
      total_(static_cast<int64_t>(pending_.size()) + verified),
      verified_(verified),
      next_lease_number_(next_lease_number) {}

void LeaseQueue::Expire(absl::Time now) {
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (it->second.expires <= now) {
      const std::string& fp = it->second.fingerprint;
      const int expiries = ++expiries_[fp];
      if (max_expiries_ > 0 && expiries >= max_expiries_) {
        given_up_.emplace_back(fp, expiries);
      } else {
        pending_.push_front(fp);
      }
      it = leases_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<std::pair<std::string, int>> LeaseQueue::TakeGivenUp() {
  std::vector<std::pair<std::string, int>> taken;
  taken.swap(given_up_);
  settling_ += static_cast<int64_t>(taken.size());
  return taken;
}

void LeaseQueue::Settled(const std::string& fingerprint) {
  --settling_;
  ++verified_;
  expiries_.erase(fingerprint);
}

void LeaseQueue::Unsettle(const std::vector<std::pair<std::string, int>>& classes) {
  settling_ -= static_cast<int64_t>(classes.size());
  given_up_.insert(given_up_.end(), classes.begin(), classes.end());
}

std::vector<std::string> LeaseQueue::Reserve(int max_classes) {
  std::vector<std::string> reserved;
  while (static_cast<int>(reserved.size()) < max_classes && !pending_.empty()) {
    reserved.push_back(std::move(pending_.front()));
    pending_.pop_front();
  }
  reserved_ += static_cast<int64_t>(reserved.size());
  return reserved;
}

std::vector<LeaseQueue::Granted> LeaseQueue::Grant(const std::string& worker_id, std::vector<ReadClass> classes,
                                                   absl::Duration duration, absl::Time now) {
  const absl::Time expires = now + duration;
  std::vector<Granted> granted;
  for (ReadClass& c : classes) {
    --reserved_;
    // The job id lets a report find its queue; the number tells a class's
    // successive leases apart, so a late report under an old one is refused.
    std::string lease_id =
        absl::StrCat(job_id_, "/", absl::BytesToHexString(c.fingerprint), "/", (*next_lease_number_)++);
    leases_[lease_id] = Lease{c.fingerprint, worker_id, expires, std::move(c.pairs)};
    granted.push_back(Granted{std::move(lease_id), std::move(c.fingerprint), expires});
  }
  return granted;
}

void LeaseQueue::Unreserve(const std::vector<std::string>& fingerprints) {
  pending_.insert(pending_.begin(), fingerprints.begin(), fingerprints.end());
  reserved_ -= static_cast<int64_t>(fingerprints.size());
}

const LeaseQueue::Lease* LeaseQueue::Held(const std::string& lease_id, const std::string& worker_id) const {
  auto it = leases_.find(lease_id);
  if (it == leases_.end() || it->second.worker_id != worker_id) return nullptr;
  return &it->second;
}

std::string VerdictName(const PairVerdict& v) {
  return absl::StrCat("verdict for pair (", v.source_member(), ", ", v.target_member(), ")");
}

absl::Status LeaseQueue::CheckVerdict(const Lease& lease, const PairVerdict& v, const std::string& rule_id) {
  const std::string pair = VerdictName(v);
  auto expected = lease.pairs.find({v.source_member(), v.target_member()});
  if (expected == lease.pairs.end()) {
    return absl::InvalidArgumentError(absl::StrCat(pair, ": the leased class has no such candidate pair"));
  }
  if (rule_id != expected->second.rule_id) {
    return absl::InvalidArgumentError(absl::StrCat(pair, ": its rule ", rule_id, " is not the pair's rule ",
                                                   expected->second.rule_id,
                                                   ": a lease covers only the graphs of its own class"));
  }
  if (v.rule().status() == rules::RULE_STATUS_PRUNED) {
    return absl::InvalidArgumentError(
        absl::StrCat(pair, ": pruned is the store's status, set when a job's proved rules are pruned"));
  }
  if (expected->second.rejected && v.rule().status() == rules::RULE_STATUS_PROVED) {
    // The re-check found the two sides differ on concrete inputs.
    return absl::InvalidArgumentError(
        absl::StrCat(pair, ": the store's re-check rejected this pair, so it cannot be proved"));
  }
  return absl::OkStatus();
}

absl::Status LeaseQueue::Renew(const std::string& lease_id, absl::Time expires) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return absl::FailedPreconditionError(absl::StrCat("lease ", lease_id, " is not held"));
  it->second.expires = expires;
  return absl::OkStatus();
}

absl::Status LeaseQueue::Complete(const std::string& lease_id) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return absl::FailedPreconditionError(absl::StrCat("lease ", lease_id, " is not held"));
  expiries_.erase(it->second.fingerprint);
  leases_.erase(it);
  ++verified_;
  return absl::OkStatus();
}

absl::Status LeaseQueue::Release(const std::string& lease_id) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return absl::FailedPreconditionError(absl::StrCat("lease ", lease_id, " is not held"));
  pending_.push_front(std::move(it->second.fingerprint));
  leases_.erase(it);
  return absl::OkStatus();
}

}  // namespace taso::rules_db
