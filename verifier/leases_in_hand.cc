#include "verifier/leases_in_hand.h"

#include <algorithm>
#include <utility>

namespace taso::verifier {

LeasesInHand::LeasesInHand(int threads) : threads_(static_cast<size_t>(std::max(1, threads))) {}

void LeasesInHand::Leased(int thread, int shard, const std::string& worker_id,
                          const std::vector<std::string>& lease_ids, absl::Time at) {
  std::lock_guard<std::mutex> lock(mu_);
  Held& held = threads_[thread];
  held.shard = shard;
  held.worker_id = worker_id;
  held.unstarted.insert(held.unstarted.end(), lease_ids.begin(), lease_ids.end());
  held.leased_at = at;
}

bool LeasesInHand::Started(int thread, const std::string& lease_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Held& held = threads_[thread];
  auto it = std::find(held.unstarted.begin(), held.unstarted.end(), lease_id);
  if (it == held.unstarted.end()) return false;
  held.unstarted.erase(it);
  held.current = lease_id;
  return true;
}

void LeasesInHand::Finished(int thread, const Report* complete) {
  std::lock_guard<std::mutex> lock(mu_);
  Held& held = threads_[thread];
  held.current.clear();
  if (complete != nullptr) held.finished.push_back(*complete);
}

std::vector<LeasesInHand::Report> LeasesInHand::TakeFinished(int thread) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Report> taken;
  taken.swap(threads_[thread].finished);
  return taken;
}

LeasesInHand::Report LeasesInHand::Release(const Held& held, const std::string& lease_id) const {
  Report release;
  release.set_lease_id(lease_id);
  release.set_worker_id(held.worker_id);
  release.set_complete(false);
  release.set_release(true);
  return release;
}

std::vector<LeasesInHand::Report> LeasesInHand::TakeUnstarted(int thread) {
  std::lock_guard<std::mutex> lock(mu_);
  Held& held = threads_[thread];
  std::vector<Report> releases;
  for (const std::string& lease_id : held.unstarted) releases.push_back(Release(held, lease_id));
  held.unstarted.clear();
  return releases;
}

std::vector<LeasesInHand::HandBack> LeasesInHand::TakeOverdue(absl::Time leased_before) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<HandBack> overdue;
  for (size_t t = 0; t < threads_.size(); ++t) {
    Held& held = threads_[t];
    if (held.leased_at >= leased_before || (held.unstarted.empty() && held.finished.empty())) continue;
    HandBack back{static_cast<int>(t), held.shard, {}, {}};
    back.finished.swap(held.finished);
    for (const std::string& lease_id : held.unstarted) back.releases.push_back(Release(held, lease_id));
    held.unstarted.clear();
    overdue.push_back(std::move(back));
  }
  return overdue;
}

std::map<int, std::vector<LeasesInHand::Report>> LeasesInHand::GiveBackAllBut(int stalled) {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<int, std::vector<Report>> by_shard;
  for (size_t t = 0; t < threads_.size(); ++t) {
    Held& held = threads_[t];
    std::vector<Report>& out = by_shard[held.shard];
    for (Report& report : held.finished) out.push_back(std::move(report));
    for (const std::string& lease_id : held.unstarted) out.push_back(Release(held, lease_id));
    // A class another thread was proving when this one stuck is no fault of its own.
    if (!held.current.empty() && static_cast<int>(t) != stalled) out.push_back(Release(held, held.current));
    held = Held{held.shard, held.worker_id, {}, {}, {}};
  }
  for (auto it = by_shard.begin(); it != by_shard.end();) it = it->second.empty() ? by_shard.erase(it) : ++it;
  return by_shard;
}

}  // namespace taso::verifier
