#include "rules_db/hash_store.h"

#include <algorithm>
#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/hash.h"
#include "records/encoding.h"
#include "records/spec.h"
#include "records/store_shards.h"
#include "rules_db/graph_spool.h"
#include "rules_db/hash_store_internal.h"
#include "rocksdb/cache.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"
#include "rocksdb/write_batch.h"
#include "storage/database.h"
#include "storage/rocks_status.h"

namespace taso::rules_db {
namespace {

using internal::kClassesFamily;
using internal::kGraphsFamily;
using internal::U32;

constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 1000;
constexpr char kIdentityKey[] = "store";

uint32_t ReadU32(std::string_view s) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[i]);
  return v;
}

std::string JobKey(const std::string& id) { return "job/" + id; }
std::string JobNumberKey(const std::string& id) { return "jobnum/" + id; }
std::string ShardKey(const std::string& id, int shard) { return absl::StrCat("shard/", id, "/", U32(shard)); }
std::string SpoolKey(const std::string& id) { return "spool/" + id; }

void SetNow(google::protobuf::Timestamp* t) { storage::SetTime(absl::Now(), t); }

bool ValidJobId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  }
  return true;
}

}  // namespace

GraphHashStore::GraphHashStore(const HashStoreOptions& options) : options_(options) {}

absl::StatusOr<std::unique_ptr<GraphHashStore>> GraphHashStore::Open(const HashStoreOptions& options) {
  if (options.path.empty()) return absl::InvalidArgumentError("the store needs a database directory");
  std::unique_ptr<GraphHashStore> store(new GraphHashStore(options));
  if (absl::Status s = store->Init(); !s.ok()) return s;
  return store;
}

absl::Status GraphHashStore::Init() {
  storage::DatabaseOptions database;
  database.path = options_.path;
  database.name_in_errors = absl::StrCat("database ", options_.path);
  database.db.max_background_flushes = 2;
  database.db.max_background_compactions = 1;
  database.db.max_open_files = 512;
  database.db.allow_concurrent_memtable_write = false;

  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(static_cast<size_t>(options_.block_cache_mb) << 20);
  table.cache_index_and_filter_blocks = true;
  // Families are read by key, often a key that is not there (is this rule
  // stored? this class verified?): a filter answers those, and finds the one
  // file of several that holds a key, without reading a block of each.
  // Deriving size 4's renamings spent a quarter of its time in such block
  // reads.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  rocksdb::ColumnFamilyOptions& cf = database.family_defaults;
  cf.write_buffer_size = static_cast<size_t>(options_.write_buffer_mb) << 20;
  cf.max_write_buffer_number = std::max(2, options_.max_write_buffers);
  // Fingerprints are random bytes: compression would cost time for nothing.
  cf.compression = rocksdb::kNoCompression;
  cf.target_file_size_base = 64 << 20;
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  // The graphs family held generated graphs before the spool
  // (graph_spool.h): opened so that databases written then still open;
  // nothing is written to it.
  database.families[kGraphsFamily] = cf;

  auto opened = storage::Database::Open(database);
  if (!opened.ok()) return opened.status();
  database_ = std::move(*opened);
  db_ = database_->db();
  const std::pair<std::string, rocksdb::ColumnFamilyHandle**> families[] = {
      {rocksdb::kDefaultColumnFamilyName, &meta_}, {kClassesFamily, &classes_}};
  for (const auto& [name, handle] : families) {
    auto family = database_->Family(name);
    if (!family.ok()) return family.status();
    *handle = *family;
  }
  if (absl::Status s = LoadIdentity(); !s.ok()) return s;
  return LoadJobs();
}

