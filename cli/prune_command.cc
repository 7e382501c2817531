#include "cli/prune_command.h"

#include <sys/resource.h>

#include <chrono>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/remote_prune_source.h"
#include "cli/store_prune_source.h"
#include "cluster/job_states.h"
#include "cluster/store_set.h"
#include "core/json_text.h"
#include "net/grpc_status.h"
#include "net/retry.h"
#include "proto/rules_db.grpc.pb.h"
#include "rules_db/hash_store.h"
#include "rules_db/rule_store.h"
#include "verifier/streaming_pruning.h"

namespace taso::cli {
namespace {

// RocksDB's share of the memory: the pruner reads each rule twice and writes
// some back, so a small cache and memtables do.
constexpr int64_t kBlockCacheMb = 64;
constexpr int64_t kWriteBufferMb = 16;
// Verdicts a store takes in one StorePruning call (rules_db/rule_store_prune.cc).
constexpr int64_t kMaxRemoteBatch = 100'000;

int64_t PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;  // KiB on Linux
}

class PruneCommand {
 public:
  PruneCommand(const PruneCommandOptions& options, std::ostream& out, std::ostream& err)
      : options_(options), out_(out), err_(err) {}

  int Run() {
    if (options_.memory_limit_mb < 64 || options_.batch_rules < 1) {
      return Fail(2, "--memory-limit-mb must be at least 64 and --batch-rules at least 1");
    }
    if (!options_.store.empty()) return RunRemote();
    if (options_.wait) return Fail(2, "--wait is for --store (a pruning Job that waits for verification)");
    if (int code = Open(); code != 0) return code;
    if (int code = PickJob(); code != 0) return code;
    std::vector<rules_db::RuleStore*> shards;
    for (auto& r : rule_stores_) shards.push_back(r.get());
    shard_count_ = static_cast<int>(shards.size());
    StorePruneSource source(shards, job_id_, options_.restart);
    return Prune(source, [&](const rules_db::PruneCounts& counts) -> absl::Status {
      for (size_t i = 0; i < rule_stores_.size(); ++i) {
        absl::Status s = rule_stores_[i]->RecordPruning(job_id_, counts, shard_count_);
        if (!s.ok()) return absl::Status(s.code(), absl::StrCat(dirs_[i], ": ", s.message()));
      }
      return absl::OkStatus();
    });
  }

 private:
  int Fail(int code, const std::string& message) {
    err_ << "taso rules prune: " << message << "\n";
    return code;
  }

  // The streaming pruner over `source`, then `record` the table on every shard.
  int Prune(verifier::PruneSource& source,
            const std::function<absl::Status(const rules_db::PruneCounts&)>& record) {
    verifier::StreamingPruneOptions prune;
    prune.batch_rules = options_.batch_rules;
    prune.memory_limit_mb = options_.memory_limit_mb - PeakRssMb();  // what the stores took already
    absl::Time last = absl::InfinitePast();
    prune.progress = [&](int64_t done, int64_t total) {
      if (absl::Now() - last < absl::Seconds(10) && done < total) return;
      last = absl::Now();
      err_ << absl::StrFormat("taso rules prune: %d of %d rules judged, %.0f s, peak RSS %d MiB\n", done, total,
                              absl::ToDoubleSeconds(absl::Now() - start_), PeakRssMb())
           << std::flush;
    };
    auto result = verifier::PruneStreaming(source, prune);
    if (!result.ok()) {
      return Fail(1, absl::StrCat(result.status().message(), "; rerun the same command to resume"));
    }
    if (absl::Status s = record(result->table); !s.ok()) return Fail(1, std::string(s.message()));
    Print(*result);
    return 0;
  }

