// Sends one graph batch to a store, routed as the flags say, the way a
// generator that ordered its store list differently would (multistore_test).
//   send_batch --store ADDR --job ID --store_index I --store_count N
// Prints the store's answer; exit 0 if it stored the batch, 1 if it refused.
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "grpcpp/grpcpp.h"
#include "proto/rules_db.grpc.pb.h"

ABSL_FLAG(std::string, store, "", "store address");
ABSL_FLAG(std::string, job, "", "a generating job on that store");
ABSL_FLAG(int32_t, store_index, 0, "the routing the batch claims: store index");
ABSL_FLAG(int32_t, store_count, 1, "the routing the batch claims: store count");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  auto stub = taso::rules_db::HashStore::NewStub(
      grpc::CreateChannel(absl::GetFlag(FLAGS_store), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  taso::rules_db::StreamAck ack;
  auto writer = stub->StreamGraphs(&context, &ack);
  taso::rules_db::GraphBatch batch;
  batch.set_job_id(absl::GetFlag(FLAGS_job));
  batch.set_shard(0);
  batch.set_sequence(1);
  batch.set_store_index(absl::GetFlag(FLAGS_store_index));
  batch.set_store_count(absl::GetFlag(FLAGS_store_count));
  // One record: a 16-byte fingerprint and a 1-byte (unchecked) encoding.
  batch.set_packed(std::string(16, '\x01') + std::string(1, '\x01') + "x");
  writer->Write(batch);
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  std::cout << (status.ok() ? "OK" : std::to_string(status.error_code())) << " " << status.error_message() << "\n";
  return status.ok() ? 0 : 1;
}