absl::Status GraphHashStore::LoadIdentity() {
  const int index = options_.store_index, count = options_.store_count;
  if ((index < 0) != (count < 0) || (count >= 0 && (count < 1 || index >= count))) {
    return absl::InvalidArgumentError(absl::StrCat("store index ", index, " of ", count,
                                                   ": give both, with 0 <= index < count"));
  }
  std::string value;
  rocksdb::Status got = db_->Get(rocksdb::ReadOptions(), meta_, kIdentityKey, &value);
  if (got.ok()) {
    if (!info_.ParseFromString(value)) return absl::DataLossError("the store's identity record is corrupt");
    if (count >= 0 && (info_.store_index() != index || info_.store_count() != count)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "database ", options_.path, " is store ", info_.store_index(), " of ", info_.store_count(),
          ", not store ", index, " of ", count, " as the flags say: start it with its own index and count"));
    }
    return absl::OkStatus();
  }
  if (!got.IsNotFound()) return storage::FromRocks(got, "reading the store's identity");
  info_.set_store_index(count >= 0 ? index : 0);
  info_.set_store_count(count >= 0 ? count : 1);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return storage::FromRocks(db_->Put(wo, meta_, kIdentityKey, info_.SerializeAsString()),
                            "storing the store's identity");
}

GraphHashStore::~GraphHashStore() {
  closing_ = true;
  WaitForFinalization();
}

void GraphHashStore::WaitForFinalization() { finalizers_.JoinAll(); }

absl::Status GraphHashStore::LoadJobs() {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), meta_));
  std::vector<JobState*> to_finalize;
  for (it->Seek("job/"); it->Valid() && it->key().starts_with("job/"); it->Next()) {
    auto state = std::make_unique<JobState>();
    if (!state->job.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError(absl::StrCat("job record ", it->key().ToString(), " is corrupt"));
    }
    const std::string& id = state->job.id();
    std::string number;
    if (!db_->Get(rocksdb::ReadOptions(), meta_, JobNumberKey(id), &number).ok() || number.size() != 4) {
      return absl::DataLossError(absl::StrCat("job ", id, " has no job number"));
    }
    state->number = ReadU32(number);
    next_job_number_ = std::max(next_job_number_, state->number + 1);
    for (int s = 0; s < state->job.num_shards(); ++s) {
      auto shard = std::make_unique<ShardState>();
      std::string value;
      if (db_->Get(rocksdb::ReadOptions(), meta_, ShardKey(id, s), &value).ok()) {
        shard->progress.ParseFromString(value);
      }
      shard->progress.set_shard(s);
      state->shards.push_back(std::move(shard));
    }
    bool all_done = true;
    for (auto& shard : state->shards) all_done = all_done && shard->progress.done();
    if (state->job.state() == JOB_STATE_FINALIZING ||
        (state->job.state() == JOB_STATE_GENERATING && all_done)) {
      to_finalize.push_back(state.get());
    }
    jobs_[id] = std::move(state);
  }
  if (!it->status().ok()) return storage::FromRocks(it->status(), "reading jobs");
  std::lock_guard<std::mutex> lock(jobs_mu_);
  for (JobState* state : to_finalize) StartFinalize(state);
  return absl::OkStatus();
}

Job GraphHashStore::Snapshot(const JobState& state) {
  Job job = state.job;
  for (const auto& shard : state.shards) {
    std::lock_guard<std::mutex> lock(shard->mu);
    *job.add_shards() = shard->progress;
  }
  return job;
}

absl::Status GraphHashStore::PersistJob(const Job& job) {
  Job stored = job;
  stored.clear_shards();
  SetNow(stored.mutable_updated_at());
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_writes;
  return storage::FromRocks(db_->Put(wo, meta_, JobKey(job.id()), stored.SerializeAsString()),
                   absl::StrCat("storing job ", job.id()));
}

absl::StatusOr<GraphHashStore::JobState*> GraphHashStore::FindJob(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(jobs_mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    return absl::NotFoundError(absl::StrCat("no job '", job_id, "' in this store; create it first"));
  }
  return it->second.get();
}

