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

// One pruning of a job (PruneJob). Its steps return a status; a usage
// error (exit 2) says so as it is made, anything else stops with exit 1.
class PruneJobRun {
 public:
  PruneJobRun(const PruneCommandOptions& options, std::ostream& err) : options_(options), err_(err) {}

  PruneJobResult Run() {
    PruneJobResult result;
    result.status = Execute(result.pruned);
    result.exit_code = result.status.ok() ? 0 : exit_code_;
    result.stopped_midway = !result.status.ok() && pruning_;
    result.job_id = job_id_;
    result.store_shards = shard_count_;
    result.seconds = absl::ToDoubleSeconds(absl::Now() - start_);
    return result;
  }

 private:
  absl::Status Execute(verifier::StreamingPruneResult& pruned) {
    if (options_.memory_limit_mb < 64 || options_.batch_rules < 1) {
      return Usage("--memory-limit-mb must be at least 64 and --batch-rules at least 1");
    }
    if (!options_.store.empty()) return RunRemote(pruned);
    if (options_.wait) return Usage("--wait is for --store (a pruning Job that waits for verification)");
    if (absl::Status s = Open(); !s.ok()) return s;
    if (absl::Status s = PickJob(); !s.ok()) return s;
    std::vector<rules_db::RuleStore*> shards;
    for (auto& r : rule_stores_) shards.push_back(r.get());
    shard_count_ = static_cast<int>(shards.size());
    StorePruneSource source(shards, job_id_, options_.restart);
    return Prune(source, pruned, [&](const rules_db::PruneCounts& counts) -> absl::Status {
      for (size_t i = 0; i < rule_stores_.size(); ++i) {
        absl::Status s = rule_stores_[i]->RecordPruning(job_id_, counts, shard_count_);
        if (!s.ok()) return absl::Status(s.code(), absl::StrCat(dirs_[i], ": ", s.message()));
      }
      return absl::OkStatus();
    });
  }

  absl::Status Usage(const std::string& message) {
    exit_code_ = 2;
    return absl::InvalidArgumentError(message);
  }
  absl::Status Usage(const absl::Status& s) { return Usage(std::string(s.message())); }

  // The streaming pruner over `source`, then `record` the table on every shard.
  absl::Status Prune(verifier::PruneSource& source, verifier::StreamingPruneResult& pruned,
                     const std::function<absl::Status(const rules_db::PruneCounts&)>& record) {
    verifier::StreamingPruneOptions prune;
    prune.batch_rules = options_.batch_rules;
    prune.memory_limit_mb = options_.memory_limit_mb - PeakRssMb();  // what the stores took already
    absl::Time last = absl::InfinitePast();
    prune.progress = [&](int64_t done, int64_t total) {
      if (absl::Now() - last < absl::Seconds(10) && done < total) return;
      last = absl::Now();
      err_ << absl::StrFormat("%s: %d of %d rules judged, %.0f s, peak RSS %d MiB\n", options_.progress_label, done,
                              total, absl::ToDoubleSeconds(absl::Now() - start_), PeakRssMb())
           << std::flush;
    };
    pruning_ = true;
    auto result = verifier::PruneStreaming(source, prune);
    if (!result.ok()) return result.status();
    if (absl::Status s = record(result->table); !s.ok()) return s;
    pruned = *std::move(result);
    return absl::OkStatus();
  }

  // --store: the shards over gRPC, each in its own store process, serving.
  absl::Status RunRemote(verifier::StreamingPruneResult& pruned) {
    if (options_.batch_rules > kMaxRemoteBatch) {
      return Usage(absl::StrCat("--batch-rules is at most ", kMaxRemoteBatch,
                                " with --store (the stores take that many verdicts in one write)"));
    }
    if (options_.wait && options_.job_id.empty()) return Usage("--wait needs --job: the job to wait for");
    auto stores = cluster::StoreSet::Open(options_.store, "", "");
    if (!stores.ok()) return stores.status();
    shard_count_ = static_cast<int>((*stores)->size());
    if (absl::Status s = PickRemoteJob(**stores); !s.ok()) return s;
    RemotePruneSource source((*stores)->shards(), job_id_, options_.restart);
    return Prune(source, pruned, [&](const rules_db::PruneCounts& counts) { return source.RecordPruning(counts); });
  }

  // --job (waited for with --wait), or the one job DONE on store 0; DONE on
  // every shard either way.
  absl::Status PickRemoteJob(const cluster::StoreSet& stores) {
    job_id_ = options_.job_id;
    if (job_id_.empty()) {
      auto stub = rules_db::HashStore::NewStub(stores.shards()[0].channel);
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      rules_db::ListJobsRequest request;
      request.set_page_size(1000);
      rules_db::ListJobsResponse jobs;
      absl::Status s = net::FromGrpc(stub->ListJobs(&context, request, &jobs), stores.shards()[0].address);
      if (!s.ok()) return s;
      if (absl::Status picked = PickDone(jobs.jobs(), stores.Describe()); !picked.ok()) return picked;
    }
    while (true) {
      auto views = cluster::FetchJobViews(stores.shards(), job_id_, absl::Seconds(30));
      if (!views.ok() && !(options_.wait && (absl::IsNotFound(views.status()) || net::IsUnavailable(views.status())))) {
        return Usage(views.status());
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
        if (not_done.empty()) return absl::OkStatus();
      } else {
        not_done = std::string(views.status().message());
      }
      if (!options_.wait || failed) {
        return Usage(absl::StrCat(not_done, failed ? "" : ": finish `taso verify` before pruning (or --wait)"));
      }
      err_ << "taso rules prune: waiting: " << not_done << "\n" << std::flush;
      absl::SleepFor(options_.wait_poll);
    }
  }

