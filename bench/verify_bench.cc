// Proves every accepted candidate pair of a finished generation job, read
// from a hash store database (not running), in --threads worker threads,
// each with its own prover. Prints counts by outcome, wall time, the median
// and 90th-percentile proof time, and the unproved pairs.
//   bench/verify_run.sh 3      (generates the job first if needed)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "core/proc_status.h"
#include "generator/recheck.h"
#include "records/encoding.h"
#include "records/spec.h"
#include "rules_db/hash_store.h"
#include "verifier/candidate.h"
#include "verifier/precheck.h"
#include "verifier/prover.h"

ABSL_FLAG(std::string, db, "", "hash store database directory (store-0 of a taso generate --db)");
ABSL_FLAG(std::string, job, "", "job id; empty: the only job in the database");
ABSL_FLAG(int, threads, 2, "prover threads");
ABSL_FLAG(int, limit, 0, "prove at most this many pairs (0: all)");
ABSL_FLAG(bool, relevance_filter, true, "try the axioms over the pair's operators first");
ABSL_FLAG(int64_t, rlimit, 20000000, "Z3 resource limit per query");
ABSL_FLAG(int64_t, relevant_rlimit, 2000000, "Z3 resource limit of the first, relevant-axioms query");
ABSL_FLAG(bool, mbqi, false, "model-based quantifier instantiation");
ABSL_FLAG(int, show_unproved, 20, "print this many unproved pairs");
ABSL_FLAG(uint64_t, renew_above_mib, taso::verifier::ProverOptions().renew_above_mib,
          "fresh Z3 context once Z3 holds this many MiB (0: never)");
ABSL_FLAG(int, memory_every, 0, "print resident and Z3 memory every this many pairs (0: never)");
ABSL_FLAG(bool, check_claims, false,
          "also check each proved rule as the rule store does (VerifyClaim), in a prover of its own, and time it");

using namespace taso;

namespace {

// One pair of a candidate class, to prove.
struct Work {
  const rules_db::CandidateClass* cls;
  int pair;
};

// What the prover threads found, guarded by `mu`.
struct Tally {
  std::mutex mu;
  std::map<std::string, int64_t> by_outcome;
  std::map<std::string, int64_t> axiom_use;
  std::vector<double> times;
  std::vector<double> check_times;  // --check_claims: the store's check of each proved rule
  int64_t checks_failed = 0;
  std::vector<std::string> unproved;
};

// --job, or the only job in the database.
absl::StatusOr<std::string> ResolveJobId(rules_db::GraphHashStore& store) {
  std::string job_id = absl::GetFlag(FLAGS_job);
  if (!job_id.empty()) return job_id;
  auto jobs = store.ListJobs({});
  if (!jobs.ok() || jobs->jobs_size() != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("give --job (the database has ", jobs.ok() ? jobs->jobs_size() : -1, " jobs)"));
  }
  return jobs->jobs(0).id();
}

// The job's candidate classes; with --limit, only the first pages that hold
// that many pairs.
absl::StatusOr<std::vector<rules_db::CandidateClass>> ListClasses(rules_db::GraphHashStore& store,
                                                                  const std::string& job_id) {
  std::vector<rules_db::CandidateClass> classes;
  int64_t pairs_listed = 0;
  rules_db::ListCandidateClassesRequest request;
  request.set_job_id(job_id);
  request.set_page_size(1000);
  for (;;) {
    auto page = store.ListCandidateClasses(request);
    if (!page.ok()) return page.status();
    for (auto& c : *page->mutable_classes()) {
      pairs_listed += c.pairs_size();
      classes.push_back(std::move(c));
    }
    if (page->next_page_token().empty()) break;
    // A sample: classes are in fingerprint order, i.e. random.
    if (absl::GetFlag(FLAGS_limit) > 0 && pairs_listed >= absl::GetFlag(FLAGS_limit)) break;
    request.set_page_token(page->next_page_token());
  }
  return classes;
}

// The pairs the re-check accepted (at most --limit); counts the others.
std::vector<Work> PairsToProve(const std::vector<rules_db::CandidateClass>& classes, int64_t& rejected) {
  std::vector<Work> work;
  for (const auto& c : classes) {
    for (int p = 0; p < c.pairs_size(); ++p) {
      if (c.pairs(p).rejected()) {
        ++rejected;
        continue;
      }
      work.push_back({&c, p});
    }
  }
  if (absl::GetFlag(FLAGS_limit) > 0 && static_cast<int>(work.size()) > absl::GetFlag(FLAGS_limit)) {
    work.resize(absl::GetFlag(FLAGS_limit));
  }
  return work;
}

verifier::ProverOptions ProverOptionsFromFlags() {
  verifier::ProverOptions options;
  options.relevance_filter = absl::GetFlag(FLAGS_relevance_filter);
  options.rlimit = absl::GetFlag(FLAGS_rlimit);
  options.relevant_rlimit = absl::GetFlag(FLAGS_relevant_rlimit);
  options.mbqi = absl::GetFlag(FLAGS_mbqi);
  options.renew_above_mib = absl::GetFlag(FLAGS_renew_above_mib);
  return options;
}

