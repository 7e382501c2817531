#include "cli/verify_command.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "app/startup.h"
#include "cli/prune_command.h"
#include "cluster/job_states.h"
#include "cluster/local_store.h"
#include "cluster/processes.h"
#include "cluster/store_set.h"
#include "cluster/supervisor.h"
#include "core/json_text.h"
#include "grpcpp/grpcpp.h"
#include "net/grpc_status.h"
#include "proto/rules_db.grpc.pb.h"
#include "records/reduction_table.h"
#include "verifier/worker.h"

namespace taso::cli {
namespace {

// What the store does once every class is verified, for the progress line.
const char* FinishStageText(rules_db::FinishStage stage) {
  switch (stage) {
    case rules_db::FINISH_STAGE_DERIVING: return "; the store is deriving the renamings' verdicts";
    case rules_db::FINISH_STAGE_PRUNING: return "; the store is pruning";
    default: return "";
  }
}

class Verify {
 public:
  Verify(const VerifyOptions& options, std::ostream& out, std::ostream& err)
      : options_(options), out_(out), err_(err) {}

  int Run() {
    if (options_.workers < 1 || options_.workers > 256) return Fail(2, "--workers must be in 1..256");
    if (options_.threads < 1 || options_.threads > 64) return Fail(2, "--threads must be in 1..64");
    app::CatchInterrupts();
    start_ = absl::Now();
    int code = Execute();
    Shutdown();
    return code;
  }

 private:
  int Fail(int code, const std::string& message) {
    err_ << "taso verify: " << message << "\n";
    return code;
  }

  int Execute() {
    auto logs = cluster::MakeLogDir(options_.db);
    if (!logs.ok()) return Fail(1, std::string(logs.status().message()));
    logs_ = *logs;
    if (options_.store.empty() && cluster::StoreDirs(options_.db).empty()) {
      return Fail(2, absl::StrCat("no database at ", options_.db, "/store-0: run `taso generate` first (or give --store)"));
    }
    // Every store shard: the verifiers lease from all of them.
    if (absl::Status s = OpenStores(); !s.ok()) {
      return Fail(s.code() == absl::StatusCode::kUnavailable ? 3 : 1, std::string(s.message()));
    }

    // Which job.
    rules_db::ListJobsRequest list;
    list.set_page_size(1000);
    rules_db::ListJobsResponse jobs;
    {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      auto store0 = rules_db::HashStore::NewStub(stores_->shards()[0].channel);
      absl::Status s = net::FromGrpc(store0->ListJobs(&context, list, &jobs), stores_->Describe());
      if (!s.ok()) return Fail(s.code() == absl::StatusCode::kUnavailable ? 3 : 1, std::string(s.message()));
    }
    std::vector<std::string> ready;
    for (const auto& job : jobs.jobs()) {
      if (!options_.job_id.empty() && job.id() != options_.job_id) continue;
      if (cluster::JobStateRank(job.state()) >= cluster::JobStateRank(rules_db::JOB_STATE_GENERATED)) {
        ready.push_back(job.id());
      } else if (!options_.job_id.empty()) {
        return Fail(2, absl::StrCat("job ", job.id(), " is ", rules_db::JobState_Name(job.state()),
                                    "; finish it with `taso generate` first"));
      }
    }
    if (ready.empty()) {
      return Fail(2, options_.job_id.empty() ? "no generated job in the database; run `taso generate` first"
                                             : absl::StrCat("no job '", options_.job_id, "' in the database"));
    }
    if (ready.size() > 1) {
      return Fail(2, absl::StrCat("the database holds ", ready.size(), " generated jobs; pick one with --job"));
    }
    job_id_ = ready[0];
    if (!options_.json) err_ << "taso verify: job " << job_id_ << ", " << options_.workers << " verifier(s)\n";

    auto path = cluster::FindExecutable("taso_verifier");
    if (!path.ok()) return Fail(1, std::string(path.status().message()));
    workers_ = std::make_unique<cluster::Supervisor>(*path, options_.max_restarts, std::set<int>{},
                                                     std::set<int>{verifier::kStalledExitCode});
    for (int w = 0; w < options_.workers; ++w) {
      std::vector<std::string> flags = {
          absl::StrCat("--store=", address_),         absl::StrCat("--job=", job_id_),
          absl::StrCat("--threads=", options_.threads), absl::StrCat("--lease_ms=", options_.lease_ms),
          absl::StrCat("--rlimit=", options_.rlimit),   absl::StrCat("--worker_id=verifier-", w)};
      if (options_.stall_s >= 0) flags.push_back(absl::StrCat("--stall_s=", options_.stall_s));
      auto started = workers_->Start(flags, absl::StrCat(logs_, "/verifier-", w, ".log"));
      if (!started.ok()) return Fail(1, std::string(started.status().message()));
    }
    return Monitor();
  }

