// The hash store: where generator shards put (fingerprint, graph) records and
// where fingerprint classes become candidate pairs. A job's graphs go to its
// spool's files (graph_spool.h, under <path>/graph_spool/<job number>); the
// rest is RocksDB, with the write-ahead log on: a batch is acknowledged only
// once the spool's lengths are in the log, together with its shard's resume
// cursor, so a crash of the store (kill -9) loses nothing acknowledged, and a
// restarted generator resumes exactly after the last batch the store holds.
// A graph stored twice is one graph: retried batches and re-enumerated
// subtrees are idempotent.
//
// Column families:
//   default  store -> StoreInfo; job/<id> -> Job; shard/<id>/<shard> -> ShardProgress; jobnum/<id>;
//            spool/<id> -> the job's spool lengths
//   graphs   unused (generated graphs before the spool); kept so older databases open
//   classes  <job number:4><fingerprint:16> -> CandidateClass
//   rules, verified: the rule store's (rule_store.h), created by it
//
// When every generator shard of a job has reported done, the store finalizes
// the job in the background: it walks its graphs in fingerprint order, and
// each class of two or more graphs goes through the class checker its binary
// hands it (taso_rules_db: generator/recheck.h: renaming order, star pairs,
// exact int32 and float re-check). Its classes are then served to verifiers,
// and its spool, which nothing reads any more, is deleted (keep_graphs).
// A store shard only sees its slice of fingerprints, so it finalizes that
// slice; `taso generate` adds the shards' figures up.
#ifndef TASO_RULES_DB_HASH_STORE_H_
#define TASO_RULES_DB_HASH_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/background_threads.h"
#include "proto/rules_db.pb.h"
#include "records/class_check.h"
#include "records/packed_records.h"
#include "rules_db/graph_spool.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
}  // namespace rocksdb
namespace taso::storage {
class Database;
}  // namespace taso::storage

namespace taso::rules_db {

struct HashStoreOptions {
  std::string path;
  int64_t block_cache_mb = 64;
  int64_t write_buffer_mb = 64;   // per memtable (the spool needs none)
  int max_write_buffers = 3;      // memtables per column family
  bool sync_writes = false;       // fsync the spool and the log per batch (power loss, not just crashes)
  int finalize_threads = 2;
  // Keep a finalized job's graphs. Nothing reads them once its classes are
  // stored, so by default they are dropped: most of the store's disk, and a
  // write-ahead log the next open would replay for seconds.
  bool keep_graphs = false;
  // Checks each class of two or more graphs when a job is finalized
  // (taso_rules_db hands in the generator's re-check). Unset: the store
  // cannot finalize jobs.
  records::ClassCheckerFactory class_checker;
  // This store's place among the store shards (records/store_shards.h).
  // Persisted on first open; a later open that names another place fails.
  // -1: as persisted, or store 0 of 1 for a new database.
  int store_index = -1;
  int store_count = -1;
};

struct BatchResult {
  bool duplicate = false;
  int64_t records = 0;
  int64_t acked_sequence = 0;
};

class GraphHashStore {
 public:
  static absl::StatusOr<std::unique_ptr<GraphHashStore>> Open(const HashStoreOptions& options);
  ~GraphHashStore();

  // This store's index and the store count.
  const StoreInfo& info() const { return info_; }

  absl::StatusOr<Job> CreateJob(const CreateJobRequest& request);
  absl::StatusOr<Job> GetJob(const std::string& job_id);
  absl::StatusOr<Job> CancelJob(const std::string& job_id);
  absl::StatusOr<ListJobsResponse> ListJobs(const ListJobsRequest& request);

  // Stores one batch and its cursor atomically.
  absl::StatusOr<BatchResult> PutBatch(const GraphBatch& batch);
  // Records progress; a shard's `done` may start finalization.
  absl::StatusOr<ProgressAck> ReportProgress(const ProgressReport& report);
  absl::StatusOr<ListCandidateClassesResponse> ListCandidateClasses(
      const ListCandidateClassesRequest& request);

  // Blocks until background finalizations have finished (tests, shutdown).
  void WaitForFinalization();

