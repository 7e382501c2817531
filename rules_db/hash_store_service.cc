#include "rules_db/hash_store_service.h"

#include "absl/strings/str_cat.h"
#include "net/grpc_status.h"
#include "records/store_shards.h"

namespace taso::rules_db {

using net::ToGrpc;

void HashStoreService::AttachMetrics(net::MetricsRegistry* registry) {
  batches_ = registry->AddCounter("taso_store_batches_total",
                                  "Graph batches received, by outcome: stored, duplicate, misrouted (routed by "
                                  "another store order) or the refusal's status code",
                                  {"outcome"});
  records_ = registry->AddCounter("taso_store_records_total", "Graph records stored");
}

grpc::Status HashStoreService::CreateJob(grpc::ServerContext*, const CreateJobRequest* request,
                                         Job* response) {
  auto job = store_->CreateJob(*request);
  if (!job.ok()) return ToGrpc(job.status());
  *response = std::move(*job);
  return grpc::Status::OK;
}

grpc::Status HashStoreService::StreamGraphs(grpc::ServerContext* context,
                                            grpc::ServerReader<GraphBatch>* reader, StreamAck* response) {
  GraphBatch batch;
  std::string job_id;
  int shard = -1;
  while (reader->Read(&batch)) {
    if (shard < 0) {
      job_id = batch.job_id();
      shard = batch.shard();
    } else if (batch.job_id() != job_id || batch.shard() != shard) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("one stream carries one (job, shard); got ", batch.job_id(), "/",
                                       batch.shard(), " after ", job_id, "/", shard));
    }
    auto result = store_->PutBatch(batch);
    if (!result.ok()) {
      bool misrouted = !records::CheckBatchRouting(store_->info(), batch.store_index(), batch.store_count()).ok();
      batches_.Increment({misrouted ? "misrouted" : absl::StatusCodeToString(result.status().code())});
      return ToGrpc(result.status());
    }
    batches_.Increment({result->duplicate ? "duplicate" : "stored"});
    if (!result->duplicate) records_.Increment({}, result->records);
    if (result->duplicate) {
      response->set_batches_duplicate(response->batches_duplicate() + 1);
    } else {
      response->set_batches_stored(response->batches_stored() + 1);
      response->set_records_stored(response->records_stored() + result->records);
    }
    response->set_acked_sequence(result->acked_sequence);
    if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled");
  }
  return grpc::Status::OK;
}

grpc::Status HashStoreService::ReportProgress(grpc::ServerContext*, const ProgressReport* request,
                                              ProgressAck* response) {
  auto ack = store_->ReportProgress(*request);
  if (!ack.ok()) return ToGrpc(ack.status());
  *response = *ack;
  return grpc::Status::OK;
}

grpc::Status HashStoreService::ListCandidateClasses(grpc::ServerContext*,
                                                    const ListCandidateClassesRequest* request,
                                                    ListCandidateClassesResponse* response) {
  auto page = store_->ListCandidateClasses(*request);
  if (!page.ok()) return ToGrpc(page.status());
  *response = std::move(*page);
  return grpc::Status::OK;
}

grpc::Status HashStoreService::GetJob(grpc::ServerContext*, const GetJobRequest* request, Job* response) {
  auto job = store_->GetJob(request->job_id());
  if (!job.ok()) return ToGrpc(job.status());
  *response = std::move(*job);
  return grpc::Status::OK;
}

grpc::Status HashStoreService::ListJobs(grpc::ServerContext*, const ListJobsRequest* request,
                                        ListJobsResponse* response) {
  auto jobs = store_->ListJobs(*request);
  if (!jobs.ok()) return ToGrpc(jobs.status());
  *response = std::move(*jobs);
  return grpc::Status::OK;
}

grpc::Status HashStoreService::CancelJob(grpc::ServerContext*, const CancelJobRequest* request, Job* response) {
  auto job = store_->CancelJob(request->job_id());
  if (!job.ok()) return ToGrpc(job.status());
  *response = std::move(*job);
  return grpc::Status::OK;
}

grpc::Status HashStoreService::GetStoreInfo(grpc::ServerContext*, const GetStoreInfoRequest*, StoreInfo* response) {
  *response = store_->info();
  return grpc::Status::OK;
}

}  // namespace taso::rules_db
