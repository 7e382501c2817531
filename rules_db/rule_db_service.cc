#include "rules_db/rule_db_service.h"

#include "absl/strings/str_cat.h"
#include "net/auth_processor.h"
#include "net/grpc_status.h"

namespace taso::rules_db {
namespace {

template <typename T, typename R>
grpc::Status Reply(absl::StatusOr<T> result, R* response) {
  if (!result.ok()) return net::ToGrpc(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

// On a server with tokens, a worker is who its token says, whatever id it
// sends: a lease taken under one token is reported under that token alone,
// and a stored verdict names the token's digest, not a name the caller chose.
template <typename Request>
Request BoundToToken(const grpc::ServerContext* context, const Request& request) {
  Request bound = request;
  const std::string token = context->auth_context() ? net::CallerToken(*context->auth_context()) : "";
  if (!token.empty()) bound.set_worker_id(absl::StrCat(request.worker_id(), "@token:", token));
  return bound;
}

}  // namespace

grpc::Status RuleDbService::ListRules(grpc::ServerContext*, const ListRulesRequest* request,
                                      ListRulesResponse* response) {
  return Reply(store_->ListRules(*request), response);
}

grpc::Status RuleDbService::GetRule(grpc::ServerContext*, const GetRuleRequest* request, rules::Rule* response) {
  return Reply(store_->GetRule(request->id()), response);
}

grpc::Status RuleDbService::PutRules(grpc::ServerContext*, const PutRulesRequest* request,
                                     PutRulesResponse* response) {
  return Reply(store_->PutRules(*request), response);
}

grpc::Status RuleDbService::LeaseCandidates(grpc::ServerContext* context, const LeaseCandidatesRequest* request,
                                            LeaseCandidatesResponse* response) {
  return Reply(store_->LeaseCandidates(BoundToToken(context, *request)), response);
}

grpc::Status RuleDbService::ReportVerdicts(grpc::ServerContext* context, const ReportVerdictsRequest* request,
                                           ReportVerdictsResponse* response) {
  return Reply(store_->ReportVerdicts(BoundToToken(context, *request)), response);
}

grpc::Status RuleDbService::ReportClasses(grpc::ServerContext* context, const ReportClassesRequest* request,
                                          ReportClassesResponse* response) {
  ReportClassesRequest bound;
  for (const ReportVerdictsRequest& report : request->reports()) *bound.add_reports() = BoundToToken(context, report);
  return Reply(store_->ReportClasses(bound), response);
}

grpc::Status RuleDbService::Stats(grpc::ServerContext*, const StatsRequest* request, StatsResponse* response) {
  return Reply(store_->Stats(*request), response);
}

grpc::Status RuleDbService::MatchRules(grpc::ServerContext*, const MatchRulesRequest* request,
                                       MatchRulesResponse* response) {
  return Reply(store_->MatchRules(*request), response);
}

grpc::Status RuleDbService::GetRules(grpc::ServerContext*, const GetRulesRequest* request,
                                     GetRulesResponse* response) {
  return Reply(store_->GetRules(*request), response);
}

grpc::Status RuleDbService::GetPruneCheckpoint(grpc::ServerContext*, const GetPruneCheckpointRequest* request,
                                               GetPruneCheckpointResponse* response) {
  return Reply(store_->GetPruneCheckpoint(*request), response);
}

grpc::Status RuleDbService::StorePruning(grpc::ServerContext*, const StorePruningRequest* request,
                                         StorePruningResponse* response) {
  return Reply(store_->StorePruning(*request), response);
}

grpc::Status RuleDbService::RecordPruning(grpc::ServerContext*, const RecordPruningRequest* request, Job* response) {
  return Reply(store_->RecordPruning(*request), response);
}

}  // namespace taso::rules_db