  // Restarts the verifiers that failed. A verifier that exits 0 found no
  // work left it could lease: the rest is leased by others and will finish.
  // An exit code when one failed too often.
  std::optional<int> ReapWorkers() {
    for (const cluster::Supervisor::Exit& exit : workers_->Reap()) {
      if (exit.verdict == cluster::Supervisor::Verdict::kFinished) continue;
      const int i = exit.child;
      if (exit.verdict == cluster::Supervisor::Verdict::kRelaunch) {
        // Its watchdog ended it inside a Z3 query far past its limits; the
        // store leases the class again, or gives it up once it stalled enough.
        if (!options_.json) {
          err_ << "\n  verifier " << i << " stalled in a proof and was restarted (" << workers_->log(i) << ")\n";
        }
        if (absl::Status s = workers_->Relaunch(i); !s.ok()) return Fail(1, std::string(s.message()));
        continue;
      }
      if (exit.verdict == cluster::Supervisor::Verdict::kGiveUp) {
        return Fail(1, absl::StrCat("verifier ", i, " failed ", workers_->restarts(i) + 1, " times; last lines of ",
                                    workers_->log(i), ":\n", cluster::TailFile(workers_->log(i), 5)));
      }
      if (absl::Status s = workers_->Restart(i); !s.ok()) return Fail(1, std::string(s.message()));
    }
    if (workers_->running() == 0) {
      // Everything was leased and reported, but the job is not done:
      // leases of a killed worker may still be expiring. Start one more.
      if (absl::Status s = workers_->Relaunch(0); !s.ok()) return Fail(1, std::string(s.message()));
    }
    return std::nullopt;
  }

  // The job as every shard has it (cluster/job_states.h): DONE once all
  // are; verification summed.
  absl::StatusOr<rules_db::Job> GetJob() {
    auto views = cluster::FetchJobViews(stores_->shards(), job_id_);
    if (!views.ok()) return views.status();
    return cluster::MergeShardJobs(*views);
  }

  // Whether the job's rules are pruned as one set: by `taso rules prune`
  // over all the shards, or by the one store itself when its last class was
  // verified (a store that skipped it has proved rules and no table).
  bool UnionPruned(const rules_db::Verification& v) const {
    const int shards = static_cast<int>(stores_->size());
    if (v.pruned_store_shards() == shards) return true;
    return shards == 1 && (v.rules_proved() == 0 || v.after_renaming() > 0);
  }

  // The --store list, or a local store started on each store-N under --db.
  absl::Status OpenStores() {
    std::vector<std::string> flags = {
        absl::StrCat("--lease_ms=", options_.lease_ms),
        absl::StrCat("--prove_once_per_form=", options_.prove_once_per_form ? "true" : "false"),
        absl::StrCat("--prove_from_smaller=", options_.prove_from_smaller ? "true" : "false")};
    if (options_.max_lease_expiries >= 0) {
      flags.push_back(absl::StrCat("--max_lease_expiries=", options_.max_lease_expiries));
    }
    auto stores = cluster::StoreSet::Open(options_.store, options_.db, logs_, flags);
    if (!stores.ok()) return stores.status();
    stores_ = std::move(*stores);
    address_ = absl::StrJoin(stores_->addresses(), ",");
    return absl::OkStatus();
  }

