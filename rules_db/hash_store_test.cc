#include "rules_db/hash_store.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "generator/encoding.h"
#include "generator/enumerator.h"
#include "generator/spec.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace taso::rules_db {
namespace {

using ::testing::HasSubstr;

std::string TempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

generator::GenerationSpec SmallSpec(int max_ops) {
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

std::unique_ptr<GraphHashStore> OpenStore(const std::string& dir) {
  HashStoreOptions options;
  options.path = dir;
  options.write_buffer_mb = 4;
  auto store = GraphHashStore::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

// Enumerates one shard into batches of about `batch` records.
std::vector<GraphBatch> Batches(const generator::GenerationSpec& proto, const std::string& job, int shard,
                                int shards, int batch) {
  auto spec = generator::SpecFromProto(proto);
  EXPECT_TRUE(spec.ok());
  struct Sink : generator::GraphSink {
    std::vector<GraphBatch> batches;
    GraphBatch current;
    int limit;
    void OnGraph(const Fingerprint& fp, std::string_view encoding, int) override {
      AppendPackedRecord(fp.ToBytes(), encoding, *current.mutable_packed());
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

Job WaitGenerated(GraphHashStore& store, const std::string& job_id) {
  store.WaitForFinalization();
  auto job = store.GetJob(job_id);
  EXPECT_TRUE(job.ok());
  return *job;
}

ProgressReport Done(const std::string& job, int shard) {
  ProgressReport r;
  r.set_job_id(job);
  r.set_shard(shard);
  r.set_done(true);
  return r;
}

std::vector<std::string> AllClasses(GraphHashStore& store, const std::string& job_id, int page_size) {
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

TEST(HashStore, CreateJobIsIdempotentAndRejectsConflicts) {
  auto store = OpenStore(TempDir("create"));
  CreateJobRequest request;
  request.set_job_id("j1");
  *request.mutable_spec() = SmallSpec(2);
  request.set_num_shards(2);
  auto a = store->CreateJob(request);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->state(), JOB_STATE_GENERATING);
  EXPECT_EQ(a->shards_size(), 2);
  EXPECT_TRUE(store->CreateJob(request).ok());
  request.set_num_shards(3);
  EXPECT_EQ(store->CreateJob(request).status().code(), absl::StatusCode::kAlreadyExists);
  request.set_job_id("bad id!");
  EXPECT_EQ(store->CreateJob(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_job_id("j2");
  request.mutable_spec()->clear_operators();
  EXPECT_THAT(store->CreateJob(request).status().message(), HasSubstr("spec"));
  EXPECT_EQ(store->GetJob("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(HashStore, BatchesAreIdempotentAndClassesAreFound) {
  const std::string dir = TempDir("batches");
  auto store = OpenStore(dir);
  CreateJobRequest request;
  request.set_job_id("j");
  *request.mutable_spec() = SmallSpec(3);
  request.set_num_shards(2);
  ASSERT_TRUE(store->CreateJob(request).ok());
  int64_t records = 0;
  for (int shard = 0; shard < 2; ++shard) {
    std::vector<GraphBatch> batches = Batches(request.spec(), "j", shard, 2, 500);
    ASSERT_GT(batches.size(), 2u);
    for (const GraphBatch& b : batches) {
      auto r = store->PutBatch(b);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_FALSE(r->duplicate);
      records += r->records;
    }
    // A retried batch is acknowledged and not stored again.
    auto again = store->PutBatch(batches[1]);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->duplicate);
  }
  auto job = store->GetJob("j");
  ASSERT_TRUE(job.ok());
  EXPECT_GT(job->shards(1).resume_cursor(), 0);
  EXPECT_EQ(job->shards(0).graphs_stored() + job->shards(1).graphs_stored(), records);

  ASSERT_TRUE(store->ReportProgress(Done("j", 0)).ok());
  EXPECT_EQ(store->ListCandidateClasses([] {
                ListCandidateClassesRequest r;
                r.set_job_id("j");
                return r;
              }())
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store->ReportProgress(Done("j", 1)).ok());
  Job done = WaitGenerated(*store, "j");
  EXPECT_EQ(done.state(), JOB_STATE_GENERATED);
  EXPECT_EQ(done.graphs(), records);  // every record was a distinct graph
  EXPECT_GT(done.distinct_fingerprints(), 0);
  EXPECT_LT(done.distinct_fingerprints(), done.graphs());
  EXPECT_GT(done.candidate_classes(), 0);
  EXPECT_GT(done.candidate_pairs(), 0);

  std::vector<std::string> classes = AllClasses(*store, "j", 7);
  EXPECT_EQ(static_cast<int64_t>(classes.size()), done.candidate_classes());
  int64_t pairs = 0, rejected = 0;
  for (const std::string& bytes : classes) {
    CandidateClass c;
    ASSERT_TRUE(c.ParseFromString(bytes));
    EXPECT_GE(c.members_size(), 2);
    for (const CandidatePair& p : c.pairs()) {
      EXPECT_TRUE(c.members(p.source_member()).canonical_order());
      ++pairs;
      rejected += p.rejected();
      if (p.rejected()) {
        EXPECT_FALSE(p.reason().empty());
      }
    }
  }
  EXPECT_EQ(pairs - rejected, done.candidate_pairs());
  EXPECT_EQ(rejected, done.rejected_pairs());
  // A finished job takes no more graphs.
  EXPECT_EQ(store->PutBatch(Batches(request.spec(), "j", 0, 2, 500)[0]).status().code(),
            absl::StatusCode::kFailedPrecondition);

  // Everything survives a reopen.
  store.reset();
  store = OpenStore(dir);
  auto reopened = store->GetJob("j");
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(reopened->state(), JOB_STATE_GENERATED);
  EXPECT_EQ(reopened->candidate_pairs(), done.candidate_pairs());
  EXPECT_EQ(AllClasses(*store, "j", 1000), classes);
}

TEST(HashStore, ShardCountsDoNotChangeTheClasses) {
  std::vector<std::string> reference;
  for (int shards : {1, 3}) {
    auto store = OpenStore(TempDir("shards" + std::to_string(shards)));
    CreateJobRequest request;
    request.set_job_id("j");
    *request.mutable_spec() = SmallSpec(3);
    request.set_num_shards(shards);
    ASSERT_TRUE(store->CreateJob(request).ok());
    for (int s = 0; s < shards; ++s) {
      for (const GraphBatch& b : Batches(request.spec(), "j", s, shards, 300)) ASSERT_TRUE(store->PutBatch(b).ok());
      ASSERT_TRUE(store->ReportProgress(Done("j", s)).ok());
    }
    WaitGenerated(*store, "j");
    std::vector<std::string> classes = AllClasses(*store, "j", 100);
    EXPECT_FALSE(classes.empty());
    if (reference.empty()) {
      reference = classes;
    } else {
      EXPECT_EQ(classes, reference);
    }
  }
}

TEST(HashStore, MalformedBatchesAreRejected) {
  auto store = OpenStore(TempDir("malformed"));
  CreateJobRequest request;
  request.set_job_id("j");
  *request.mutable_spec() = SmallSpec(2);
  request.set_num_shards(1);
  ASSERT_TRUE(store->CreateJob(request).ok());
  GraphBatch batch;
  batch.set_job_id("j");
  batch.set_shard(0);
  batch.set_sequence(1);
  batch.set_packed(std::string(10, 'x'));
  EXPECT_THAT(store->PutBatch(batch).status().message(), HasSubstr("truncated"));
  batch.set_shard(5);
  EXPECT_EQ(store->PutBatch(batch).status().code(), absl::StatusCode::kInvalidArgument);
  batch.set_job_id("other");
  EXPECT_EQ(store->PutBatch(batch).status().code(), absl::StatusCode::kNotFound);
  // Nothing was stored: the shard's progress is untouched.
  auto job = store->GetJob("j");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->shards(0).acked_sequence(), 0);
}

TEST(HashStore, SecondOpenOfTheSameDirectoryIsAClearError) {
  const std::string dir = TempDir("locked");
  auto first = OpenStore(dir);
  HashStoreOptions options;
  options.path = dir;
  auto second = GraphHashStore::Open(options);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("in use"));
}

}  // namespace
}  // namespace taso::rules_db
