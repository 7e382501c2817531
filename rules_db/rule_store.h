// The rule database: verified rules keyed by a stable id, and the work queue
// verifiers lease candidate classes from. It shares the hash store's RocksDB
// (storage/database.h), with column families of its own: `rules` (rule id ->
// taso.rules.Rule), `verified` (<job number:4><fingerprint> -> "" once a
// class has verdicts) and `prune` (job id -> a pruner's checkpoint, `taso
// rules prune`).
//
// Leases live in memory (lease_queue.h, one queue per job, guarded by the
// store's mutex): a class is pending until a verifier reports it complete,
// and a lease that expires (its worker died or stalled) puts the class back
// in the queue. The store reads the classes it leases, and proves again what
// a report claims, without holding that mutex. A class's verdicts and its
// `verified` marker are written in one batch, so a class is either done with
// all its rules stored or still pending; a store restart only forgets leases, never verdicts.
// Rule ids derive from the pair's canonical form, so a class verified twice
// (a lease that expired while its worker was still busy) writes the same
// rules again rather than new ones.
//
// When the last class of a job is verified, the store finishes the job on a
// thread of its own, so the report that completed it is answered at once:
// it derives the verdicts of the pairs not leased, prunes the job's proved
// rules with the pruner its binary hands it (taso_rules_db: the verifier's,
// verifier/pruning.h), records the reduction table in the job, and the job
// is DONE. Until then the job is VERIFYING, its Verification naming the
// stage (FinishStage); a failure is recorded there too, and a restarted
// store finishes the job again. A job above prune_max_rules, or spread over several
// store shards, is pruned as a whole by `taso rules prune` instead.
//
// Trust: a rule is PROVED only by the store's own proof. A verifier's verdict
// counts only for a pair of a class it holds a lease on, and a PROVED one is
// proved again by the store's checker (handed to it by its binary), as is a
// rule a client sends through PutRules as proved: the stored status, proof
// and side conditions are that check's. A report whose proved rule the check
// refutes, or whose conditions differ from the ones the check derives, is
// refused whole. PRUNED is the store's own status, never a client's.
#ifndef TASO_RULES_DB_RULE_STORE_H_
#define TASO_RULES_DB_RULE_STORE_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/background_threads.h"
#include "proto/rules.pb.h"
#include "proto/rules_db.pb.h"
#include "records/reduction_table.h"
#include "records/renaming.h"
#include "records/rule_id.h"
#include "records/spec.h"
#include "rules_db/hash_store.h"
#include "rules_db/lease_queue.h"
#include "rules_db/rule_filter.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class WriteBatch;
}  // namespace rocksdb

