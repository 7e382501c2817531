#include "cli/prune_command.h"

#include <sys/resource.h>

#include <memory>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/store_prune_source.h"
#include "cluster/store_set.h"
#include "core/json_text.h"
#include "rules_db/hash_store.h"
#include "rules_db/rule_store.h"
#include "verifier/streaming_pruning.h"

namespace taso::cli {
namespace {

// RocksDB's share of the memory: the pruner reads each rule twice and writes
// some back, so a small cache and memtables do.
constexpr int64_t kBlockCacheMb = 64;
constexpr int64_t kWriteBufferMb = 16;

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
    if (!options_.store.empty()) {
      return Fail(2, "taso rules prune opens the store databases itself: give --db DIR on the machine that holds "
                     "them (every store-N under it is pruned as one set), with their taso_rules_db stopped");
    }
    if (options_.memory_limit_mb < 64 || options_.batch_rules < 1) {
      return Fail(2, "--memory-limit-mb must be at least 64 and --batch-rules at least 1");
    }
    if (int code = Open(); code != 0) return code;
    if (int code = PickJob(); code != 0) return code;
    std::vector<rules_db::RuleStore*> shards;
    for (auto& r : rule_stores_) shards.push_back(r.get());
    StorePruneSource source(shards, job_id_, options_.restart);
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
    const rules_db::PruneCounts& counts = result->table;
    for (size_t i = 0; i < rule_stores_.size(); ++i) {
      absl::Status s = rule_stores_[i]->RecordPruning(job_id_, counts, static_cast<int>(rule_stores_.size()));
      if (!s.ok()) return Fail(1, absl::StrCat(dirs_[i], ": ", s.message()));
    }
    Print(*result);
    return 0;
  }

 private:
  int Fail(int code, const std::string& message) {
    err_ << "taso rules prune: " << message << "\n";
    return code;
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
      std::vector<std::string> done;
      for (const rules_db::Job& job : jobs->jobs()) {
        if (job.state() == rules_db::JOB_STATE_DONE) done.push_back(job.id());
      }
      if (done.size() != 1) {
        return Fail(2, done.empty() ? absl::StrCat("no verified job in ", options_.db, ": run `taso verify` first")
                                    : absl::StrCat("several verified jobs in ", options_.db, " (",
                                                   absl::StrJoin(done, ", "), "): choose one with --job"));
      }
      job_id_ = done[0];
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
                            {"store_shards", static_cast<int64_t>(rule_stores_.size())},
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
        job_id_, rule_stores_.size(), rule_stores_.size() == 1 ? "" : "s", t.proved, t.after_renaming,
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
};

}  // namespace

int RunRulesPrune(const PruneCommandOptions& options, std::ostream& out, std::ostream& err) {
  PruneCommand command(options, out, err);
  return command.Run();
}

}  // namespace taso::cli
