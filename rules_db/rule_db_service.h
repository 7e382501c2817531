// The RuleDb gRPC service: a thin adapter over RuleStore.
#ifndef TASO_RULES_DB_RULE_DB_SERVICE_H_
#define TASO_RULES_DB_RULE_DB_SERVICE_H_

#include "proto/rules_db.grpc.pb.h"
#include "rules_db/rule_store.h"

namespace taso::rules_db {

class RuleDbService final : public RuleDb::Service {
 public:
  explicit RuleDbService(RuleStore* store) : store_(store) {}

  grpc::Status ListRules(grpc::ServerContext*, const ListRulesRequest* request, ListRulesResponse* response) override;
  grpc::Status GetRule(grpc::ServerContext*, const GetRuleRequest* request, rules::Rule* response) override;
  grpc::Status PutRules(grpc::ServerContext*, const PutRulesRequest* request, PutRulesResponse* response) override;
  grpc::Status LeaseCandidates(grpc::ServerContext*, const LeaseCandidatesRequest* request,
                               LeaseCandidatesResponse* response) override;
  grpc::Status ReportVerdicts(grpc::ServerContext*, const ReportVerdictsRequest* request,
                              ReportVerdictsResponse* response) override;
  grpc::Status ReportClasses(grpc::ServerContext*, const ReportClassesRequest* request,
                             ReportClassesResponse* response) override;
  grpc::Status Stats(grpc::ServerContext*, const StatsRequest* request, StatsResponse* response) override;
  grpc::Status MatchRules(grpc::ServerContext*, const MatchRulesRequest* request,
                          MatchRulesResponse* response) override;
  grpc::Status GetRules(grpc::ServerContext*, const GetRulesRequest* request, GetRulesResponse* response) override;
  grpc::Status GetPruneCheckpoint(grpc::ServerContext*, const GetPruneCheckpointRequest* request,
                                  GetPruneCheckpointResponse* response) override;
  grpc::Status StorePruning(grpc::ServerContext*, const StorePruningRequest* request,
                            StorePruningResponse* response) override;
  grpc::Status RecordPruning(grpc::ServerContext*, const RecordPruningRequest* request, Job* response) override;

 private:
  RuleStore* store_;
};

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_RULE_DB_SERVICE_H_
