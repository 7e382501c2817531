#include "cli/generate_command.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/job_spec.h"
#include "app/startup.h"
#include "cluster/job_states.h"
#include "cluster/local_store.h"
#include "cluster/processes.h"
#include "cluster/supervisor.h"
#include "core/hash.h"
#include "core/json_text.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "net/credentials.h"
#include "net/grpc_status.h"
#include "proto/rules_db.grpc.pb.h"
#include "records/spec.h"

namespace taso::cli {
namespace {

struct StoreHandle {
  std::string address;
  std::unique_ptr<rules_db::HashStore::Stub> stub;
  cluster::LocalStore local;  // pid -1 unless started here
};

std::string Human(double v) {
  if (v >= 1e9) return absl::StrFormat("%.2fG", v / 1e9);
  if (v >= 1e6) return absl::StrFormat("%.2fM", v / 1e6);
  if (v >= 1e3) return absl::StrFormat("%.1fk", v / 1e3);
  return absl::StrFormat("%.0f", v);
}

class Generate {
 public:
  Generate(const GenerateOptions& options, std::ostream& out, std::ostream& err)
      : options_(options), out_(out), err_(err) {}

  int Run() {
    if (!options_.shards_here.empty()) {
      if (options_.job_id.empty() || options_.stores.empty()) {
        return Fail(2, "--shards-here needs --job ID (from `taso job create`) and --store (every store of the job)");
      }
      job_id_ = options_.job_id;
      app::CatchInterrupts();
      start_ = absl::Now();
      int code = Execute(std::nullopt);
      Shutdown();
      return code;
    }
    if (options_.store_shards < 1 || options_.store_shards > 64) return Fail(2, "--store-shards must be in 1..64");
    auto spec = BuildJobSpec(options_.spec_path, options_.max_ops, options_.shards);
    if (!spec.ok()) {
      return Fail(spec.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1,
                  std::string(spec.status().message()));
    }
    job_id_ = JobIdFor(options_.job_id, *spec, options_.shards);
    num_shards_ = options_.shards;
    max_ops_ = options_.max_ops;
    for (int shard = 0; shard < num_shards_; ++shard) here_.push_back(shard);

    app::CatchInterrupts();
    start_ = absl::Now();
    int code = Execute(*spec);
    Shutdown();
    return code;
  }

 private:
  int Fail(int code, const std::string& message) {
    err_ << "taso generate: " << message << "\n";
    return code;
  }

  // `spec` empty: the job exists (created by `taso job create`); run the
  // shards named by --shards-here.
  int Execute(const std::optional<generator::GenerationSpec>& spec) {
    auto logs = cluster::MakeLogDir(options_.db);
    if (!logs.ok()) return Fail(1, std::string(logs.status().message()));
    logs_ = *logs;
    if (options_.stores.empty()) {
      if (int code = StartLocalStores(); code != 0) return code;
    } else {
      for (const std::string& address : options_.stores) Connect(address);
    }
    if (!spec) {
      if (int code = LoadJob(); code != 0) return code;
    }
    for (StoreHandle& store : stores_) {
      if (!spec) break;
      rules_db::CreateJobRequest request;
      request.set_job_id(job_id_);
      *request.mutable_spec() = *spec;
      request.set_num_shards(num_shards_);
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      rules_db::Job job;
      absl::Status s = net::FromGrpc(store.stub->CreateJob(&context, request, &job), "store " + store.address);
      if (!s.ok()) return Fail(s.code() == absl::StatusCode::kUnavailable ? 3 : 1, std::string(s.message()));
    }
    if (!options_.json) {
      err_ << "taso generate: job " << job_id_ << ", size " << max_ops_ << ", " << num_shards_ << " shard(s)"
           << (spec ? "" : absl::StrCat(", running ", absl::StrJoin(here_, ","), " here")) << ", " << stores_.size()
           << " store(s)" << (options_.stores.empty() ? " under " + options_.db : "") << "\n";
    }
    auto worker_path = cluster::FindExecutable("taso_generator");
    if (!worker_path.ok()) return Fail(1, std::string(worker_path.status().message()));
    // Exit 1 is an error a restart cannot fix.
    workers_ = std::make_unique<cluster::Supervisor>(*worker_path, options_.max_restarts, std::set<int>{1});
    std::vector<std::string> addresses;
    for (const StoreHandle& s : stores_) addresses.push_back(s.address);
    for (int shard : here_) {
      auto started = workers_->Start(
          {absl::StrCat("--store=", absl::StrJoin(addresses, ",")), absl::StrCat("--job=", job_id_),
           absl::StrCat("--shard=", shard), absl::StrCat("--num_shards=", num_shards_),
           absl::StrCat("--batch_records=", options_.batch_records)},
          absl::StrCat(logs_, "/generator-", shard, ".log"));
      if (!started.ok()) return Fail(1, std::string(started.status().message()));
    }
    return Monitor();
  }

