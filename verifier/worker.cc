#include "verifier/worker.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "net/grpc_status.h"
#include "net/retry.h"
#include "proto/rules_db.grpc.pb.h"
#include "records/spec.h"
#include "records/store_shards.h"
#include "verifier/candidate.h"
#include "verifier/leases_in_hand.h"
#include "verifier/stall_watchdog.h"

namespace taso::verifier {
namespace {

// How long a thread whose prover has no room under the Z3 memory cap waits
// for some before it stores the pair as a timeout: a Z3 timeout's length.
constexpr absl::Duration kWaitForSolverRoom = absl::Seconds(10);

// One store shard's stubs; both services live in the same taso_rules_db.
struct Shard {
  std::string address;
  std::unique_ptr<rules_db::RuleDb::Stub> stub;
  std::unique_ptr<rules_db::HashStore::Stub> jobs;
  std::string Name() const { return "store " + address; }
};

class Worker {
 public:
  Worker(const VerifierWorkerOptions& options, VerifierCounters& counters, std::vector<records::StoreShard> stores)
      : options_(options), counters_(counters), in_hand_(options.threads) {
    for (records::StoreShard& store : stores) {
      Shard shard;
      shard.address = store.address;
      shard.stub = rules_db::RuleDb::NewStub(store.channel);
      shard.jobs = rules_db::HashStore::NewStub(store.channel);
      shards_.push_back(std::move(shard));
    }
  }

