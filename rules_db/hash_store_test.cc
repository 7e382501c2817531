#include "rules_db/hash_store.h"
#include "rules_db/test_util.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "generator/enumerator.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "records/encoding.h"
#include "records/packed_records.h"
#include "records/spec.h"
#include "rocksdb/db.h"
#include "storage/database.h"

namespace taso::rules_db {
namespace {

using ::testing::HasSubstr;

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

// Creates job `id` on `store`: TASO's spec at size `max_ops`, one shard.
void CreateOneShardJob(GraphHashStore& store, const std::string& id, int max_ops) {
  CreateJobRequest request;
  request.set_job_id(id);
  *request.mutable_spec() = SmallSpec(max_ops);
  request.set_num_shards(1);
  ASSERT_TRUE(store.CreateJob(request).ok());
}

// Streams job `id`'s one shard (as CreateOneShardJob made it) into `store`;
// the records stored.
int64_t StreamOneShard(GraphHashStore& store, const std::string& id, int max_ops) {
  int64_t records = 0;
  for (const GraphBatch& b : Batches(SmallSpec(max_ops), id, 0, 1, 500)) {
    auto r = store.PutBatch(b);
    EXPECT_TRUE(r.ok()) << r.status();
    if (r.ok()) records += r->records;
  }
  return records;
}

// Graph records of every job left in the spools of the store at `dir`.
int64_t GraphRecordsLeft(const std::string& dir) {
  const std::filesystem::path spools = std::filesystem::path(dir) / "graph_spool";
  if (!std::filesystem::exists(spools)) return 0;
  int64_t n = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(spools)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(records::ForEachPackedRecord(bytes, [&](std::string_view, std::string_view) { ++n; }).ok())
        << entry.path();
  }
  return n;
}

TEST(HashStore, AFinalizedJobsGraphsAreDroppedUnlessKept) {
  for (bool keep : {false, true}) {
    SCOPED_TRACE(keep ? "keep_graphs" : "default");
    const std::string dir = TempDir(keep ? "kept" : "dropped");
    HashStoreOptions options;
    options.path = dir;
    options.write_buffer_mb = 4;
    options.class_checker = generator::RecheckerFor;
    options.keep_graphs = keep;
    auto store = GraphHashStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    CreateOneShardJob(**store, "j", 3);
    const int64_t records = StreamOneShard(**store, "j", 3);
    ASSERT_GT(records, 0);
    EXPECT_EQ(GraphRecordsLeft(dir), records);
    ASSERT_TRUE((*store)->ReportProgress(Done("j", 0)).ok());
    const Job done = WaitGenerated(**store, "j");
    (*store)->WaitForFinalization();
    EXPECT_EQ(done.graphs(), records);
    EXPECT_GT(done.candidate_classes(), 0);
    EXPECT_EQ(GraphRecordsLeft(dir), keep ? records : 0);
    // The classes are what verification reads: all there, after a reopen too.
    const std::vector<std::string> classes = AllClasses(**store, "j", 1000);
    EXPECT_EQ(static_cast<int64_t>(classes.size()), done.candidate_classes());
    store->reset();
    auto reopened = GraphHashStore::Open(options);
    ASSERT_TRUE(reopened.ok()) << reopened.status();
    EXPECT_EQ(AllClasses(**reopened, "j", 1000), classes);
    EXPECT_EQ(GraphRecordsLeft(dir), keep ? records : 0);
  }
}

// A finished job's graphs go; another job's, still streaming, stay.
TEST(HashStore, AJobsGraphsAreDroppedWithoutTouchingAJobStillStreaming) {
  const std::string dir = TempDir("two_jobs");
  auto store = OpenStore(dir);
  ASSERT_NE(store, nullptr);
  int64_t records[2] = {0, 0};
  const char* ids[2] = {"a", "b"};
  for (int j = 0; j < 2; ++j) {
    CreateOneShardJob(*store, ids[j], 3);
    records[j] = StreamOneShard(*store, ids[j], 3);
  }
  EXPECT_EQ(GraphRecordsLeft(dir), records[0] + records[1]);
  ASSERT_TRUE(store->ReportProgress(Done("a", 0)).ok());
  const Job a = WaitGenerated(*store, "a");
  store->WaitForFinalization();
  EXPECT_GT(a.candidate_classes(), 0);
  EXPECT_EQ(GraphRecordsLeft(dir), records[1]) << "job b still streams: only a's graphs go";
  ASSERT_TRUE(store->ReportProgress(Done("b", 0)).ok());
  const Job b = WaitGenerated(*store, "b");
  store->WaitForFinalization();
  EXPECT_EQ(b.candidate_classes(), a.candidate_classes());
  EXPECT_EQ(GraphRecordsLeft(dir), 0);
  EXPECT_EQ(AllClasses(*store, "b", 1000).size(), AllClasses(*store, "a", 1000).size());
}

// A crash between writing a batch's graphs and logging its lengths leaves
// graphs nobody acknowledged at the ends of the spool's files; the store's
// next open cuts them off, and the generator's resent batch (the same graphs
// again, as a restarted generator re-enumerates) counts once.
TEST(HashStore, GraphsPastTheLastAcknowledgedBatchAreDroppedOnReopen) {
  const std::string dir = TempDir("crash_tail");
  std::vector<std::string> reference;
  int64_t reference_graphs = 0;
  {
    auto store = OpenStore(TempDir("crash_tail_reference"));
    CreateOneShardJob(*store, "j", 3);
    reference_graphs = StreamOneShard(*store, "j", 3);
    ASSERT_TRUE(store->ReportProgress(Done("j", 0)).ok());
    EXPECT_EQ(WaitGenerated(*store, "j").graphs(), reference_graphs);
    reference = AllClasses(*store, "j", 1000);
  }
  const std::vector<GraphBatch> batches = Batches(SmallSpec(3), "j", 0, 1, 500);
  ASSERT_GT(batches.size(), 3u);
  {
    auto store = OpenStore(dir);
    CreateOneShardJob(*store, "j", 3);
    for (size_t i = 0; i < 2; ++i) ASSERT_TRUE(store->PutBatch(batches[i]).ok());
  }
  // Batch 2's graphs reached the files; its lengths never reached the log.
  // And a record cut short, as a write interrupted part way leaves it.
  std::string tail = batches[2].packed() + batches[3].packed().substr(0, 9);
  const std::filesystem::path spool = std::filesystem::path(dir) / "graph_spool";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(spool)) {
    if (entry.is_regular_file() && entry.path().filename() == "bucket-000") {
      std::ofstream(entry.path(), std::ios::binary | std::ios::app) << tail;
    }
  }
  auto store = OpenStore(dir);
  auto job = store->GetJob("j");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->shards(0).acked_sequence(), batches[1].sequence());
  for (size_t i = 2; i < batches.size(); ++i) ASSERT_TRUE(store->PutBatch(batches[i]).ok());
  ASSERT_TRUE(store->PutBatch(batches[0]).ok()) << "acknowledged already: a duplicate";
  ASSERT_TRUE(store->ReportProgress(Done("j", 0)).ok());
  EXPECT_EQ(WaitGenerated(*store, "j").graphs(), reference_graphs);
  EXPECT_EQ(AllClasses(*store, "j", 1000), reference);
}