  // --store: the shards over gRPC, each in its own store process, serving.
  int RunRemote() {
    if (options_.batch_rules > kMaxRemoteBatch) {
      return Fail(2, absl::StrCat("--batch-rules is at most ", kMaxRemoteBatch,
                                  " with --store (the stores take that many verdicts in one write)"));
    }
    if (options_.wait && options_.job_id.empty()) return Fail(2, "--wait needs --job: the job to wait for");
    auto stores = cluster::StoreSet::Open(options_.store, "", "");
    if (!stores.ok()) return Fail(1, std::string(stores.status().message()));
    shard_count_ = static_cast<int>((*stores)->size());
    if (int code = PickRemoteJob(**stores); code != 0) return code;
    RemotePruneSource source((*stores)->shards(), job_id_, options_.restart);
    return Prune(source, [&](const rules_db::PruneCounts& counts) { return source.RecordPruning(counts); });
  }

  // --job (waited for with --wait), or the one job DONE on store 0; DONE on
  // every shard either way.
  int PickRemoteJob(const cluster::StoreSet& stores) {
    job_id_ = options_.job_id;
    if (job_id_.empty()) {
      auto stub = rules_db::HashStore::NewStub(stores.shards()[0].channel);
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      rules_db::ListJobsRequest request;
      request.set_page_size(1000);
      rules_db::ListJobsResponse jobs;
      absl::Status s = net::FromGrpc(stub->ListJobs(&context, request, &jobs), stores.shards()[0].address);
      if (!s.ok()) return Fail(1, std::string(s.message()));
      if (int code = PickDone(jobs.jobs(), stores.Describe()); code != 0) return code;
    }
    while (true) {
      auto views = cluster::FetchJobViews(stores.shards(), job_id_, absl::Seconds(30));
      if (!views.ok() && !(options_.wait && (absl::IsNotFound(views.status()) || net::IsUnavailable(views.status())))) {
        return Fail(2, std::string(views.status().message()));
      }
      std::string not_done;
      bool failed = false;
      if (views.ok()) {
        for (size_t i = 0; i < views->size(); ++i) {
          const rules_db::JobState state = (*views)[i].state();
          if (state == rules_db::JOB_STATE_DONE) continue;
          failed |= cluster::JobStateRank(state) < cluster::JobStateRank(rules_db::JOB_STATE_GENERATING);
          if (not_done.empty()) {
            not_done = absl::StrCat("job ", job_id_, " is ", rules_db::JobState_Name(state), " on store ",
                                    stores.shards()[i].address);
          }
        }
        if (not_done.empty()) return 0;
      } else {
        not_done = std::string(views.status().message());
      }
      if (!options_.wait || failed) {
        return Fail(2, absl::StrCat(not_done, failed ? "" : ": finish `taso verify` before pruning (or --wait)"));
      }
      err_ << "taso rules prune: waiting: " << not_done << "\n" << std::flush;
      absl::SleepFor(options_.wait_poll);
    }
  }

  // The one DONE job among `jobs`, into job_id_.
  int PickDone(const google::protobuf::RepeatedPtrField<rules_db::Job>& jobs, const std::string& where) {
    std::vector<std::string> done;
    for (const rules_db::Job& job : jobs) {
      if (job.state() == rules_db::JOB_STATE_DONE) done.push_back(job.id());
    }
    if (done.size() != 1) {
      return Fail(2, done.empty() ? absl::StrCat("no verified job in ", where, ": run `taso verify` first")
                                  : absl::StrCat("several verified jobs in ", where, " (", absl::StrJoin(done, ", "),
                                                 "): choose one with --job"));
    }
    job_id_ = done[0];
    return 0;
  }

  // Every store-N under --db, in store-index order.
  int Open() {
    dirs_ = cluster::StoreDirs(options_.db);
    if (dirs_.empty()) {
      return Fail(2, absl::StrCat("no database at ", options_.db, "/store-0: run `taso generate` and `taso verify` first"));
    }
    std::set<int> indices;
    for (const std::string& dir : dirs_) {
      rules_db::HashStoreOptions o;
      o.path = dir;
      o.block_cache_mb = kBlockCacheMb;
      o.write_buffer_mb = kWriteBufferMb;
      o.max_write_buffers = 2;
      auto store = rules_db::GraphHashStore::Open(o);
      if (!store.ok()) {
        return Fail(1, absl::StrCat(store.status().message(),
                                    " (if a taso_rules_db serves it, stop it: the pruner opens the database itself)"));
      }
      const rules_db::StoreInfo& info = (*store)->info();
      if (info.store_count() != static_cast<int>(dirs_.size()) || !indices.insert(info.store_index()).second) {
        return Fail(2, absl::StrCat(dir, " is store ", info.store_index(), " of ", info.store_count(), ", but ",
                                    options_.db, " holds ", dirs_.size(),
                                    " store directories: every shard of the job must be here once"));
      }
      rule_stores_.push_back(std::make_unique<rules_db::RuleStore>(store->get()));
      hash_stores_.push_back(std::move(*store));
    }
    return 0;
  }