namespace taso::rules_db {

// Proves a rule again, in the store, and sets its status, status_detail,
// proof and conditions from that check alone. A rule claimed PROVED arrives
// with the claim's proof and conditions, which the checker may use to find
// its proof faster (verifier/precheck.h, VerifyClaim) but never keeps. An error means the rule could not be checked
// at all (InvalidArgument: a malformed graph). Called from several RPC
// threads at once.
using RuleChecker = std::function<absl::Status(rules::Rule& rule)>;

// What pruning a job's proved rules removed, as the job's Verification
// reports it.
using PruneCounts = records::ReductionTable;// Marks the redundant PROVED rules among a job's rules as PRUNED (with the
// reason in status_detail), leaving every other rule alone.
using RulePruner = std::function<PruneCounts(std::vector<rules::Rule>& rules)>;

// Where proved rules match a graph (MatchRules): the optimizer's matcher,
// handed in by taso_rules_db (optimizer/rewrite/rule_matches.h). Fills
// the matches and the unusable-rule counts of the response.
using RuleGraphMatcher = std::function<absl::StatusOr<MatchRulesResponse>(
    const ir::Graph& graph, const std::vector<rules::Rule>& rules, int max_sites)>;

struct RuleStoreOptions {
  int64_t default_lease_ms = 60'000;
  int64_t max_lease_ms = 3'600'000;
  // Pruning holds a job's rules in memory (about 10 KB each with their
  // decoded graphs); above this many it is skipped and the job says so.
  int64_t prune_max_rules = 250'000;
  // Proves again the rules PutRules receives as proved and the PROVED
  // verdicts verifiers report. Unset: both are refused, since nothing here
  // could tell a real proof from a claim.
  RuleChecker checker;
  // Derives the verdict of each candidate pair whose rule has the form of an
  // earlier pair's (CandidatePair.renaming_of) from that rule's, once the
  // job's classes are verified; those pairs are not leased. A pair it derives
  // nothing for is proved by the checker. Unset: every pair is leased.
  records::RenamingProver renaming_prover;
  // Derives, with renaming_prover, the verdicts of the pairs that follow from
  // a smaller rule of the job (DERIVATION_FROM_SMALLER_RULE). False: they are
  // leased and proved like any first pair of its form.
  bool derive_from_smaller = true;
  // A class whose lease expired this many times without a report (each
  // verifier holding it died, stalled in a proof or was stopped) is given up:
  // the store stores its unreported pairs TIMEOUT (rejected ones
  // REJECTED_PRECHECK), with the reason, and counts it in
  // Verification.classes_given_up, so one class no verifier gets through
  // does not hold up the job. 0, or no pair_rule to write its rules: every
  // class is leased again after every expiry.
  int max_lease_expiries = 3;
  records::PairRule pair_rule;
  // Prunes each finished job's proved rules. Unset: jobs end unpruned, and
  // say so.
  RulePruner pruner;
  // Serves MatchRules. Unset: MatchRules is UNIMPLEMENTED.
  RuleGraphMatcher matcher;
  // MatchRules is a read-role call: a request asking for more sites per
  // rule, or sending a larger graph, is INVALID_ARGUMENT; one still matching
  // after match_time_limit stops with RESOURCE_EXHAUSTED.
  int max_match_sites = 1000;
  int max_match_graph_nodes = 20000;
  absl::Duration match_time_limit = absl::Seconds(60);
  // BuildOpIndex: rules indexed per committed chunk.
  int op_index_chunk = 10000;
  // Threads deriving renamings' verdicts at a job's end (the checker they
  // call must then be safe to call from as many).
  int finish_threads = 2;
  // Where the store says what no RPC answers (a job that failed to finish).
  std::function<void(const std::string&)> log;
};

// A rule's id (records/rule_id.h), as the store files it.
using records::RuleId;

// A proved rule's status: PROVED, or PRUNED (proved, and implied by another).
inline bool IsProvedStatus(rules::RuleStatus status) {
  return status == rules::RULE_STATUS_PROVED || status == rules::RULE_STATUS_PRUNED;
}

class RuleStore {
 public:
  RuleStore(GraphHashStore* hash_store, const RuleStoreOptions& options = {});
  // Stops finishing jobs (between classes or rules; a restart finishes them) and waits.
  ~RuleStore();
  RuleStore(const RuleStore&) = delete;
  RuleStore& operator=(const RuleStore&) = delete;

  // Waits until every job whose last verdict has arrived is finished (DONE,
  // or its failure recorded).
  void WaitForFinishes();
  // Starts finishing the jobs an earlier run of the store left verified but
  // not DONE (stopped, or failed, while finishing): at start-up, before
  // serving, so that no client reads an earlier attempt's failure as this
  // run's, and without waiting for a verifier's lease to load the job.
  absl::Status ResumeFinishing();

  absl::StatusOr<LeaseCandidatesResponse> LeaseCandidates(const LeaseCandidatesRequest& request);
  absl::StatusOr<ReportVerdictsResponse> ReportVerdicts(const ReportVerdictsRequest& request);
  absl::StatusOr<ReportClassesResponse> ReportClasses(const ReportClassesRequest& request);
  absl::StatusOr<ListRulesResponse> ListRules(const ListRulesRequest& request);
  absl::StatusOr<rules::Rule> GetRule(const std::string& id);
  absl::StatusOr<PutRulesResponse> PutRules(const PutRulesRequest& request);
  absl::StatusOr<StatsResponse> Stats(const StatsRequest& request);
  absl::StatusOr<MatchRulesResponse> MatchRules(const MatchRulesRequest& request);

  // Indexes the rules stored before the operator index existed (op_index.h),
  // in chunks, each committed with its progress, so it resumes after a
  // restart; returns once the index is built, or after the chunk during
  // which `stop` was set. Until it is built queries scan every rule.
  // taso_rules_db runs it in the background.
  absl::Status BuildOpIndex(const std::atomic<bool>* stop = nullptr);

