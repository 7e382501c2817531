#include "cli/remote_prune_source.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "net/grpc_status.h"
#include "proto/rules_db.grpc.pb.h"

namespace taso::cli {
namespace {

// The stores' per-call limits (rules_db/rule_store_prune.cc, ListRules' page).
constexpr int kRulesPerPage = 1000;
constexpr int kRulesPerGet = 1000;
constexpr absl::Duration kReadDeadline = absl::Minutes(5);
constexpr absl::Duration kWriteDeadline = absl::Minutes(10);

}  // namespace

RemotePruneSource::RemotePruneSource(std::vector<records::StoreShard> shards, std::string job_id, bool restart,
                                     net::RetryPolicy retry)
    : shards_(std::move(shards)), job_id_(std::move(job_id)), restart_(restart), retry_(std::move(retry)) {}

template <typename Request, typename Response, typename Method>
absl::Status RemotePruneSource::Call(int source, Method method, const Request& request, Response& response,
                                     absl::Duration deadline) {
  const records::StoreShard& shard = shards_[source];
  auto stub = rules_db::RuleDb::NewStub(shard.channel);
  return net::RetryWithBackoff(retry_, [&]() -> absl::Status {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(deadline));
    response.Clear();
    return net::FromGrpc(((*stub).*method)(&context, request, &response), absl::StrCat("store ", shard.address));
  });
}

absl::Status RemotePruneSource::ForEach(int source, const std::function<absl::Status(const rules::Rule&)>& visit) {
  rules_db::ListRulesRequest request;
  request.set_job_id(job_id_);
  request.add_statuses(rules::RULE_STATUS_PROVED);
  request.add_statuses(rules::RULE_STATUS_PRUNED);
  request.set_page_size(kRulesPerPage);
  while (true) {
    rules_db::ListRulesResponse page;
    if (absl::Status s = Call(source, &rules_db::RuleDb::Stub::ListRules, request, page, kReadDeadline); !s.ok()) {
      return s;
    }
    for (const rules::Rule& rule : page.rules()) {
      if (absl::Status s = visit(rule); !s.ok()) return s;
    }
    if (page.next_page_token().empty()) return absl::OkStatus();
    request.set_page_token(page.next_page_token());
  }
}

absl::Status RemotePruneSource::Fetch(int source, const std::vector<std::string>& ids,
                                      std::vector<rules::Rule>& out) {
  for (size_t begin = 0; begin < ids.size(); begin += kRulesPerGet) {
    rules_db::GetRulesRequest request;
    const size_t end = std::min(ids.size(), begin + kRulesPerGet);
    for (size_t i = begin; i < end; ++i) request.add_ids(ids[i]);
    rules_db::GetRulesResponse got;
    if (absl::Status s = Call(source, &rules_db::RuleDb::Stub::GetRules, request, got, kReadDeadline); !s.ok()) {
      return s;
    }
    if (got.rules_size() != request.ids_size()) {
      return absl::DataLossError(absl::StrCat("store ", shards_[source].address, " returned ", got.rules_size(),
                                              " rules for ", request.ids_size(), " ids"));
    }
    for (rules::Rule& rule : *got.mutable_rules()) out.push_back(std::move(rule));
  }
  return absl::OkStatus();
}

absl::Status RemotePruneSource::Commit(int source, const std::vector<rules::Rule>& changed,
                                       const std::string& checkpoint) {
  rules_db::StorePruningRequest request;
  request.set_job_id(job_id_);
  request.set_checkpoint(checkpoint);
  for (const rules::Rule& rule : changed) {
    rules_db::PruneVerdict& v = *request.add_verdicts();
    v.set_rule_id(rule.id());
    v.set_status(rule.status());
    v.set_status_detail(rule.status_detail());
  }
  rules_db::StorePruningResponse response;
  return Call(source, &rules_db::RuleDb::Stub::StorePruning, request, response, kWriteDeadline);
}

absl::StatusOr<std::string> RemotePruneSource::Checkpoint(int source) {
  if (restart_) return std::string();
  rules_db::GetPruneCheckpointRequest request;
  request.set_job_id(job_id_);
  rules_db::GetPruneCheckpointResponse response;
  if (absl::Status s = Call(source, &rules_db::RuleDb::Stub::GetPruneCheckpoint, request, response, kReadDeadline);
      !s.ok()) {
    return s;
  }
  return response.checkpoint();
}

absl::Status RemotePruneSource::RecordPruning(const records::ReductionTable& table) {
  rules_db::RecordPruningRequest request;
  request.set_job_id(job_id_);
  request.set_store_shards(static_cast<int>(shards_.size()));
  records::RecordReduction(table, *request.mutable_reduction());
  for (int i = 0; i < source_count(); ++i) {
    rules_db::Job job;
    if (absl::Status s = Call(i, &rules_db::RuleDb::Stub::RecordPruning, request, job, kWriteDeadline); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace taso::cli