absl::StatusOr<Job> GraphHashStore::CreateJob(const CreateJobRequest& request) {
  std::string id = request.job_id();
  if (id.empty()) id = absl::StrCat("job-", absl::FormatTime("%Y%m%d-%H%M%S", absl::Now(), absl::UTCTimeZone()));
  if (!ValidJobId(id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("job id '", id, "' is not valid: use 1-64 letters, digits, '-', '_' or '.'"));
  }
  if (request.num_shards() < 1 || request.num_shards() > records::kMaxGeneratorShards) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_shards must be in 1..", records::kMaxGeneratorShards, ", got ", request.num_shards()));
  }
  auto spec = records::SpecFromProto(request.spec());
  if (!spec.ok()) return absl::InvalidArgumentError(absl::StrCat("spec: ", spec.status().message()));
  if (request.spec().max_ops() < 1 || request.spec().max_ops() > records::kMaxOpsLimit) {
    return absl::InvalidArgumentError(absl::StrCat("spec max_ops must be in 1..", records::kMaxOpsLimit));
  }

  std::lock_guard<std::mutex> lock(jobs_mu_);
  auto it = jobs_.find(id);
  if (it != jobs_.end()) {
    JobState& state = *it->second;
    if (state.job.spec().SerializeAsString() != request.spec().SerializeAsString() ||
        state.job.num_shards() != request.num_shards()) {
      return absl::AlreadyExistsError(absl::StrCat(
          "job '", id, "' exists with a different spec or shard count (", state.job.num_shards(),
          " shards); pick another --job id"));
    }
    if (state.job.state() == JOB_STATE_FAILED || state.job.state() == JOB_STATE_CANCELLED) {
      // Resuming a stopped job: shards continue from their cursors.
      state.job.set_state(JOB_STATE_GENERATING);
      state.job.clear_error();
      {
        std::lock_guard<std::mutex> spool_lock(state.spool_mu);
        state.spool_sealed = false;
      }
      for (auto& shard : state.shards) {
        std::lock_guard<std::mutex> shard_lock(shard->mu);
        shard->progress.clear_error();
      }
      if (absl::Status s = PersistJob(state.job); !s.ok()) return s;
    }
    return Snapshot(state);
  }

  auto state = std::make_unique<JobState>();
  state->number = next_job_number_++;
  Job& job = state->job;
  job.set_id(id);
  job.set_state(JOB_STATE_GENERATING);
  *job.mutable_spec() = request.spec();
  job.set_num_shards(request.num_shards());
  job.set_max_ops(request.spec().max_ops());
  SetNow(job.mutable_created_at());
  *job.mutable_updated_at() = job.created_at();

  rocksdb::WriteBatch batch;
  batch.Put(meta_, JobKey(id), job.SerializeAsString());
  batch.Put(meta_, JobNumberKey(id), U32(state->number));
  for (int s = 0; s < request.num_shards(); ++s) {
    auto shard = std::make_unique<ShardState>();
    shard->progress.set_shard(s);
    batch.Put(meta_, ShardKey(id, s), shard->progress.SerializeAsString());
    state->shards.push_back(std::move(shard));
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;  // rare and small: always durable
  if (absl::Status s = storage::FromRocks(db_->Write(wo, &batch), "creating job"); !s.ok()) return s;
  Job snapshot = Snapshot(*state);
  jobs_[id] = std::move(state);
  return snapshot;
}

absl::StatusOr<Job> GraphHashStore::GetJob(const std::string& job_id) {
  auto state = FindJob(job_id);
  if (!state.ok()) return state.status();
  std::lock_guard<std::mutex> lock(jobs_mu_);
  return Snapshot(**state);
}

absl::StatusOr<Job> GraphHashStore::CancelJob(const std::string& job_id) {
  auto found = FindJob(job_id);
  if (!found.ok()) return found.status();
  JobState& state = **found;
  std::lock_guard<std::mutex> lock(jobs_mu_);
  if (state.job.state() == JOB_STATE_CANCELLED) return Snapshot(state);
  if (state.job.state() != JOB_STATE_GENERATING) {
    return absl::FailedPreconditionError(absl::StrCat("job '", job_id, "' is ", JobState_Name(state.job.state()),
                                                      "; only a generating job can be cancelled"));
  }
  state.job.set_state(JOB_STATE_CANCELLED);
  if (absl::Status s = PersistJob(state.job); !s.ok()) return s;
  return Snapshot(state);
}