  // Prunes the job over every store as one set, a batch at a time in bounded
  // memory, as `taso rules prune` does (cli/prune_command.h), and records the
  // table in each store. Local stores are stopped and their databases pruned
  // in this process, which is faster than over gRPC (2.0M rules: 3 min 20 s
  // against 5 min 08 s, bench/results/prune-remote-2026-12-02.md), then
  // started again.
  absl::Status PruneAcrossStores() {
    PruneCommandOptions prune;
    prune.job_id = job_id_;
    prune.memory_limit_mb = options_.prune_memory_limit_mb;
    prune.batch_rules = options_.prune_batch_rules;
    prune.progress_label = "taso verify: pruning";
    if (options_.store.empty()) {
      Shutdown();
      prune.db = options_.db;
    } else {
      prune.store = address_;
    }
    std::ostream quiet(nullptr);
    const PruneJobResult pruned = PruneJob(prune, options_.json ? quiet : err_);
    if (options_.store.empty()) {
      if (absl::Status s = OpenStores(); !s.ok()) return s;
    }
    return pruned.status;
  }

  // The job is DONE: its rules pruned as one set here when the stores did
  // not, then the summary.
  int Finish(rules_db::Job job) {
    if (UnionPruned(job.verification())) {
      PrintSummary(job);
      return 0;
    }
    const std::string prune_command =
        absl::StrCat("`taso rules prune ", options_.store.empty() ? "--db " + options_.db : "--store " + address_,
                     " --job ", job_id_, "`");
    // Until then no table is the union's (a shard's own slice's is not).
    rules_db::Verification& v = *job.mutable_verification();
    records::RecordReduction(records::ReductionTable{}, v);
    if (!options_.prune) {
      if (v.note().empty()) {
        v.set_note(absl::StrCat("each of the ", stores_->size(), " stores pruned its own rules, not their union ",
                                "(--noprune); ", prune_command, " prunes them as one set"));
      }
      PrintSummary(job);
      return 0;
    }
    if (!options_.json) {
      err_ << "taso verify: pruning the rules over " << stores_->Describe() << " as one set\n" << std::flush;
    }
    absl::Status s = PruneAcrossStores();
    if (absl::IsPermissionDenied(s)) {
      // A worker's token verifies but may not write statuses: pruning is left to an admin.
      v.set_note(absl::StrCat("not pruned as one set (", s.message(), "); with an admin token, ", prune_command,
                              " prunes them"));
    } else if (!s.ok()) {
      return Fail(1, absl::StrCat("verified, but pruning failed: ", s.message(), "; ", prune_command, " resumes it"));
    } else {
      auto pruned = GetJob();
      if (!pruned.ok()) return Fail(1, std::string(pruned.status().message()));
      job = *std::move(pruned);
    }
    PrintSummary(job);
    return 0;
  }