// One prover thread: takes pairs from `next` until none is left.
void ProveShare(const records::Spec& spec, const std::vector<Work>& work,
                const verifier::ProverOptions& options, std::atomic<size_t>& next, Tally& tally) {
  auto prover = verifier::Prover::Create(options);
  auto checker = verifier::Prover::Create();  // as the store's: default options
  if (!prover.ok() || !checker.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string((prover.ok() ? checker : prover).status().message()).c_str());
    return;
  }
  for (size_t i; (i = next.fetch_add(1)) < work.size();) {
    const Work& w = work[i];
    const auto& pair = w.cls->pairs(w.pair);
    auto graphs = verifier::DecodeCandidate(spec, *w.cls, pair);
    std::string outcome;
    std::string detail;
    double seconds = 0;
    std::vector<std::string> used;
    double check_seconds = -1;
    bool check_failed = false;
    if (!graphs.ok()) {
      outcome = "decode error";
      detail = std::string(graphs.status().message());
    } else {
      auto r = (*prover)->Prove(graphs->source, graphs->target, graphs->outputs);
      if (!r.ok()) {
        outcome = "error";
        detail = std::string(r.status().message());
      } else {
        outcome = verifier::ProofOutcomeName(r->outcome);
        detail = r->detail;
        seconds = r->seconds;
        used = r->axioms_used;
        if (absl::GetFlag(FLAGS_check_claims) && r->outcome == verifier::ProofOutcome::kProved) {
          rules::Rule rule = verifier::RuleFromGraphs(*graphs);
          verifier::ApplyProofResult(*r, verifier::SolverName(), (*prover)->axiom_set_version(), rule);
          const auto start = std::chrono::steady_clock::now();
          check_failed = !verifier::VerifyClaim(**checker, verifier::SolverName(), rule).ok() ||
                         rule.status() != rules::RULE_STATUS_PROVED;
          check_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
      }
    }
    std::lock_guard<std::mutex> lock(tally.mu);
    const int every = absl::GetFlag(FLAGS_memory_every);
    if (every > 0 && (i + 1) % every == 0) {
      std::printf("after %zu pairs: resident %lld MiB, Z3 %.0f MiB, %lld renewals\n", i + 1,
                  (long long)ProcStatusKib(0, "VmRSS") / 1024, verifier::SolverMemoryMib(),
                  (long long)(*prover)->renewals());
      std::fflush(stdout);
    }
    ++tally.by_outcome[outcome];
    tally.times.push_back(seconds);
    if (check_seconds >= 0) tally.check_times.push_back(check_seconds);
    tally.checks_failed += check_failed;
    for (const auto& a : used) ++tally.axiom_use[a];
    if (outcome != "proved") {
      tally.unproved.push_back(absl::StrCat(
          outcome, ": ", records::DescribeEncoding(spec, w.cls->members(pair.source_member()).canonical()),
          "  vs  ", records::DescribeEncoding(spec, w.cls->members(pair.target_member()).canonical()),
          "  [", detail, "]"));
    }
  }
}

void PrintReport(Tally& tally, size_t pairs, double wall) {
  std::vector<double>& times = tally.times;
  std::sort(times.begin(), times.end());
  auto pct = [&](double q) { return times.empty() ? 0.0 : 1000 * times[std::min(times.size() - 1, size_t(q * times.size()))]; };
  std::printf("wall %.1f s on %d threads; per pair: median %.1f ms, p90 %.1f ms, max %.1f ms\n", wall,
              absl::GetFlag(FLAGS_threads), pct(0.5), pct(0.9), times.empty() ? 0.0 : 1000 * times.back());
  if (!tally.check_times.empty()) {
    std::vector<double>& c = tally.check_times;
    std::sort(c.begin(), c.end());
    double sum = 0;
    for (double t : c) sum += t;
    std::printf("claim checks (as the store's): %zu, total %.1f s; median %.2f ms, p90 %.2f ms; %lld not proved again\n",
                c.size(), sum, 1000 * c[c.size() / 2], 1000 * c[std::min(c.size() - 1, size_t(0.9 * c.size()))],
                (long long)tally.checks_failed);
    double prove_sum = 0;
    for (double t : times) prove_sum += t;
    std::printf("proofs: total %.1f s\n", prove_sum);
  }
  for (const auto& [o, n] : tally.by_outcome) {
    std::printf("  %-14s %8lld  (%.2f%%)\n", o.c_str(), (long long)n, 100.0 * n / std::max<size_t>(1, pairs));
  }
  std::printf("axioms used (proofs citing each):\n");
  for (const auto& [a, n] : tally.axiom_use) std::printf("  %-32s %8lld\n", a.c_str(), (long long)n);
  std::sort(tally.unproved.begin(), tally.unproved.end());
  for (int i = 0; i < std::min<int>(absl::GetFlag(FLAGS_show_unproved), tally.unproved.size()); ++i) {
    std::printf("  %s\n", tally.unproved[i].c_str());
  }
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  rules_db::HashStoreOptions options;
  options.path = absl::GetFlag(FLAGS_db);
  options.class_checker = generator::RecheckerFor;  // a job left finalizing finishes, as in taso_rules_db
  auto store = rules_db::GraphHashStore::Open(options);
  if (!store.ok()) return Fail(store.status());
  auto job_id = ResolveJobId(**store);
  if (!job_id.ok()) return Fail(job_id.status());
  auto job = (*store)->GetJob(*job_id);
  if (!job.ok()) return Fail(job.status());
  auto spec = records::SpecFromProto(job->spec());
  if (!spec.ok()) return Fail(spec.status());
  auto classes = ListClasses(**store, *job_id);
  if (!classes.ok()) return Fail(classes.status());
  int64_t rejected = 0;
  const std::vector<Work> work = PairsToProve(*classes, rejected);
  std::printf("job %s: %zu classes, %zu pairs to prove (%lld rejected by the re-check)\n", job_id->c_str(),
              classes->size(), work.size(), (long long)rejected);

  const verifier::ProverOptions prover_options = ProverOptionsFromFlags();
  std::atomic<size_t> next{0};
  Tally tally;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < absl::GetFlag(FLAGS_threads); ++t) {
    threads.emplace_back([&] { ProveShare(*spec, work, prover_options, next, tally); });
  }
  for (auto& t : threads) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  PrintReport(tally, work.size(), wall);
  return 0;
}