  // The job as `taso job create` made it: its shard count and size.
  int LoadJob() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    rules_db::GetJobRequest request;
    request.set_job_id(job_id_);
    rules_db::Job job;
    absl::Status s = net::FromGrpc(stores_[0].stub->GetJob(&context, request, &job), "store " + stores_[0].address);
    if (s.code() == absl::StatusCode::kNotFound) {
      return Fail(2, absl::StrCat(s.message(), " (create it with `taso job create --store ...`)"));
    }
    if (!s.ok()) return Fail(s.code() == absl::StatusCode::kUnavailable ? 3 : 1, std::string(s.message()));
    num_shards_ = job.num_shards();
    max_ops_ = job.spec().max_ops();
    here_ = options_.shards_here;
    for (int shard : here_) {
      if (shard < 0 || shard >= num_shards_) {
        return Fail(2, absl::StrCat("--shards-here names shard ", shard, ", but job ", job_id_, " has shards 0..",
                                    num_shards_ - 1));
      }
    }
    return 0;
  }

  void Connect(const std::string& address) {
    StoreHandle store;
    store.address = address;
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    store.stub = rules_db::HashStore::NewStub(
        taso::net::NewChannel(address, args));
    stores_.push_back(std::move(store));
  }

  int StartLocalStores() {
    for (int i = 0; i < options_.store_shards; ++i) {
      auto store = cluster::StartLocalStore(absl::StrCat(options_.db, "/store-", i), absl::StrCat(logs_, "/store-", i, ".log"),
                                   {absl::StrCat("--store_index=", i), absl::StrCat("--store_count=", options_.store_shards)});
      if (!store.ok()) return Fail(1, std::string(store.status().message()));
      Connect(store->address);
      stores_.back().local = *store;
    }
    return 0;
  }

  // Restarts the shards that failed and may try again; an exit code when
  // one failed for good.
  std::optional<int> ReapWorkers(bool tty) {
    for (const cluster::Supervisor::Exit& exit : workers_->Reap()) {
      if (exit.verdict == cluster::Supervisor::Verdict::kFinished) continue;
      if (tty) err_ << "\n";
      if (exit.verdict == cluster::Supervisor::Verdict::kGiveUp) {
        return Fail(exit.code == 3 ? 3 : 1,
                    absl::StrCat("generator shard ", exit.child, " failed (exit ", exit.code, "):\n",
                                 cluster::TailFile(workers_->log(exit.child), 3), "\nrerun the same command to resume"));
      }
      err_ << "taso generate: generator shard " << exit.child << " exited with code " << exit.code
           << "; restarting it (" << workers_->restarts(exit.child) + 1 << "/" << options_.max_restarts << ")\n";
      if (absl::Status s = workers_->Restart(exit.child); !s.ok()) return Fail(1, std::string(s.message()));
    }
    return std::nullopt;
  }

  // Sums every store's view of the job.
  struct Totals {
    bool all_generated = true;
    bool failed = false;
    std::string error;
    double fraction = 0;
    double rate = 0;
    int64_t enumerated = 0;
    int shards_done = 0;
    std::vector<bool> shard_done;  // done on every store
    std::vector<int64_t> shard_enumerated;  // graphs each shard enumerated (first store's view)
    rules_db::Job sum;
  };