// Graphs a generator sends twice (re-enumerated after it restarted from an
// earlier cursor) are one graph each.
TEST(HashStore, GraphsStoredTwiceAreOneGraph) {
  auto store = OpenStore(TempDir("twice"));
  CreateOneShardJob(*store, "j", 3);
  const std::vector<GraphBatch> batches = Batches(SmallSpec(3), "j", 0, 1, 500);
  int64_t graphs = 0;
  for (const GraphBatch& b : batches) {
    auto r = store->PutBatch(b);
    ASSERT_TRUE(r.ok()) << r.status();
    graphs += r->records;
  }
  GraphBatch again = batches[1];
  again.set_sequence(batches.back().sequence() + 1);  // a new batch, the same graphs
  ASSERT_TRUE(store->PutBatch(again).ok());
  ASSERT_TRUE(store->ReportProgress(Done("j", 0)).ok());
  EXPECT_EQ(WaitGenerated(*store, "j").graphs(), graphs);
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

TEST(HashStore, AStoreWithoutAClassCheckerFailsTheJobItCannotFinalize) {
  HashStoreOptions options;
  options.path = TempDir("unchecked");
  auto store = GraphHashStore::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  CreateOneShardJob(**store, "j", 1);
  ASSERT_TRUE((*store)->ReportProgress(Done("j", 0)).ok());
  (*store)->WaitForFinalization();
  auto job = (*store)->GetJob("j");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), JOB_STATE_FAILED);
  EXPECT_THAT(job->error(), HasSubstr("class checker"));
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

namespace taso::rules_db {
namespace {

std::unique_ptr<GraphHashStore> OpenShard(const std::string& dir, int index, int count, absl::Status* error) {
  HashStoreOptions options;
  options.path = dir;
  options.write_buffer_mb = 4;
  options.store_index = index;
  options.store_count = count;
  auto store = GraphHashStore::Open(options);
  *error = store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

TEST(HashStore, KnowsItsIndexAndKeepsIt) {
  const std::string dir = TempDir("identity");
  absl::Status error;
  {
    auto store = OpenShard(dir, 1, 3, &error);
    ASSERT_TRUE(error.ok()) << error;
    EXPECT_EQ(store->info().store_index(), 1);
    EXPECT_EQ(store->info().store_count(), 3);
  }
  {
    auto store = OpenShard(dir, -1, -1, &error);  // no flags: as persisted
    ASSERT_TRUE(error.ok()) << error;
    EXPECT_EQ(store->info().store_index(), 1);
  }
  OpenShard(dir, 0, 3, &error);
  EXPECT_EQ(error.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(error.message(), ::testing::AllOf(HasSubstr("is store 1 of 3"), HasSubstr("not store 0 of 3")));
  OpenShard(TempDir("identity-bad"), 3, 3, &error);
  EXPECT_EQ(error.code(), absl::StatusCode::kInvalidArgument);
}

TEST(HashStore, RefusesABatchRoutedByAnotherOrder) {
  absl::Status error;
  auto store = OpenShard(TempDir("routing"), 1, 2, &error);
  ASSERT_TRUE(error.ok()) << error;
  CreateJobRequest request;
  request.set_job_id("j");
  *request.mutable_spec() = SmallSpec(2);
  request.set_num_shards(1);
  ASSERT_TRUE(store->CreateJob(request).ok());
  GraphBatch batch = Batches(request.spec(), "j", 0, 1, 500)[0];
  batch.set_store_index(0);
  batch.set_store_count(2);
  absl::Status s = store->PutBatch(batch).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), ::testing::AllOf(HasSubstr("store 0 of 2"), HasSubstr("store 1 of 2")));
  batch.set_store_count(0);  // unrouted: only a single store takes it
  EXPECT_EQ(store->PutBatch(batch).status().code(), absl::StatusCode::kFailedPrecondition);
  batch.set_store_index(1);
  batch.set_store_count(2);
  EXPECT_TRUE(store->PutBatch(batch).ok());
}

}  // namespace
}  // namespace taso::rules_db
