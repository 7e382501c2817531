#include "cluster/shard_rules.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "net/grpc_status.h"
#include "proto/rules_db.grpc.pb.h"

namespace taso::cluster {
namespace {

struct JobsEverywhere {
  std::set<std::string> done;  // DONE on every shard: their pruning is final
  // Pruned as one set by `taso rules prune` on every shard: the stored
  // statuses are the union's already, with this table.
  std::map<std::string, ReductionTable> pruned_as_union;
};

absl::StatusOr<JobsEverywhere> ListJobsEverywhere(const StoreSet& stores) {
  std::map<std::string, size_t> done, union_pruned;
  std::map<std::string, rules_db::Verification> verification;
  for (const records::StoreShard& shard : stores.shards()) {
    auto stub = rules_db::HashStore::NewStub(shard.channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    rules_db::ListJobsRequest request;
    request.set_page_size(1000);
    rules_db::ListJobsResponse jobs;
    absl::Status s = net::FromGrpc(stub->ListJobs(&context, request, &jobs), "store " + shard.address);
    if (!s.ok()) return s;
    for (const auto& job : jobs.jobs()) {
      done[job.id()] += job.state() == rules_db::JOB_STATE_DONE;
      union_pruned[job.id()] += job.verification().pruned_store_shards() == static_cast<int>(stores.size());
      verification[job.id()] = job.verification();
    }
  }
  JobsEverywhere out;
  for (const auto& [id, n] : done) {
    if (n != stores.size()) continue;
    out.done.insert(id);
    if (union_pruned[id] != stores.size()) continue;
    out.pruned_as_union[id] = records::RecordedReduction(verification[id]);
  }
  return out;
}

}  // namespace

absl::StatusOr<ShardRules> FetchPrunedUnion(const StoreSet& stores, const std::string& job_id,
                                            const UnionPruner& prune) {
  ShardRules result;
  for (const records::StoreShard& shard : stores.shards()) {
    auto stub = rules_db::RuleDb::NewStub(shard.channel);
    rules_db::ListRulesRequest request;
    for (int s = rules::RuleStatus_MIN; s <= rules::RuleStatus_MAX; ++s) {
      if (rules::RuleStatus_IsValid(s) && s != rules::RULE_STATUS_UNSPECIFIED) {
        request.add_statuses(static_cast<rules::RuleStatus>(s));
      }
    }
    request.set_job_id(job_id);
    request.set_page_size(1000);
    while (true) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
      rules_db::ListRulesResponse page;
      absl::Status s = net::FromGrpc(stub->ListRules(&context, request, &page), "store " + shard.address);
      if (!s.ok()) return s;
      for (auto& r : *page.mutable_rules()) result.rules.push_back(std::move(r));
      if (page.next_page_token().empty()) break;
      request.set_page_token(page.next_page_token());
    }
  }
  // The same rule on two shards (a hand-imported one) counts once.
  std::sort(result.rules.begin(), result.rules.end(),
            [](const rules::Rule& a, const rules::Rule& b) { return a.id() < b.id(); });
  result.rules.erase(std::unique(result.rules.begin(), result.rules.end(),
                                 [](const rules::Rule& a, const rules::Rule& b) { return a.id() == b.id(); }),
                     result.rules.end());
  auto jobs = ListJobsEverywhere(stores);
  if (!jobs.ok()) return jobs.status();
  for (const auto& [job, table] : jobs->pruned_as_union) result.tables[job] = table;
  std::map<std::string, std::vector<size_t>> by_job;
  for (size_t i = 0; i < result.rules.size(); ++i) {
    const std::string& job = result.rules[i].provenance().job_id();
    if (jobs->done.count(job) && !jobs->pruned_as_union.count(job)) by_job[job].push_back(i);
  }
  for (const auto& [job, indices] : by_job) {
    // Pruning is a function of the proved set: start from it afresh, in id
    // order as a store does.
    std::vector<rules::Rule> group;
    for (size_t i : indices) {
      rules::Rule r = result.rules[i];
      if (r.status() == rules::RULE_STATUS_PRUNED) {
        r.set_status(rules::RULE_STATUS_PROVED);
        r.clear_status_detail();
      }
      group.push_back(std::move(r));
    }
    result.tables[job] = prune(group);
    for (size_t k = 0; k < indices.size(); ++k) result.rules[indices[k]] = std::move(group[k]);
  }
  return result;
}

}  // namespace taso::cluster