  // Pruning a finished job from outside (`taso rules prune`, which prunes
  // the union of the store shards a batch at a time; its pruner is the
  // verifier's, which this store does not include). The process doing it
  // opens the database itself, so it is as trusted as the store.
  //
  // Every rule of `job_id`, in id order.
  absl::Status ForEachJobRule(const std::string& job_id,
                              const std::function<absl::Status(const rules::Rule&)>& visit);
  // The rules with these ids, in the same order (NotFound naming a missing one).
  absl::Status GetRules(const std::vector<std::string>& ids, std::vector<rules::Rule>& out);
  // Stores new pruning verdicts for rules of `job_id` together with the
  // pruner's checkpoint, in one write. Only PROVED and PRUNED are exchanged:
  // a rule stored with another status, or given one, is refused.
  absl::Status StorePruning(const std::string& job_id, const std::vector<rules::Rule>& changed,
                            const std::string& checkpoint);
  // The checkpoint StorePruning last stored for `job_id`; empty if none.
  absl::StatusOr<std::string> PruneCheckpoint(const std::string& job_id);
  // Records the reduction table of a pruning over `store_shards` shards in
  // the job (a DONE job: pruning is the end of verification).
  absl::Status RecordPruning(const std::string& job_id, const PruneCounts& counts, int store_shards);

  // The same over gRPC, for a pruner that reaches the stores as a client
  // (`taso rules prune --store`): rules by id (at most 1000 a call); the
  // checkpoint; verdicts by id, status and detail only, for a DONE job (at
  // most 100,000 a call); the reduction table, whose shard count must be
  // this store's. The RPCs that write are the admin role's (net/roles.cc).
  absl::StatusOr<GetRulesResponse> GetRules(const GetRulesRequest& request);
  absl::StatusOr<GetPruneCheckpointResponse> GetPruneCheckpoint(const GetPruneCheckpointRequest& request);
  absl::StatusOr<StorePruningResponse> StorePruning(const StorePruningRequest& request);
  absl::StatusOr<Job> RecordPruning(const RecordPruningRequest& request);

 private:
  // A GENERATED or VERIFYING job this store serves leases of: what its
  // verdicts are stored under and decoded with, its lease queue, and how its
  // progress was last reported.
  struct JobQueue {
    std::string prefix;  // the job's key prefix
    int max_ops = 0;
    records::Spec spec;  // decodes the job's classes
    LeaseQueue leases;
    absl::Time started = absl::InfinitePast();
    bool verifying = false;                      // the job's state says so
    int64_t given_up = 0;                        // classes ended by GiveUpClasses
    absl::Time persisted = absl::InfinitePast();  // progress last written
  };