  absl::StatusOr<Totals> Poll() {
    Totals t;
    for (size_t i = 0; i < stores_.size(); ++i) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      rules_db::GetJobRequest request;
      request.set_job_id(job_id_);
      rules_db::Job job;
      absl::Status s = net::FromGrpc(stores_[i].stub->GetJob(&context, request, &job), "store " + stores_[i].address);
      if (!s.ok()) return s;
      if (job.state() == rules_db::JOB_STATE_FAILED) {
        t.failed = true;
        t.error = job.error();
      }
      if (cluster::JobStateRank(job.state()) < cluster::JobStateRank(rules_db::JOB_STATE_GENERATED)) {
        t.all_generated = false;
      }
      if (i == 0) t.shard_done.assign(job.shards_size(), true);
      for (const auto& shard : job.shards()) {
        if (shard.shard() < static_cast<int>(t.shard_done.size()) && !shard.done()) t.shard_done[shard.shard()] = false;
      }
      if (i == 0) {
        t.shard_enumerated.assign(job.shards_size(), 0);
        for (const auto& shard : job.shards()) {
          if (shard.shard() >= 0 && shard.shard() < job.shards_size()) {
            t.shard_enumerated[shard.shard()] = shard.graphs_enumerated();
          }
          t.fraction += shard.done_fraction() / job.shards_size();
          t.rate += shard.graphs_per_second();
          t.enumerated += shard.graphs_enumerated();
          t.shards_done += shard.done();
        }
      }
      t.sum.set_graphs(t.sum.graphs() + job.graphs());
      t.sum.set_distinct_fingerprints(t.sum.distinct_fingerprints() + job.distinct_fingerprints());
      t.sum.set_multi_graph_classes(t.sum.multi_graph_classes() + job.multi_graph_classes());
      t.sum.set_candidate_classes(t.sum.candidate_classes() + job.candidate_classes());
      t.sum.set_candidate_pairs(t.sum.candidate_pairs() + job.candidate_pairs());
      t.sum.set_rejected_pairs(t.sum.rejected_pairs() + job.rejected_pairs());
      t.sum.set_pairs_after_taso_checks(t.sum.pairs_after_taso_checks() + job.pairs_after_taso_checks());
      t.sum.set_renaming_pairs(t.sum.renaming_pairs() + job.renaming_pairs());
      t.sum.set_instance_pairs(t.sum.instance_pairs() + job.instance_pairs());
      t.sum.set_from_smaller_rule_pairs(t.sum.from_smaller_rule_pairs() + job.from_smaller_rule_pairs());
    }
    return t;
  }