  // The one DONE job among `jobs`, into job_id_.
  absl::Status PickDone(const google::protobuf::RepeatedPtrField<rules_db::Job>& jobs, const std::string& where) {
    std::vector<std::string> done;
    for (const rules_db::Job& job : jobs) {
      if (job.state() == rules_db::JOB_STATE_DONE) done.push_back(job.id());
    }
    if (done.size() != 1) {
      return Usage(done.empty() ? absl::StrCat("no verified job in ", where, ": run `taso verify` first")
                                : absl::StrCat("several verified jobs in ", where, " (", absl::StrJoin(done, ", "),
                                               "): choose one with --job"));
    }
    job_id_ = done[0];
    return absl::OkStatus();
  }

  // Every store-N under --db, in store-index order.
  absl::Status Open() {
    dirs_ = cluster::StoreDirs(options_.db);
    if (dirs_.empty()) {
      return Usage(absl::StrCat("no database at ", options_.db, "/store-0: run `taso generate` and `taso verify` first"));
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
        return absl::Status(store.status().code(),
                            absl::StrCat(store.status().message(),
                                         " (if a taso_rules_db serves it, stop it: the pruner opens the database itself)"));
      }
      const rules_db::StoreInfo& info = (*store)->info();
      if (info.store_count() != static_cast<int>(dirs_.size()) || !indices.insert(info.store_index()).second) {
        return Usage(absl::StrCat(dir, " is store ", info.store_index(), " of ", info.store_count(), ", but ",
                                  options_.db, " holds ", dirs_.size(),
                                  " store directories: every shard of the job must be here once"));
      }
      rule_stores_.push_back(std::make_unique<rules_db::RuleStore>(store->get()));
      hash_stores_.push_back(std::move(*store));
    }
    return absl::OkStatus();
  }

  // --job, or the one job DONE on store 0; DONE on every shard either way.
  absl::Status PickJob() {
    job_id_ = options_.job_id;
    if (job_id_.empty()) {
      rules_db::ListJobsRequest request;
      request.set_page_size(1000);
      auto jobs = hash_stores_[0]->ListJobs(request);
      if (!jobs.ok()) return jobs.status();
      if (absl::Status s = PickDone(jobs->jobs(), options_.db); !s.ok()) return s;
    }
    for (size_t i = 0; i < hash_stores_.size(); ++i) {
      auto job = hash_stores_[i]->GetJob(job_id_);
      if (!job.ok()) return Usage(absl::StrCat(dirs_[i], ": ", job.status().message()));
      if (job->state() != rules_db::JOB_STATE_DONE) {
        return Usage(absl::StrCat("job ", job_id_, " is ", rules_db::JobState_Name(job->state()), " in ", dirs_[i],
                                  ": finish `taso verify` before pruning"));
      }
    }
    return absl::OkStatus();
  }

  const PruneCommandOptions& options_;
  std::ostream& err_;
  const absl::Time start_ = absl::Now();
  int exit_code_ = 1;
  bool pruning_ = false;
  std::vector<std::string> dirs_;
  std::vector<std::unique_ptr<rules_db::GraphHashStore>> hash_stores_;
  std::vector<std::unique_ptr<rules_db::RuleStore>> rule_stores_;  // declared after: destroyed first
  std::string job_id_;
  int shard_count_ = 0;
};

// TASO's reduction table of a pruning, as `taso rules prune` prints it.
void PrintPruned(const PruneJobResult& job, bool json, std::ostream& out) {
  const verifier::StreamingPruneResult& r = job.pruned;
  const verifier::ReductionTable& t = r.table;
  if (json) {
    const Json summary = {{"job", job.job_id},
                          {"store_shards", static_cast<int64_t>(job.store_shards)},
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
                          {"wall_seconds", RoundTo(job.seconds, 3)}};
    out << JsonLine(summary) << "\n";
    return;
  }
  out << absl::StrFormat(
      "job %s pruned over %d store shard%s as one set\n"
      "reduction (TASO's Table 3):\n"
      "  proved rules            %10d\n"
      "  after renaming          %10d   (-%d)\n"
      "  after common subgraph   %10d   (-%d subgraph, -%d supergraph)\n"
      "  wall time               %10.1f s%s\n"
      "  peak RSS                %10d MiB   (pruner state %d MiB)\n"
      "  statuses written        %10d\n",
      job.job_id, job.store_shards, job.store_shards == 1 ? "" : "s", t.proved, t.after_renaming, t.pruned_renaming,
      t.after_common_subgraph, t.pruned_subgraph, t.pruned_supergraph, job.seconds,
      r.resumed_at > 0 ? absl::StrCat("   (resumed after ", r.resumed_at, " rules)") : "", PeakRssMb(),
      r.state_bytes >> 20, r.rules_written);
}

}  // namespace

PruneJobResult PruneJob(const PruneCommandOptions& options, std::ostream& err) {
  return PruneJobRun(options, err).Run();
}

int RunRulesPrune(const PruneCommandOptions& options, std::ostream& out, std::ostream& err) {
  PruneJobResult job = PruneJob(options, err);
  if (!job.status.ok()) {
    err << "taso rules prune: " << job.status.message()
        << (job.stopped_midway ? "; rerun the same command to resume" : "") << "\n";
    return job.exit_code;
  }
  PrintPruned(job, options.json, out);
  return 0;
}

}  // namespace taso::cli