  // Loads (once) the queue of a GENERATED or VERIFYING job. Called with mu_ held.
  absl::StatusOr<JobQueue*> Queue(const std::string& job_id);
  absl::StatusOr<std::string> PickJob(const std::string& job_id);
  // FailedPrecondition unless `job_id` is DONE (pruning is the end of verification).
  absl::Status RequireDone(const std::string& job_id);
  // Verification figures of a queue so far. Called with mu_ held.
  static Verification Progress(const JobQueue& queue);
  // Runs FinishJob on a thread of its own; a failure is recorded in the job.
  // Called with mu_ held, once per job: when its last class is verified (or
  // when a restarted store loads a job left so).
  void StartFinish(const std::string& job_id, const JobQueue& queue, Verification v);
  // Derives the renamings' verdicts, prunes and marks the job DONE, from
  // `v` (Progress at the last verdict). Reads only what in `queue` does not
  // change once every class is verified, so it runs without mu_. Cancelled
  // when the store closes.
  absl::Status FinishJob(const std::string& job_id, const JobQueue& queue, Verification v);
  // The job's Verification as `v`, at `stage` of finishing.
  absl::Status RecordFinishStage(const std::string& job_id, Verification v, FinishStage stage,
                                 const std::string& error = "");
  // The verdicts of the pairs not leased (RuleStoreOptions::renaming_prover),
  // stored before the job is pruned; counted in `v`.
  absl::Status ProveRenamings(const std::string& job_id, const JobQueue& queue, Verification& v);
  absl::Status PersistProgress(const std::string& job_id, JobQueue& queue);
  // Whether a lease covers `pair`: not when its verdict is derived from an
  // earlier form's at the end (renaming_prover, CandidatePair.renaming_of,
  // derive_from_smaller). A given-up class gets verdicts for the same pairs.
  bool Leased(const CandidatePair& pair) const {
    return !options_.renaming_prover || pair.renaming_of().empty() ||
           (!options_.derive_from_smaller && pair.derivation() == DERIVATION_FROM_SMALLER_RULE);
  }
  // Stores the verdicts of classes the lease queue gave up (max_lease_expiries)
  // and their verified markers, one write a class; `done` counts those
  // written. Called without mu_.
  absl::Status GiveUpClasses(const std::string& job_id, const JobQueue& queue,
                             const std::vector<std::pair<std::string, int>>& classes, size_t& done);
  // A verdict reported PROVED, proved again by the checker: `rule` becomes
  // the check's (its TIMEOUT or UNKNOWN included); a refutation or other
  // side conditions are InvalidArgument. Called without mu_.
  absl::Status ReproveVerdict(const PairVerdict& verdict, const std::string& worker_id, rules::Rule& rule) const;
  // A rule PutRules received: its id checked, and when claimed proved, proved
  // again by the checker. `index` names it in errors.
  absl::Status AdmitRule(int index, rules::Rule& rule) const;
  // Visits stored rules in id order, starting after `after` (all when empty),
  // until `visit` returns false.
  absl::Status ForEachRule(const std::function<bool(const rules::Rule&)>& visit, const std::string& after = "");
  // Visits the stored rules whose kinds `accept` (RuleFilter::KindsPass and
  // the like), in id order after `after`: through the operator index's lists
  // of `index_kinds` when it is built and they are given (every such rule
  // uses one of them), else by a scan. Counts the rules read (decoded) in
  // `read`; says whether the index was used.
  absl::StatusOr<bool> ForEachCandidate(uint64_t index_kinds, const std::function<bool(const RuleKinds&)>& accept,
                                        const std::string& after,
                                        const std::function<bool(const rules::Rule&)>& visit, int64_t& read);
  // This store's column families, from the shared database (created on
  // first use).
  struct Families {
    rocksdb::DB* db;
    rocksdb::ColumnFamilyHandle* rules;
    rocksdb::ColumnFamilyHandle* verified;
    rocksdb::ColumnFamilyHandle* prune;  // job id -> the pruner's checkpoint
    rocksdb::ColumnFamilyHandle* by_op;  // OpIndex
  };
  absl::StatusOr<Families> OwnFamilies();
  // Puts a rule (with its id) and its operator index postings into `batch`.
  static void PutRule(const Families& f, const rules::Rule& rule, rocksdb::WriteBatch& batch);
  // A stored rule whose status alone changed (PROVED <-> PRUNED): its
  // operator index postings, which depend on its graphs only, stay.
  static void PutPruningVerdict(const Families& f, const rules::Rule& rule, rocksdb::WriteBatch& batch);
  // ProveRenamings for one pair of class `fingerprint`, `two` (the pair's two
  // members and the pair itself, rules_db/rule_store_finish.cc), given the
  // rule it derives from (empty if lost) and the prover made for that rule:
  // its rule goes into `batch`.
  absl::Status DerivePair(const Families& f, const std::string& job_id, const JobQueue& queue,
                          const std::string& fingerprint, const CandidateClass& two, const rules::Rule& other,
                          const records::PairProver& prove, absl::Time now, rocksdb::WriteBatch& batch,
                          int64_t& proved_as_renaming, int64_t& proved_alone);
  // Sets what the store owns in a verdict about to be stored: the revision
  // (one past the stored rule's) and the provenance (the first discovery
  // kept; `worker_id` gave the verdict).
  static void StampVerdict(const Families& f, const std::string& job_id, const JobQueue& queue,
                           const std::string& fingerprint, const std::string& worker_id, absl::Time now,
                           rules::Rule& rule);

  // Provenance of a rule the store proved itself, in place of a verifier
  // worker's id.
  static constexpr char kStoreCheckerId[] = "taso_rules_db";
  // How a class with a verified marker ended, as the marker's value says:
  // reported by verifiers (an empty value, as markers always were), or given
  // up (one byte). Part of the on-disk format.
  enum class ClassEnd : char { kReported = 0, kGivenUp = 1 };
  static ClassEnd ClassEndOf(const std::string& marker) {
    return !marker.empty() && marker[0] == static_cast<char>(ClassEnd::kGivenUp) ? ClassEnd::kGivenUp
                                                                                 : ClassEnd::kReported;
  }

  GraphHashStore* hash_store_;
  RuleStoreOptions options_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<JobQueue>> queues_;
  int64_t next_lease_number_ = 1;  // shared by the queues (LeaseQueue)
  std::atomic<bool> op_index_built_{false};  // cached once OpIndex::Built says so
  BackgroundThreads finishers_;  // joined by WaitForFinishes
  std::atomic<bool> closing_{false};
};

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_RULE_STORE_H_