absl::StatusOr<ListJobsResponse> GraphHashStore::ListJobs(const ListJobsRequest& request) {
  int page = request.page_size() <= 0 ? kDefaultPageSize : std::min(request.page_size(), kMaxPageSize);
  ListJobsResponse response;
  std::lock_guard<std::mutex> lock(jobs_mu_);
  for (auto it = jobs_.upper_bound(request.page_token()); it != jobs_.end(); ++it) {
    if (response.jobs_size() == page) {
      response.set_next_page_token(response.jobs(page - 1).id());
      break;
    }
    *response.add_jobs() = Snapshot(*it->second);
  }
  return response;
}

absl::StatusOr<BatchResult> GraphHashStore::PutBatch(const GraphBatch& batch) {
  auto found = FindJob(batch.job_id());
  if (!found.ok()) return found.status();
  JobState* state = *found;
  if (batch.shard() < 0 || batch.shard() >= static_cast<int>(state->shards.size())) {
    return absl::InvalidArgumentError(absl::StrCat("job '", batch.job_id(), "' has ", state->shards.size(),
                                                   " shards; batch names shard ", batch.shard()));
  }
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    if (state->job.state() != JOB_STATE_GENERATING) {
      return absl::FailedPreconditionError(absl::StrCat("job '", batch.job_id(), "' is ",
                                                        JobState_Name(state->job.state()),
                                                        ", not accepting graphs"));
    }
  }
  if (absl::Status s = records::CheckBatchRouting(info_, batch.store_index(), batch.store_count()); !s.ok()) {
    return s;
  }
  if (batch.records_size() > 0) {
    return absl::InvalidArgumentError("send records in GraphBatch.packed; the records field is not accepted");
  }
  int64_t records = 0;
  // Parsed whole first: nothing is stored unless every record parses.
  absl::Status parsed = records::ForEachPackedRecord(batch.packed(), [&](std::string_view, std::string_view) {
    ++records;
  });
  if (!parsed.ok()) return parsed;

  ShardState& shard = *state->shards[batch.shard()];
  std::lock_guard<std::mutex> lock(shard.mu);
  BatchResult result;
  if (batch.sequence() > 0 && batch.sequence() <= shard.progress.acked_sequence()) {
    result.duplicate = true;
    result.acked_sequence = shard.progress.acked_sequence();
    return result;
  }
  ShardProgress updated = shard.progress;
  updated.set_acked_sequence(std::max(updated.acked_sequence(), batch.sequence()));
  updated.set_resume_cursor(std::max(updated.resume_cursor(), batch.resume_cursor()));
  updated.set_graphs_stored(updated.graphs_stored() + records);
  // The graphs go to the spool's files, then their lengths and the shard's
  // cursor to the log together: a crash between the two leaves graphs past
  // the logged lengths, which the next open cuts off.
  std::lock_guard<std::mutex> spool_lock(state->spool_mu);
  if (state->spool_sealed) {
    return absl::FailedPreconditionError(
        absl::StrCat("job '", batch.job_id(), "' is finalizing, not accepting graphs"));
  }
  auto spool = SpoolOf(*state);
  if (!spool.ok()) return spool.status();
  if (absl::Status s = (*spool)->Append(batch.packed()); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("storing a batch: ", s.message()));
  }
  rocksdb::WriteBatch wb;
  wb.Put(meta_, ShardKey(batch.job_id(), batch.shard()), updated.SerializeAsString());
  wb.Put(meta_, SpoolKey(batch.job_id()), GraphSpool::EncodeLengths((*spool)->lengths()));
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_writes;
  if (options_.sync_writes) {
    if (absl::Status s = (*spool)->Sync(); !s.ok()) return s;
  }
  if (absl::Status s = storage::FromRocks(db_->Write(wo, &wb), "storing a batch"); !s.ok()) {
    // Unlogged: the next open would cut the files back; so does this one.
    state->spool.reset();
    return s;
  }
  shard.progress = updated;
  result.records = records;
  result.acked_sequence = updated.acked_sequence();
  return result;
}

std::string GraphHashStore::SpoolDir(uint32_t number) const {
  return absl::StrFormat("%s/graph_spool/%08x", options_.path, number);
}