  // The database, which the rule store (rule_store.h) shares for its own
  // column families.
  storage::Database* database() const { return database_.get(); }
  // The key prefix of a job's classes and verified markers.
  absl::StatusOr<std::string> JobPrefix(const std::string& job_id);
  // Fingerprints of every candidate class of a finished job, in order.
  absl::StatusOr<std::vector<std::string>> ClassFingerprints(const std::string& job_id);
  // Every class of such a job, parsed, in fingerprint order.
  absl::Status ForEachClass(const std::string& job_id,
                            const std::function<absl::Status(const std::string& fingerprint,
                                                              const CandidateClass&)>& visit);
  absl::StatusOr<CandidateClass> GetCandidateClass(const std::string& job_id, const std::string& fingerprint);
  // Moves a GENERATED job to VERIFYING or DONE and records its verification.
  absl::Status UpdateVerification(const std::string& job_id, ::taso::rules_db::JobState state,
                                  const Verification& verification);

 private:
  struct ShardState {
    std::mutex mu;
    ShardProgress progress;
  };
  struct JobState {
    Job job;  // without shards
    uint32_t number = 0;
    std::vector<std::unique_ptr<ShardState>> shards;
    // Lock order: jobs_mu_, then a shard's mu, then spool_mu.
    std::mutex spool_mu;
    std::unique_ptr<GraphSpool> spool;  // opened on first use (SpoolOf)
    bool spool_sealed = false;          // by Finalize: no more batches
  };

  struct FinalizeTally;
  struct PendingClass;  // a class between the scan and its check

  explicit GraphHashStore(const HashStoreOptions& options);
  absl::Status Init();
  absl::Status LoadJobs();
  absl::Status LoadIdentity();
  absl::StatusOr<JobState*> FindJob(const std::string& job_id);
  Job Snapshot(const JobState& state);
  absl::Status PersistJob(const Job& job);
  void StartFinalize(JobState* state);
  // Finalizing a job: scan its graphs into classes and check them, a
  // fingerprint slice per thread; store them in order; record the figures.
  absl::Status Finalize(JobState* state);
  // Passes each class of two or more graphs of a spool bucket's records to
  // `on_class`, in fingerprint order; counts its graphs and fingerprints.
  absl::Status ScanClasses(std::string_view bucket, FinalizeTally& counts,
                           const std::function<absl::Status(PendingClass)>& on_class);
  absl::Status StoreClasses(const std::string& job_id, const std::string& prefix,
                            const std::vector<PendingClass>& checked, FinalizeTally& tally);
  absl::Status RecordFinalized(JobState* state, const FinalizeTally& tally, absl::Duration took);
  // Points the pairs of forms that are instances of a more general form at
  // that form's rule (rules_db/form_instances.h), once every class is stored.
  absl::Status MarkInstances(const std::string& prefix, FinalizeTally& tally);
  // Then points the first pair of each form that follows from a smaller
  // form's leased rule (PairCheck.smaller_rule_keys) at that rule.
  absl::Status MarkFromSmallerRules(const std::string& prefix, FinalizeTally& tally);
  // Edits pairs of stored classes: class fingerprint -> (pair index, the
  // rule id `edit` is given for it).
  using PairRewrites = std::map<std::string, std::vector<std::pair<int, std::string>>>;
  absl::Status RewritePairs(const std::string& prefix, const PairRewrites& rewrites, const char* what,
                            const std::function<void(CandidatePair&, const std::string&)>& edit);
  // The key prefix of a job whose candidates are ready (GENERATED or later).
  absl::StatusOr<std::string> ReadyPrefix(const std::string& job_id);
  // Where job `number`'s spool lives.
  std::string SpoolDir(uint32_t number) const;
  // The job's spool, opened (cut to its logged lengths) on first use. Call
  // with state.spool_mu held.
  absl::StatusOr<GraphSpool*> SpoolOf(JobState& state);
  // Deletes a finalized job's spool and flushes every family, which lets the
  // log go (keep_graphs keeps the files).
  absl::Status DropGraphs(JobState& state);

  HashStoreOptions options_;
  std::unique_ptr<storage::Database> database_;
  rocksdb::DB* db_ = nullptr;  // database_'s
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
  rocksdb::ColumnFamilyHandle* classes_ = nullptr;

  StoreInfo info_;
  std::mutex jobs_mu_;  // guards jobs_ and job state transitions
  std::map<std::string, std::unique_ptr<JobState>> jobs_;
  uint32_t next_job_number_ = 1;
  BackgroundThreads finalizers_;
  std::atomic<bool> closing_{false};
};

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_HASH_STORE_H_