  int Monitor() {
    const bool tty = isatty(2) && !options_.json;
    absl::Time last_line = absl::InfinitePast();
    while (true) {
      if (app::Interrupted()) {
        if (tty) err_ << "\n";
        return Fail(130, absl::StrCat("interrupted; rerun the same command to resume job ", job_id_));
      }
      auto job = GetJob();
      if (!job.ok()) return Fail(job.status().code() == absl::StatusCode::kUnavailable ? 3 : 1,
                                 std::string(job.status().message()));
      if (job->state() == rules_db::JOB_STATE_DONE) {
        if (tty) err_ << "\n";
        return Finish(*std::move(job));
      }
      const auto& v = job->verification();
      if (v.finish_stage() == rules_db::FINISH_STAGE_FAILED) {
        if (tty) err_ << "\n";
        return Fail(1, absl::StrCat(v.finish_error(), "\nevery verdict is stored: restart taso_rules_db and rerun the "
                                                      "same command to finish job ", job_id_));
      }
      if (auto code = ReapWorkers()) return *code;
      if (tty && absl::Now() - last_line > absl::Milliseconds(500)) {
        err_ << absl::StrFormat("\r  %lld / %lld classes verified%s, %.0f s   ", (long long)v.classes_verified(),
                                (long long)v.classes_total(), FinishStageText(v.finish_stage()),
                                absl::ToDoubleSeconds(absl::Now() - start_))
             << std::flush;
        last_line = absl::Now();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  void PrintSummary(const rules_db::Job& job) {
    const auto& v = job.verification();
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start_);
    if (options_.json) {
      const Json summary = {{"job", job.id()},
                            {"classes", v.classes_total()},
                            {"classes_given_up", v.classes_given_up()},
                            {"proved", v.rules_proved()},
                            {"refuted", v.rules_refuted()},
                            {"timeout", v.rules_timeout()},
                            {"unknown", v.rules_unknown()},
                            {"rejected_precheck", v.rules_rejected_precheck()},
                            {"proved_as_renaming", v.rules_proved_as_renaming()},
                            {"renamings_proved_alone", v.renamings_proved_alone()},
                            {"proved_from_smaller", v.rules_proved_from_smaller()},
                            {"derive_seconds", RoundTo(v.derive_seconds(), 3)},
                            {"after_renaming", v.after_renaming()},
                            {"after_common_subgraph", v.after_common_subgraph()},
                            {"pruned_renaming", v.pruned_renaming()},
                            {"pruned_common_subgraph", v.pruned_common_subgraph()},
                            {"pruned_common_supergraph", v.pruned_common_supergraph()},
                            {"note", v.note()},
                            {"pruned_store_shards", static_cast<int64_t>(v.pruned_store_shards())},
                            {"verify_seconds", RoundTo(v.wall_seconds(), 3)},
                            {"wall_seconds", RoundTo(seconds, 3)}};
      out_ << JsonLine(summary) << "\n";
      return;
    }
    const int64_t attempted = v.rules_proved() + v.rules_refuted() + v.rules_timeout() + v.rules_unknown();
    // Without pruning there is no table to print, only why.
    const std::string reduction =
        v.note().empty()
            ? absl::StrFormat("reduction (TASO's Table 3):\n"
                              "  proved rules            %10d\n"
                              "  after renaming          %10d   (-%d)\n"
                              "  after common subgraph   %10d   (-%d subgraph, -%d supergraph)\n",
                              v.rules_proved(), v.after_renaming(), v.pruned_renaming(), v.after_common_subgraph(),
                              v.pruned_common_subgraph(), v.pruned_common_supergraph())
            : absl::StrCat("reduction: ", v.note(), "\n");
    out_ << absl::StrFormat(
        "job %s verified\n"
        "  candidate classes       %10d%s\n"
        "  pairs proved            %10d   (%.2f%% of %d attempted)\n"
        "  ... as a renaming       %10d   (one proof per form, %d from a smaller rule; %d proved alone)\n"
        "  refuted                 %10d\n"
        "  timeout                 %10d\n"
        "  unknown                 %10d\n"
        "  rejected by re-check    %10d   (never sent to Z3)\n"
        "%s"
        "  wall time               %10.1f s\n"
        "`taso rules stats|list|export --db %s` reads the rules.\n",
        job.id(), v.classes_total(),
        v.classes_given_up() > 0
            ? absl::StrFormat("   (%d given up: their leases expired too often; their pairs count as timeout)",
                              v.classes_given_up())
            : "",
        v.rules_proved(), attempted ? 100.0 * v.rules_proved() / attempted : 0.0,
        attempted, v.rules_proved_as_renaming(), v.rules_proved_from_smaller(), v.renamings_proved_alone(),
        v.rules_refuted(), v.rules_timeout(),
        v.rules_unknown(), v.rules_rejected_precheck(), reduction, seconds, options_.db);
  }

  // Workers first: the store outlives every writer.
  void Shutdown() {
    if (workers_) workers_->StopAll(SIGTERM, 2000);
    stores_.reset();
  }

  const VerifyOptions& options_;
  std::ostream& out_;
  std::ostream& err_;
  std::string logs_;
  std::string address_;
  std::string job_id_;
  std::unique_ptr<cluster::StoreSet> stores_;
  absl::Time start_;
  std::unique_ptr<cluster::Supervisor> workers_;
};

}  // namespace

int RunVerify(const VerifyOptions& options, std::ostream& out, std::ostream& err) {
  Verify verify(options, out, err);
  return verify.Run();
}

}  // namespace taso::cli
