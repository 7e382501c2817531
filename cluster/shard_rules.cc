#include "cluster/shard_rules.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "net/grpc_status.h"
#include "proto/rules_db.grpc.pb.h"

namespace taso::cluster {
namespace {

constexpr int kPageSize = 1000;

// Where one source of a merge stands: its current page and place in it.
struct Cursor {
  std::vector<rules::Rule> page;
  size_t at = 0;
  bool exhausted = false;
  std::string last_id;  // the last id it gave, to check its order
};

}  // namespace

std::vector<std::string> ShardJobs::Unpruned(const std::string& job_id) const {
  std::vector<std::string> out;
  for (const std::string& id : done) {
    if ((job_id.empty() || id == job_id) && !pruned_as_union.count(id)) out.push_back(id);
  }
  return out;
}

int64_t ShardJobs::UnprunedProved(const std::string& job_id) const {
  int64_t n = 0;
  for (const std::string& id : Unpruned(job_id)) {
    auto it = proved.find(id);
    if (it != proved.end()) n += it->second;
  }
  return n;
}

absl::StatusOr<ShardJobs> ListShardJobs(const StoreSet& stores) {
  std::map<std::string, size_t> done, union_pruned;
  std::map<std::string, rules_db::Verification> verification;
  ShardJobs out;
  for (const records::StoreShard& shard : stores.shards()) {
    auto stub = rules_db::HashStore::NewStub(shard.channel);
    rules_db::ListJobsRequest request;
    request.set_page_size(1000);
    do {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
      rules_db::ListJobsResponse jobs;
      absl::Status s = net::FromGrpc(stub->ListJobs(&context, request, &jobs), "store " + shard.address);
      if (!s.ok()) return s;
      for (const auto& job : jobs.jobs()) {
        done[job.id()] += job.state() == rules_db::JOB_STATE_DONE;
        union_pruned[job.id()] += job.verification().pruned_store_shards() == static_cast<int>(stores.size());
        verification[job.id()] = job.verification();
        out.proved[job.id()] += job.verification().rules_proved();
        std::vector<rules_db::Job>& views = out.views[job.id()];
        if (views.empty()) out.order.push_back(job.id());
        views.push_back(job);
      }
      request.set_page_token(jobs.next_page_token());
    } while (!request.page_token().empty());
  }
  for (const auto& [id, n] : done) {
    if (n != stores.size()) continue;
    out.done.insert(id);
    if (union_pruned[id] != stores.size()) continue;
    // Every shard records the same table of the union: one of them says it.
    out.pruned_as_union[id] = records::RecordedReduction(verification[id]);
  }
  return out;
}

absl::Status MergeById(size_t sources, const PageReader& next_page,
                       const std::function<bool(const rules::Rule&)>& visit) {
  std::vector<Cursor> cursors(sources);
  auto refill = [&](size_t i) -> absl::Status {
    Cursor& c = cursors[i];
    auto page = next_page(i);
    if (!page.ok()) return page.status();
    c.page = *std::move(page);
    c.at = 0;
    c.exhausted = c.page.empty();
    return absl::OkStatus();
  };
  for (size_t i = 0; i < sources; ++i) {
    if (absl::Status s = refill(i); !s.ok()) return s;
  }
  std::string last_visited;
  bool visited_any = false;
  while (true) {
    size_t least = sources;
    for (size_t i = 0; i < sources; ++i) {
      if (cursors[i].exhausted) continue;
      if (least == sources || cursors[i].page[cursors[i].at].id() < cursors[least].page[cursors[least].at].id()) {
        least = i;
      }
    }
    if (least == sources) return absl::OkStatus();
    Cursor& c = cursors[least];
    const rules::Rule& rule = c.page[c.at];
    if (!c.last_id.empty() && rule.id() <= c.last_id) {
      return absl::DataLossError(absl::StrCat("source ", least, " gave rule ", rule.id(), " after ", c.last_id,
                                              ": a store lists its rules in id order"));
    }
    c.last_id = rule.id();
    if (!visited_any || rule.id() != last_visited) {
      if (!visit(rule)) return absl::OkStatus();
      last_visited = rule.id();
      visited_any = true;
    }
    if (++c.at == c.page.size()) {
      if (absl::Status s = refill(least); !s.ok()) return s;
    }
  }
}

absl::Status StreamShardRules(const StoreSet& stores, rules_db::ListRulesRequest request,
                              const std::function<bool(const rules::Rule&)>& visit, const ReplacedJobs* replaced) {
  request.set_page_size(kPageSize);
  request.clear_page_token();
  struct Source {
    std::unique_ptr<rules_db::RuleDb::Stub> stub;
    std::string address;
    rules_db::ListRulesRequest request;
    bool done = false;
  };
  std::vector<Source> sources;
  for (const records::StoreShard& shard : stores.shards()) {
    sources.push_back({rules_db::RuleDb::NewStub(shard.channel), shard.address, request});
  }
  bool replaced_given = false;
  auto next_page = [&](size_t i) -> absl::StatusOr<std::vector<rules::Rule>> {
    std::vector<rules::Rule> rules;
    if (i == sources.size()) {  // the replaced jobs' rules: one page
      if (!replaced_given) rules = replaced->rules;
      replaced_given = true;
      return rules;
    }
    Source& source = sources[i];
    // A store fills each page but its last; a page all of replaced jobs
    // is skipped, and an empty last page ends the source.
    while (rules.empty() && !source.done) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
      rules_db::ListRulesResponse page;
      absl::Status s = net::FromGrpc(source.stub->ListRules(&context, source.request, &page), "store " + source.address);
      if (!s.ok()) return s;
      for (auto& r : *page.mutable_rules()) {
        if (replaced == nullptr || !replaced->jobs.count(r.provenance().job_id())) rules.push_back(std::move(r));
      }
      source.done = page.next_page_token().empty();
      source.request.set_page_token(page.next_page_token());
    }
    return rules;
  };
  return MergeById(sources.size() + (replaced != nullptr), next_page, visit);
}

absl::StatusOr<PrunedJobs> FetchAndPruneJobs(const StoreSet& stores, const std::vector<std::string>& jobs,
                                             const UnionPruner& prune) {
  PrunedJobs result;
  rules_db::ListRulesRequest request;
  for (int s = rules::RuleStatus_MIN; s <= rules::RuleStatus_MAX; ++s) {
    if (rules::RuleStatus_IsValid(s) && s != rules::RULE_STATUS_UNSPECIFIED) {
      request.add_statuses(static_cast<rules::RuleStatus>(s));
    }
  }
  for (const std::string& job : jobs) {
    request.set_job_id(job);
    std::vector<rules::Rule> group;
    absl::Status fetched = StreamShardRules(stores, request, [&](const rules::Rule& r) {
      group.push_back(r);
      return true;
    });
    if (!fetched.ok()) return fetched;
    // Pruning is a function of the proved set: start from it afresh, in id
    // order as a store does.
    for (rules::Rule& r : group) {
      --result.status_delta[r.status()];
      if (r.status() == rules::RULE_STATUS_PRUNED) {
        r.set_status(rules::RULE_STATUS_PROVED);
        r.clear_status_detail();
      }
    }
    result.tables[job] = prune(group);
    for (rules::Rule& r : group) {
      ++result.status_delta[r.status()];
      result.rules.push_back(std::move(r));
    }
  }
  // Each job's rules are in id order; together they are once sorted.
  std::sort(result.rules.begin(), result.rules.end(),
            [](const rules::Rule& a, const rules::Rule& b) { return a.id() < b.id(); });
  return result;
}

}  // namespace taso::cluster