absl::StatusOr<GraphSpool*> GraphHashStore::SpoolOf(JobState& state) {
  if (state.spool != nullptr) return state.spool.get();
  GraphSpool::Lengths committed{};
  std::string value;
  rocksdb::Status got = db_->Get(rocksdb::ReadOptions(), meta_, SpoolKey(state.job.id()), &value);
  if (got.ok()) {
    auto decoded = GraphSpool::DecodeLengths(value);
    if (!decoded.ok()) return decoded.status();
    committed = *decoded;
  } else if (!got.IsNotFound()) {
    return storage::FromRocks(got, "reading a job's graph lengths");
  }
  auto opened = GraphSpool::Open(SpoolDir(state.number), committed);
  if (!opened.ok()) {
    return absl::Status(opened.status().code(),
                        absl::StrCat("job ", state.job.id(), "'s graphs: ", opened.status().message()));
  }
  state.spool = *std::move(opened);
  return state.spool.get();
}

absl::StatusOr<ProgressAck> GraphHashStore::ReportProgress(const ProgressReport& report) {
  auto found = FindJob(report.job_id());
  if (!found.ok()) return found.status();
  JobState* state = *found;
  if (report.shard() < 0 || report.shard() >= static_cast<int>(state->shards.size())) {
    return absl::InvalidArgumentError(absl::StrCat("job '", report.job_id(), "' has no shard ", report.shard()));
  }
  {
    ShardState& shard = *state->shards[report.shard()];
    std::lock_guard<std::mutex> lock(shard.mu);
    ShardProgress updated = shard.progress;
    updated.set_graphs_enumerated(report.graphs_enumerated());
    updated.set_done_fraction(report.done_fraction());
    updated.set_graphs_per_second(report.graphs_per_second());
    updated.set_error(report.error());
    if (report.done()) {
      updated.set_done(true);
      updated.set_done_fraction(1.0);
    }
    rocksdb::WriteOptions wo;
    wo.sync = options_.sync_writes || report.done();
    if (absl::Status s = storage::FromRocks(db_->Put(wo, meta_, ShardKey(report.job_id(), report.shard()),
                                           updated.SerializeAsString()),
                                   "storing progress");
        !s.ok()) {
      return s;
    }
    shard.progress = updated;
  }
  ProgressAck ack;
  std::lock_guard<std::mutex> lock(jobs_mu_);
  if (!report.error().empty() && state->job.state() == JOB_STATE_GENERATING) {
    state->job.set_state(JOB_STATE_FAILED);
    state->job.set_error(absl::StrCat("shard ", report.shard(), ": ", report.error()));
    if (absl::Status s = PersistJob(state->job); !s.ok()) return s;
  }
  if (report.done() && state->job.state() == JOB_STATE_GENERATING) {
    bool all_done = true;
    for (auto& shard : state->shards) {
      std::lock_guard<std::mutex> shard_lock(shard->mu);
      all_done = all_done && shard->progress.done();
    }
    if (all_done) {
      state->job.set_state(JOB_STATE_FINALIZING);
      if (absl::Status s = PersistJob(state->job); !s.ok()) return s;
      StartFinalize(state);
    }
  }
  ack.set_cancel(state->job.state() == JOB_STATE_CANCELLED);
  return ack;
}