  absl::Status Run() {
    std::vector<std::thread> threads;
    std::vector<absl::Status> results(std::max(1, options_.threads));
    if (options_.stall_after > absl::ZeroDuration()) {
      watchdog_ = std::make_unique<StallWatchdog>(static_cast<int>(results.size()), options_.stall_after,
                                                  [this](const StallWatchdog::Stall& stall) { OnStall(stall); });
    }
    for (size_t t = 0; t < results.size(); ++t) {
      threads.emplace_back([this, t, &results] { results[t] = Loop(static_cast<int>(t)); });
    }
    std::thread keeper([this] { KeepLeases(); });
    for (auto& t : threads) t.join();
    {
      std::lock_guard<std::mutex> lock(keeper_mu_);
      loops_done_ = true;
    }
    keeper_wake_.notify_all();
    keeper.join();
    for (const absl::Status& s : results) {
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  void Log(const std::string& line) {
    if (options_.log) options_.log(line);
  }

  void OnStall(const StallWatchdog::Stall& stall) {
    const std::string message = absl::StrFormat(
        "a Z3 query of thread %d has run %.0f s, past the %s stall limit (--stall_s), though its own limits are %d "
        "resource units and %d ms (Z3 does not check them everywhere); it had in hand %s. The verifier ends so that "
        "its leases expire and their classes go to another verifier; the store gives a class up after its lease "
        "expired --max_lease_expiries times",
        stall.slot, stall.seconds, absl::FormatDuration(options_.stall_after), options_.prover.rlimit,
        options_.prover.timeout_ms, stall.work.empty() ? "no class" : stall.work);
    if (options_.on_stall) return options_.on_stall(message);
    const std::string gave_back = GiveBack(stall.slot);
    if (options_.log) {
      Log(message);
      Log(gave_back);
    } else {
      std::fprintf(stderr, "%s\n%s\n", message.c_str(), gave_back.c_str());  // quiet or not, why it ends
    }
    std::_Exit(kStalledExitCode);
  }

  absl::Duration HandBackAfter() const {
    return options_.hand_back_after > absl::ZeroDuration() ? options_.hand_back_after
                                                           : absl::Milliseconds(options_.lease_ms) / 3;
  }

  // Runs beside the proving threads until they are done: a thread whose
  // batch has outlasted HandBackAfter (a slow class, a query near its
  // limits) hands back the leases it has not started, for other threads
  // and workers to take now, and reports the classes it finished, before
  // their leases expire. One try each: what fails still expires, as before.
  void KeepLeases() {
    const absl::Duration after = HandBackAfter();
    const absl::Duration period = std::min(absl::Seconds(1), std::max(absl::Milliseconds(1), after / 4));
    std::unique_lock<std::mutex> lock(keeper_mu_);
    while (!keeper_wake_.wait_for(lock, absl::ToChronoMilliseconds(period), [this] { return loops_done_; })) {
      lock.unlock();
      for (LeasesInHand::HandBack& back : in_hand_.TakeOverdue(absl::Now() - after)) {
        Shard& shard = shards_[back.shard];
        if (absl::Status r = SendReports(shard, back.finished, absl::ZeroDuration()); !r.ok()) {
          Log(absl::StrCat("reporting finished classes early: ", r.message()));
        }
        if (back.releases.empty()) continue;
        auto accepted = Send(shard, back.releases, absl::ZeroDuration());
        const long long released = accepted.ok() ? std::count(accepted->begin(), accepted->end(), true) : 0;
        Log(absl::StrCat("thread ", back.thread, " still busy after ", absl::FormatDuration(after), ": released ",
                         released, " of ", back.releases.size(),
                         " leases not started, for other workers to take now",
                         accepted.ok() ? "" : absl::StrCat(" (", accepted.status().message(), ")")));
      }
      lock.lock();
    }
  }

  // Before a stalled worker ends: the classes it finished are reported, and
  // every lease but the stuck thread's is released, so that only the class
  // that stalled is counted as expired. One try per store shard, no retry
  // (each call still has Send's 60-s deadline): the worker is ending, and
  // what fails here merely expires.
  std::string GiveBack(int stalled) {
    int reported = 0, released = 0, failed = 0;
    for (auto& [shard, reports] : in_hand_.GiveBackAllBut(stalled)) {
      auto accepted = Send(shards_[shard], reports, absl::ZeroDuration());
      for (size_t i = 0; i < reports.size(); ++i) {
        if (!accepted.ok() || !(*accepted)[i]) {
          ++failed;
        } else {
          ++(reports[i].complete() ? reported : released);
        }
      }
    }
    return absl::StrCat("before ending: reported ", reported, " finished classes, released ", released,
                        " leases of classes not stalled on", failed > 0 ? absl::StrCat(" (", failed, " failed)") : "");
  }

  // What thread `thread` has in hand, for a stall's message.
  void Describe(int thread, const rules_db::Lease& lease, const rules_db::CandidatePair& pair) {
    if (!watchdog_) return;
    watchdog_->Describe(thread, absl::StrCat("lease ", lease.lease_id(), ", pair (", pair.source_member(), ", ",
                                             pair.target_member(), ")"));
  }

  absl::StatusOr<const records::Spec*> SpecFor(const Shard& shard, const std::string& job_id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = specs_.find(job_id);
    if (it != specs_.end()) return &it->second;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    rules_db::GetJobRequest request;
    request.set_job_id(job_id);
    rules_db::Job job;
    if (absl::Status s = net::FromGrpc(shard.jobs->GetJob(&context, request, &job), shard.Name()); !s.ok()) {
      return s;
    }
    auto spec = records::SpecFromProto(job.spec());
    if (!spec.ok()) return spec.status();
    return &specs_.emplace(job_id, std::move(*spec)).first->second;
  }

  // Calls `rpc` until it succeeds, retrying an unreachable store every 500 ms
  // (for `retry_for`; default the options').
  absl::Status WithRetry(const std::function<absl::Status()>& rpc, std::optional<absl::Duration> retry_for = {}) {
    net::RetryPolicy policy;
    policy.retry_for = retry_for.value_or(options_.retry_for);
    policy.initial_backoff = policy.max_backoff = absl::Milliseconds(500);
    return net::RetryWithBackoff(policy, rpc);
  }

  // Each thread takes work from the store shards in turn (threads start at
  // different shards), so every shard is drained and none waits for another.
  absl::Status Loop(int thread) {
    auto prover = Prover::Create(options_.prover);
    if (!prover.ok()) return prover.status();
    struct Watched {
      StallWatchdog* watchdog;
      int slot;
      ~Watched() {
        if (watchdog != nullptr) watchdog->Watch(slot, nullptr);  // before the prover goes
      }
    } watched{watchdog_.get(), thread};
    if (watchdog_) watchdog_->Watch(thread, [p = prover->get()] { return p->SecondsInQuery(); });
    const std::string worker_id = absl::StrCat(options_.worker_id, "/", thread);
    size_t next = static_cast<size_t>(thread) % shards_.size();
    while (!Stopping()) {
      bool leased = false;
      for (size_t tried = 0; tried < shards_.size() && !leased; ++tried) {
        const int shard_index = static_cast<int>(next);
        Shard& shard = shards_[next];
        next = (next + 1) % shards_.size();
        rules_db::LeaseCandidatesRequest request;
        request.set_worker_id(worker_id);
        // A few classes per lease call: fewer round trips, still fine-grained
        // enough that a dead worker strands little work.
        request.set_max_classes(8);
        request.set_lease_duration_ms(options_.lease_ms);
        request.set_job_id(options_.job_id);
        rules_db::LeaseCandidatesResponse leases;
        absl::Status s = WithRetry([&] {
          grpc::ClientContext context;
          context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
          return net::FromGrpc(shard.stub->LeaseCandidates(&context, request, &leases), shard.Name());
        });
        if (!s.ok()) return s;
        leased = !leases.leases().empty();
        std::vector<std::string> lease_ids;
        for (const rules_db::Lease& lease : leases.leases()) lease_ids.push_back(lease.lease_id());
        // The finished classes go back together, in one call: a report per
        // class cost more in RPC overhead than its proofs did. A lease is
        // renewed only by a report, so the batch goes early once a third of
        // the lease has passed.
        const absl::Time leased_at = absl::Now();
        in_hand_.Leased(thread, shard_index, worker_id, lease_ids, leased_at);
        for (const rules_db::Lease& lease : leases.leases()) {
          if (Stopping()) break;
          if (!in_hand_.Started(thread, lease.lease_id())) continue;  // handed back (KeepLeases)
          const int64_t renewals_before = (*prover)->renewals();
          auto report = VerifyClass(**prover, shard, worker_id, lease, thread);
          counters_.prover_renewals += (*prover)->renewals() - renewals_before;
          if (!report.ok()) return report.status();
          in_hand_.Finished(thread, report->has_value() ? &**report : nullptr);
          if (absl::Now() - leased_at > HandBackAfter()) {
            if (absl::Status r = SendReports(shard, in_hand_.TakeFinished(thread)); !r.ok()) return r;
          }
        }
        if (absl::Status r = SendReports(shard, in_hand_.TakeFinished(thread)); !r.ok()) return r;
        // Stopping: the leases not started go back now rather than expire
        // (an expiry counts towards the store giving their classes up).
        if (absl::Status r = ReleaseLeases(shard, in_hand_.TakeUnstarted(thread)); !r.ok()) return r;
      }
      if (leased) continue;
      if (options_.exit_when_done && NothingLeft()) return absl::OkStatus();
      absl::SleepFor(options_.poll_interval);
    }
    return absl::OkStatus();
  }

  bool Stopping() const { return options_.stop && options_.stop(); }

  // No store shard has a job generated-but-unfinished: every class has a
  // verdict (or the job we were asked for is done everywhere).
  bool NothingLeft() {
    for (Shard& shard : shards_) {
      if (!NothingLeftIn(shard)) return false;
    }
    return true;
  }

  bool NothingLeftIn(Shard& shard) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    rules_db::ListJobsRequest request;
    request.set_page_size(1000);
    rules_db::ListJobsResponse jobs;
    if (!shard.jobs->ListJobs(&context, request, &jobs).ok()) return false;
    for (const auto& job : jobs.jobs()) {
      if (!options_.job_id.empty() && job.id() != options_.job_id) continue;
      if (job.state() == rules_db::JOB_STATE_GENERATED || job.state() == rules_db::JOB_STATE_VERIFYING) return false;
      if (!options_.job_id.empty() && job.state() != rules_db::JOB_STATE_DONE) return false;
    }
    return true;
  }

  // Proves a leased class's pairs. Returns its complete report, to send;
  // nothing when a heartbeat on the way was refused (the lease expired and
  // the class went to another worker).
  absl::StatusOr<std::optional<rules_db::ReportVerdictsRequest>> VerifyClass(Prover& prover, Shard& shard,
                                                                             const std::string& worker_id,
                                                                             const rules_db::Lease& lease,
                                                                             int thread) {
    const rules_db::CandidateClass& c = lease.candidate_class();
    auto spec = SpecFor(shard, c.job_id());
    if (!spec.ok()) return spec.status();
    rules_db::ReportVerdictsRequest report;
    report.set_lease_id(lease.lease_id());
    report.set_worker_id(worker_id);
    absl::Time last_report = absl::Now();
    for (const rules_db::CandidatePair& pair : c.pairs()) {
      rules_db::PairVerdict* v = report.add_verdicts();
      v->set_source_member(pair.source_member());
      v->set_target_member(pair.target_member());
      Describe(thread, lease, pair);
      auto graphs = DecodeCandidate(**spec, c, pair);
      if (!graphs.ok()) {
        // A class this worker cannot read is a store or version bug: say so.
        return absl::DataLossError(absl::StrCat("class ", lease.lease_id(), ": ", graphs.status().message()));
      }
      rules::Rule rule = RuleFromGraphs(*graphs);
      if (pair.rejected()) {
        rule.set_status(rules::RULE_STATUS_REJECTED_PRECHECK);
        rule.set_status_detail(pair.reason());
        ++counters_.rejected_precheck;
      } else {
        auto result = prover.Prove(graphs->source, graphs->target, graphs->outputs);
        // No room for a Z3 context under the memory cap: other threads' big
        // queries end within their limits and their provers start over,
        // which makes room. A while, then it is out of budget, as a query
        // past the cap is.
        for (const absl::Time until = absl::Now() + kWaitForSolverRoom;
             result.status().code() == absl::StatusCode::kResourceExhausted && absl::Now() < until && !Stopping();) {
          absl::SleepFor(absl::Milliseconds(50));
          result = prover.Prove(graphs->source, graphs->target, graphs->outputs);
        }
        if (result.status().code() == absl::StatusCode::kResourceExhausted) {
          rule.set_status(rules::RULE_STATUS_TIMEOUT);
          rule.set_status_detail(std::string(result.status().message()));
          ++counters_.timeout;
        } else if (!result.ok()) {
          rule.set_status(rules::RULE_STATUS_UNKNOWN);
          rule.set_status_detail(absl::StrCat("not modelled: ", result.status().message()));
          ++counters_.unknown;
        } else {
          ApplyProofResult(*result, SolverName(), prover.axiom_set_version(), rule);
          switch (result->outcome) {
            case ProofOutcome::kProved: ++counters_.proved; break;
            case ProofOutcome::kRefuted: ++counters_.refuted; break;
            case ProofOutcome::kTimeout: ++counters_.timeout; break;
            case ProofOutcome::kUnknown: ++counters_.unknown; break;
          }
        }
      }
      *v->mutable_rule() = std::move(rule);
      if (absl::Now() - last_report > absl::Milliseconds(options_.lease_ms / 3)) {
        // A heartbeat with what is done so far; the lease is renewed.
        report.set_complete(false);
        auto accepted = Report(shard, report);
        if (!accepted.ok()) return accepted.status();
        if (!*accepted) return std::nullopt;  // the class went to another worker
        report.clear_verdicts();
        last_report = absl::Now();
      }
    }
    report.set_complete(true);
    return report;
  }

  // Sends `reports`: several in one ReportClasses call, or one at a time to
  // a store without it. Says which the store accepted (a report under an
  // expired lease is not), in order.
  absl::StatusOr<std::vector<bool>> Send(Shard& shard, const std::vector<rules_db::ReportVerdictsRequest>& reports,
                                         std::optional<absl::Duration> retry_for = {}) {
    std::vector<bool> accepted;
    if (reports.size() > 1 && report_classes_) {
      rules_db::ReportClassesRequest request;
      for (const auto& report : reports) *request.add_reports() = report;
      rules_db::ReportClassesResponse response;
      absl::Status s = WithRetry([&] {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
        return net::FromGrpc(shard.stub->ReportClasses(&context, request, &response), shard.Name());
      }, retry_for);
      if (s.ok()) {
        for (const auto& r : response.reports()) accepted.push_back(r.accepted());
        accepted.resize(reports.size(), false);
        return accepted;
      }
      if (s.code() != absl::StatusCode::kUnimplemented) return s;
      report_classes_ = false;  // an older store: class by class from now on
    }
    for (const auto& report : reports) {
      rules_db::ReportVerdictsResponse response;
      absl::Status s = WithRetry([&] {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
        return net::FromGrpc(shard.stub->ReportVerdicts(&context, report, &response), shard.Name());
      }, retry_for);
      if (!s.ok()) return s;
      accepted.push_back(response.accepted());
    }
    return accepted;
  }

  // Sends complete reports of finished classes and counts those accepted.
  absl::Status SendReports(Shard& shard, const std::vector<rules_db::ReportVerdictsRequest>& finished,
                           std::optional<absl::Duration> retry_for = {}) {
    if (finished.empty()) return absl::OkStatus();
    auto accepted = Send(shard, finished, retry_for);
    if (!accepted.ok()) return accepted.status();
    for (size_t i = 0; i < finished.size(); ++i) {
      if ((*accepted)[i]) {
        ++counters_.classes;
      } else {
        Log(absl::StrCat("lease ", finished[i].lease_id(), " expired before the report; another worker has the class"));
      }
    }
    return absl::OkStatus();
  }

  // Gives back leases this worker will not start (it is stopping).
  absl::Status ReleaseLeases(Shard& shard, const std::vector<rules_db::ReportVerdictsRequest>& releases) {
    if (releases.empty()) return absl::OkStatus();
    auto accepted = Send(shard, releases);
    if (!accepted.ok()) return accepted.status();
    Log(absl::StrCat("stopping: released ", std::count(accepted->begin(), accepted->end(), true), " of ",
                     releases.size(), " leases not started, for other workers to take now"));
    return absl::OkStatus();
  }

  absl::StatusOr<bool> Report(Shard& shard, const rules_db::ReportVerdictsRequest& report) {
    auto accepted = Send(shard, {report});
    if (!accepted.ok()) return accepted.status();
    return (*accepted)[0];
  }

  const VerifierWorkerOptions& options_;
  VerifierCounters& counters_;
  std::vector<Shard> shards_;
  std::mutex mu_;
  std::map<std::string, records::Spec> specs_;
  std::atomic<bool> report_classes_{true};  // false once a store answers ReportClasses UNIMPLEMENTED
  LeasesInHand in_hand_;
  std::mutex keeper_mu_;
  std::condition_variable keeper_wake_;
  bool loops_done_ = false;  // under keeper_mu_
  std::unique_ptr<StallWatchdog> watchdog_;  // declared last: stopped before the rest goes
};

}  // namespace

absl::Status RunVerifierWorker(const VerifierWorkerOptions& options, VerifierCounters& counters) {
  const std::vector<std::string> addresses = records::SplitStoreList(options.store);
  if (addresses.empty()) return absl::InvalidArgumentError("a rule database address (--store) is required");
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  // Every store shard of the job must be listed: ask each its place.
  std::vector<records::StoreShard> stores;
  net::RetryPolicy policy;
  policy.retry_for = options.retry_for;
  policy.initial_backoff = policy.max_backoff = absl::Milliseconds(500);
  policy.retryable = [](const absl::Status& s) { return s.code() == absl::StatusCode::kUnavailable; };
  absl::Status connected = net::RetryWithBackoff(policy, [&](bool& progressed) {
    auto shards = records::ConnectStoreShards(addresses, args, absl::Seconds(10));
    if (!shards.ok()) return shards.status();
    progressed = true;
    stores = std::move(*shards);
    return absl::OkStatus();
  });
  if (!connected.ok()) return connected;
  Worker worker(options, counters, std::move(stores));
  return worker.Run();
}

}  // namespace taso::verifier