  int Monitor() {
    const bool tty = isatty(2) && !options_.json;
    absl::Time last_line = absl::InfinitePast();
    absl::Time unreachable_since = absl::InfiniteFuture();
    while (true) {
      if (app::Interrupted()) {
        if (tty) err_ << "\n";
        return Fail(130, absl::StrCat("interrupted; rerun the same command to resume job ", job_id_));
      }
      if (auto code = ReapWorkers(tty)) return *code;
      auto totals = Poll();
      if (!totals.ok()) {
        if (unreachable_since == absl::InfiniteFuture()) unreachable_since = absl::Now();
        if (absl::Now() - unreachable_since > absl::Seconds(60)) {
          return Fail(3, std::string(totals.status().message()));
        }
      } else {
        unreachable_since = absl::InfiniteFuture();
        if (totals->failed) {
          if (tty) err_ << "\n";
          return Fail(1, absl::StrCat("job ", job_id_, " failed: ", totals->error));
        }
        if (totals->all_generated && workers_->all_finished()) {
          if (tty) err_ << "\r\033[K";
          // The last shards to finish see the whole job done; as JSON they still
          // say what they ran (bench/estimate.py reads it), with the job's totals.
          if (!options_.shards_here.empty() && options_.json) {
            HereSummary(*totals);
          } else {
            Summary(*totals);
          }
          return 0;
        }
        if (!options_.shards_here.empty() && workers_->all_finished() && HereDone(*totals)) {
          if (tty) err_ << "\r\033[K";
          HereSummary(*totals);
          return 0;
        }
        if (tty && absl::Now() - last_line > absl::Milliseconds(250)) {
          last_line = absl::Now();
          std::string phase = totals->shards_done == num_shards_ ? "re-checking classes" : "enumerating";
          err_ << "\r\033[K" << absl::StrFormat("[%s] %5.1f%%  %s graphs  %s graphs/s  shards done %d/%d  %s",
                                                job_id_, 100 * totals->fraction, Human(totals->enumerated),
                                                Human(totals->rate), totals->shards_done, num_shards_, phase)
               << std::flush;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  bool HereDone(const Totals& t) const {
    for (int shard : here_) {
      if (shard >= static_cast<int>(t.shard_done.size()) || !t.shard_done[shard]) return false;
    }
    return true;
  }

  // The rest of the job may run elsewhere; `taso job status` follows it. The
  // job's graph and pair counts come once every shard is done (complete);
  // what this process can always say is how many graphs its shards enumerated.
  void HereSummary(const Totals& t) {
    if (options_.json) {
      int64_t enumerated = 0;
      for (int shard : here_) {
        if (shard < static_cast<int>(t.shard_enumerated.size())) enumerated += t.shard_enumerated[shard];
      }
      const Json summary = {{"job", job_id_},
                            {"shards_here", here_},
                            {"shards", num_shards_},
                            {"shards_done", t.shards_done},
                            {"stores", stores_.size()},
                            {"graphs_enumerated_here", enumerated},
                            {"complete", t.all_generated},
                            {"graphs", t.sum.graphs()},
                            {"candidate_pairs", t.sum.candidate_pairs()},
                            {"wall_seconds", RoundTo(absl::ToDoubleSeconds(absl::Now() - start_), 3)}};
      out_ << JsonLine(summary) << "\n";
      return;
    }
    out_ << "job " << job_id_ << ": shards " << absl::StrJoin(here_, ",") << " done here; " << t.shards_done << "/"
         << num_shards_ << " shards done in all\n";
  }

  void Summary(const Totals& t) {
    double seconds = absl::ToDoubleSeconds(absl::Now() - start_);
    const rules_db::Job& j = t.sum;
    if (options_.json) {
      const Json summary = {{"job", job_id_},
                            {"max_ops", max_ops_},
                            {"shards", num_shards_},
                            {"stores", stores_.size()},
                            {"graphs", j.graphs()},
                            {"distinct_fingerprints", j.distinct_fingerprints()},
                            {"multi_graph_classes", j.multi_graph_classes()},
                            {"candidate_classes", j.candidate_classes()},
                            {"candidate_pairs", j.candidate_pairs()},
                            {"rejected_pairs", j.rejected_pairs()},
                            {"pairs_after_taso_checks", j.pairs_after_taso_checks()},
                            {"renaming_pairs", j.renaming_pairs()},
                            {"instance_pairs", j.instance_pairs()},
                            {"from_smaller_rule_pairs", j.from_smaller_rule_pairs()},
                            {"wall_seconds", RoundTo(seconds, 3)}};
      out_ << JsonLine(summary) << "\n";
      return;
    }
    out_ << absl::StrFormat(
        "job %s: done\n"
        "  graphs enumerated       %12d\n"
        "  distinct fingerprints   %12d\n"
        "  classes with >1 graph   %12d\n"
        "  candidate classes       %12d   (with a canonical-order member)\n"
        "  candidate pairs         %12d\n"
        "  rejected pairs          %12d   (failed the int32/float re-check)\n"
        "  pairs TASO would keep   %12d   (its common-subgraph/supergraph checks)\n"
        "  forms to prove          %12d   (of the other pairs, %d rename one of them, %d merge one's variables,\n"
        "                                         %d follow from a smaller one)\n"
        "  wall time               %12.1f s\n",
        job_id_, j.graphs(), j.distinct_fingerprints(), j.multi_graph_classes(), j.candidate_classes(),
        j.candidate_pairs(), j.rejected_pairs(), j.pairs_after_taso_checks(),
        j.candidate_pairs() - j.renaming_pairs() - j.instance_pairs() - j.from_smaller_rule_pairs(), j.renaming_pairs(),
        j.instance_pairs(), j.from_smaller_rule_pairs(), seconds);
  }

  // Workers first: a store outlives every writer. Our own channels close
  // before a store is stopped: a store drains its connections, and an idle
  // client acknowledges the store's goodbye only when its poller next wakes
  // (a second or more after the store was told to stop).
  void Shutdown() {
    if (workers_) workers_->StopAll(SIGTERM, 2000);
    for (StoreHandle& s : stores_) s.stub.reset();
    for (StoreHandle& s : stores_) cluster::StopLocalStore(s.local);
  }

  const GenerateOptions& options_;
  std::ostream& out_;
  std::ostream& err_;
  std::string job_id_;
  int num_shards_ = 0;
  int max_ops_ = 0;
  std::vector<int> here_;  // shards run by this process
  std::string logs_;
  absl::Time start_;
  std::vector<StoreHandle> stores_;
  std::unique_ptr<cluster::Supervisor> workers_;
};

}  // namespace

int RunGenerate(const GenerateOptions& options, std::ostream& out, std::ostream& err) {
  Generate generate(options, out, err);
  return generate.Run();
}

}  // namespace taso::cli
