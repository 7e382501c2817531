// Helpers for tests of the stores: a temporary database, a small spec, and a
// whole generation job run in-process (enumerated, stored, finalized).
#ifndef TASO_RULES_DB_TEST_UTIL_H_
#define TASO_RULES_DB_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "generator/enumerator.h"
#include "generator/recheck.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "records/encoding.h"
#include "records/spec.h"
#include "rules_db/hash_store.h"
#include "storage/test_dir.h"

namespace taso::rules_db {

inline std::string TempDir(const std::string& name) { return storage::FreshTestDir(name); }

inline generator::GenerationSpec SmallSpec(int max_ops) {
  generator::GenerationSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    seed: 3
    inputs { name: "x1" dims: [2, 4] }
    inputs { name: "x2" dims: [2, 4] }
    inputs { name: "x3" dims: [2, 4] }
    constants { name: "w1" dims: [4, 4] }
    operators { kind: OP_EW_ADD }
    operators { kind: OP_EW_MUL }
    operators { kind: OP_MATMUL }
    operators { kind: OP_RELU }
  )pb",
                                                            &spec));
  spec.set_max_ops(max_ops);
  return spec;
}

inline std::unique_ptr<GraphHashStore> OpenStore(const std::string& dir) {
  HashStoreOptions options;
  options.path = dir;
  options.write_buffer_mb = 4;
  options.class_checker = generator::RecheckerFor;  // as taso_rules_db wires it
  auto store = GraphHashStore::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

// Enumerates one shard into batches of about `batch` records.
inline std::vector<GraphBatch> Batches(const generator::GenerationSpec& proto, const std::string& job, int shard,
                                int shards, int batch) {
  auto spec = records::SpecFromProto(proto);
  EXPECT_TRUE(spec.ok());
  struct Sink : generator::GraphSink {
    std::vector<GraphBatch> batches;
    GraphBatch current;
    int limit;
    void OnGraph(const Fingerprint& fp, std::string_view encoding, int) override {
      records::AppendPackedRecord(fp.ToBytes(), encoding, *current.mutable_packed());
      ++count;
    }
    bool OnCheckpoint(int64_t cursor, double) override {
      if (count >= limit) Cut(cursor);
      return true;
    }
    void Cut(int64_t cursor) {
      current.set_resume_cursor(cursor);
      current.set_sequence(static_cast<int64_t>(batches.size()) + 1);
      batches.push_back(current);
      current.clear_packed();
      count = 0;
    }
    int count = 0;
  } sink;
  sink.limit = batch;
  sink.current.set_job_id(job);
  sink.current.set_shard(shard);
  generator::EnumerationOptions options;
  options.max_ops = proto.max_ops();
  options.shard = shard;
  options.num_shards = shards;
  auto stats = generator::Enumerate(*spec, options, sink);
  EXPECT_TRUE(stats.ok());
  sink.Cut(stats->cursor);
  return sink.batches;
}

inline Job WaitGenerated(GraphHashStore& store, const std::string& job_id) {
  store.WaitForFinalization();
  auto job = store.GetJob(job_id);
  EXPECT_TRUE(job.ok());
  return *job;
}

inline ProgressReport Done(const std::string& job, int shard) {
  ProgressReport r;
  r.set_job_id(job);
  r.set_shard(shard);
  r.set_done(true);
  return r;
}

inline std::vector<std::string> AllClasses(GraphHashStore& store, const std::string& job_id, int page_size) {
  std::vector<std::string> out;
  ListCandidateClassesRequest request;
  request.set_job_id(job_id);
  request.set_page_size(page_size);
  while (true) {
    auto page = store.ListCandidateClasses(request);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) break;
    for (const CandidateClass& c : page->classes()) out.push_back(c.SerializeAsString());
    if (page->next_page_token().empty()) break;
    request.set_page_token(page->next_page_token());
  }
  return out;
}

// Runs job `job_id` over `spec` in one shard into `store` and waits until it
// is GENERATED.
inline Job RunJob(GraphHashStore& store, const generator::GenerationSpec& spec, const std::string& job_id) {
  CreateJobRequest request;
  request.set_job_id(job_id);
  *request.mutable_spec() = spec;
  request.set_num_shards(1);
  EXPECT_TRUE(store.CreateJob(request).ok());
  for (const GraphBatch& b : Batches(spec, job_id, 0, 1, 5000)) EXPECT_TRUE(store.PutBatch(b).ok());
  EXPECT_TRUE(store.ReportProgress(Done(job_id, 0)).ok());
  return WaitGenerated(store, job_id);
}

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_TEST_UTIL_H_
