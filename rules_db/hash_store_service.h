// The HashStore gRPC service: a thin adapter over HashStore.
#ifndef TASO_RULES_DB_HASH_STORE_SERVICE_H_
#define TASO_RULES_DB_HASH_STORE_SERVICE_H_

#include "net/metrics.h"
#include "proto/rules_db.grpc.pb.h"
#include "rules_db/hash_store.h"

namespace taso::rules_db {

class HashStoreService final : public HashStore::Service {
 public:
  explicit HashStoreService(GraphHashStore* store) : store_(store) {}

  grpc::Status CreateJob(grpc::ServerContext*, const CreateJobRequest* request, Job* response) override;
  grpc::Status StreamGraphs(grpc::ServerContext*, grpc::ServerReader<GraphBatch>* reader,
                            StreamAck* response) override;
  grpc::Status ReportProgress(grpc::ServerContext*, const ProgressReport* request,
                              ProgressAck* response) override;
  grpc::Status ListCandidateClasses(grpc::ServerContext*, const ListCandidateClassesRequest* request,
                                    ListCandidateClassesResponse* response) override;
  grpc::Status GetJob(grpc::ServerContext*, const GetJobRequest* request, Job* response) override;
  grpc::Status ListJobs(grpc::ServerContext*, const ListJobsRequest* request,
                        ListJobsResponse* response) override;
  grpc::Status CancelJob(grpc::ServerContext*, const CancelJobRequest* request, Job* response) override;
  grpc::Status GetStoreInfo(grpc::ServerContext*, const GetStoreInfoRequest*, StoreInfo* response) override;

  // Counts graph batches by outcome and records stored into `registry`
  // (must outlive the service); call before serving.
  void AttachMetrics(net::MetricsRegistry* registry);

 private:
  GraphHashStore* store_;
  net::Counter batches_;  // no-op until AttachMetrics
  net::Counter records_;
};

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_HASH_STORE_SERVICE_H_