absl::StatusOr<ListCandidateClassesResponse> GraphHashStore::ListCandidateClasses(
    const ListCandidateClassesRequest& request) {
  auto found = FindJob(request.job_id());
  if (!found.ok()) return found.status();
  JobState* state = *found;
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    if (state->job.state() == JOB_STATE_GENERATING || state->job.state() == JOB_STATE_FINALIZING) {
      return absl::FailedPreconditionError(absl::StrCat("job '", request.job_id(), "' is still ",
                                                        JobState_Name(state->job.state())));
    }
  }
  std::string after;
  if (!request.page_token().empty()) {
    const std::string& token = request.page_token();
    bool hex = token.size() == 2 * records::kFingerprintBytes &&
               std::all_of(token.begin(), token.end(), [](char c) { return isxdigit(static_cast<unsigned char>(c)); });
    if (!hex) return absl::InvalidArgumentError("page_token is not one this store issued");
    after = absl::HexStringToBytes(token);
  }
  int page = request.page_size() <= 0 ? kDefaultPageSize : std::min(request.page_size(), kMaxPageSize);
  const std::string prefix = U32(state->number);
  ListCandidateClassesResponse response;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), classes_));
  it->Seek(prefix + after);
  if (!after.empty() && it->Valid() && it->key() == rocksdb::Slice(prefix + after)) it->Next();
  for (; it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (response.classes_size() == page) {
      response.set_next_page_token(absl::BytesToHexString(response.classes(page - 1).fingerprint()));
      break;
    }
    if (!response.add_classes()->ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError("a stored candidate class is corrupt");
    }
  }
  if (!it->status().ok()) return storage::FromRocks(it->status(), "listing classes");
  return response;
}

absl::StatusOr<std::string> GraphHashStore::JobPrefix(const std::string& job_id) {
  auto found = FindJob(job_id);
  if (!found.ok()) return found.status();
  return U32((*found)->number);
}

absl::StatusOr<std::string> GraphHashStore::ReadyPrefix(const std::string& job_id) {
  auto found = FindJob(job_id);
  if (!found.ok()) return found.status();
  JobState* state = *found;
  std::lock_guard<std::mutex> lock(jobs_mu_);
  const auto s = state->job.state();
  if (s != JOB_STATE_GENERATED && s != JOB_STATE_VERIFYING && s != JOB_STATE_DONE) {
    return absl::FailedPreconditionError(absl::StrCat("job '", job_id, "' is ", JobState_Name(s),
                                                      "; its candidates are ready once it is GENERATED"));
  }
  return U32(state->number);
}

absl::StatusOr<std::vector<std::string>> GraphHashStore::ClassFingerprints(const std::string& job_id) {
  auto prefix = ReadyPrefix(job_id);
  if (!prefix.ok()) return prefix.status();
  std::vector<std::string> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), classes_));
  for (it->Seek(*prefix); it->Valid() && it->key().starts_with(*prefix); it->Next()) {
    out.push_back(it->key().ToString().substr(prefix->size()));
  }
  if (!it->status().ok()) return storage::FromRocks(it->status(), "listing classes");
  return out;
}

absl::Status GraphHashStore::ForEachClass(
    const std::string& job_id,
    const std::function<absl::Status(const std::string& fingerprint, const CandidateClass&)>& visit) {
  auto prefix = ReadyPrefix(job_id);
  if (!prefix.ok()) return prefix.status();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), classes_));
  CandidateClass c;
  for (it->Seek(*prefix); it->Valid() && it->key().starts_with(*prefix); it->Next()) {
    if (!c.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError("a stored candidate class is corrupt");
    }
    if (absl::Status s = visit(it->key().ToString().substr(prefix->size()), c); !s.ok()) return s;
  }
  return storage::FromRocks(it->status(), "listing classes");
}

absl::StatusOr<CandidateClass> GraphHashStore::GetCandidateClass(const std::string& job_id,
                                                                 const std::string& fingerprint) {
  auto prefix = JobPrefix(job_id);
  if (!prefix.ok()) return prefix.status();
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), classes_, *prefix + fingerprint, &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("job '", job_id, "' has no class ", absl::BytesToHexString(fingerprint)));
  }
  if (!s.ok()) return storage::FromRocks(s, "reading a class");
  CandidateClass c;
  if (!c.ParseFromString(value)) return absl::DataLossError("a stored candidate class is corrupt");
  return c;
}

absl::Status GraphHashStore::UpdateVerification(const std::string& job_id, ::taso::rules_db::JobState new_state,
                                                const Verification& verification) {
  auto found = FindJob(job_id);
  if (!found.ok()) return found.status();
  std::lock_guard<std::mutex> lock(jobs_mu_);
  JobState* state = *found;
  state->job.set_state(new_state);
  *state->job.mutable_verification() = verification;
  return PersistJob(state->job);
}

}  // namespace taso::rules_db
