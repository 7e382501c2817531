#include "rules_db/rule_db_service.h"

#include "net/grpc_status.h"

namespace taso::rules_db {
namespace {

template <typename T, typename R>
grpc::Status Reply(absl::StatusOr<T> result, R* response) {
  if (!result.ok()) return net::ToGrpc(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
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

grpc::Status RuleDbService::LeaseCandidates(grpc::ServerContext*, const LeaseCandidatesRequest* request,
                                            LeaseCandidatesResponse* response) {
  return Reply(store_->LeaseCandidates(*request), response);
}

grpc::Status RuleDbService::ReportVerdicts(grpc::ServerContext*, const ReportVerdictsRequest* request,
                                           ReportVerdictsResponse* response) {
  return Reply(store_->ReportVerdicts(*request), response);
}

grpc::Status RuleDbService::Stats(grpc::ServerContext*, const StatsRequest* request, StatsResponse* response) {
  return Reply(store_->Stats(*request), response);
}

grpc::Status RuleDbService::MatchRules(grpc::ServerContext*, const MatchRulesRequest* request,
                                       MatchRulesResponse* response) {
  return Reply(store_->MatchRules(*request), response);
}

}  // namespace taso::rules_db