  // --job, or the one job DONE on store 0; DONE on every shard either way.
  int PickJob() {
    job_id_ = options_.job_id;
    if (job_id_.empty()) {
      rules_db::ListJobsRequest request;
      request.set_page_size(1000);
      auto jobs = hash_stores_[0]->ListJobs(request);
      if (!jobs.ok()) return Fail(1, std::string(jobs.status().message()));
      if (int code = PickDone(jobs->jobs(), options_.db); code != 0) return code;
    }
    for (size_t i = 0; i < hash_stores_.size(); ++i) {
      auto job = hash_stores_[i]->GetJob(job_id_);
      if (!job.ok()) return Fail(2, absl::StrCat(dirs_[i], ": ", job.status().message()));
      if (job->state() != rules_db::JOB_STATE_DONE) {
        return Fail(2, absl::StrCat("job ", job_id_, " is ", rules_db::JobState_Name(job->state()), " in ", dirs_[i],
                                    ": finish `taso verify` before pruning"));
      }
    }
    return 0;
  }

  void Print(const verifier::StreamingPruneResult& r) {
    const verifier::ReductionTable& t = r.table;
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start_);
    if (options_.json) {
      const Json summary = {{"job", job_id_},
                            {"store_shards", static_cast<int64_t>(shard_count_)},
                            {"proved", t.proved},
                            {"after_renaming", t.after_renaming},
                            {"after_common_subgraph", t.after_common_subgraph},
                            {"pruned_renaming", t.pruned_renaming},
                            {"pruned_common_subgraph", t.pruned_subgraph},
                            {"pruned_common_supergraph", t.pruned_supergraph},
                            {"resumed_at", r.resumed_at},
                            {"rules_written", r.rules_written},
                            {"state_mib", r.state_bytes >> 20},
                            {"peak_rss_mib", PeakRssMb()},
                            {"wall_seconds", RoundTo(seconds, 3)}};
      out_ << JsonLine(summary) << "\n";
      return;
    }
    out_ << absl::StrFormat(
        "job %s pruned over %d store shard%s as one set\n"
        "reduction (TASO's Table 3):\n"
        "  proved rules            %10d\n"
        "  after renaming          %10d   (-%d)\n"
        "  after common subgraph   %10d   (-%d subgraph, -%d supergraph)\n"
        "  wall time               %10.1f s%s\n"
        "  peak RSS                %10d MiB   (pruner state %d MiB)\n"
        "  statuses written        %10d\n",
        job_id_, shard_count_, shard_count_ == 1 ? "" : "s", t.proved, t.after_renaming,
        t.pruned_renaming, t.after_common_subgraph, t.pruned_subgraph, t.pruned_supergraph, seconds,
        r.resumed_at > 0 ? absl::StrCat("   (resumed after ", r.resumed_at, " rules)") : "", PeakRssMb(),
        r.state_bytes >> 20, r.rules_written);
  }

  const PruneCommandOptions& options_;
  std::ostream& out_;
  std::ostream& err_;
  const absl::Time start_ = absl::Now();
  std::vector<std::string> dirs_;
  std::vector<std::unique_ptr<rules_db::GraphHashStore>> hash_stores_;
  std::vector<std::unique_ptr<rules_db::RuleStore>> rule_stores_;  // declared after: destroyed first
  std::string job_id_;
  int shard_count_ = 0;
};

}  // namespace

int RunRulesPrune(const PruneCommandOptions& options, std::ostream& out, std::ostream& err) {
  PruneCommand command(options, out, err);
  return command.Run();
}

}  // namespace taso::cli
