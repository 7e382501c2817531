// taso_verifier: proves candidate rules against the operator axioms.
//   taso_verifier --store HOST:PORT[,HOST:PORT...] [--threads N] [--job ID]   lease and prove a job's candidates
//   taso_verifier axioms list                                  the axioms and their version
//   taso_verifier axioms validate [--max_dim D] [--max_instances_per_stratum N | --exhaustive]
//                                 [--only A,B] [--extra FILE] [--json] [--by_param]
//                                  check each axiom on every small instance (symbolic reals)
//   taso_verifier axioms redundancy [--only A,B]               axioms the others entail
//   taso_verifier prove FILE [--rlimit N] [--mbqi] [--extra FILE] [--skip A,B]
//                                  prove rules written as `taso rules export` prints them
// Exit codes: 0 no work left; 1 an error retrying cannot fix (see the
// message); 2 bad flags; 3 the rule database stayed unreachable.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "app/startup.h"
#include "net/metrics.h"
#include "net/metrics_flags.h"
#include "net/security_flags.h"
#include "core/graph_proto.h"
#include "core/rule_sexpr.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "verifier/axiom_redundancy.h"
#include "verifier/axiom_validation.h"
#include "verifier/axiom_validation_report.h"
#include "verifier/axioms.h"
#include "verifier/prover.h"
#include "verifier/worker.h"

ABSL_FLAG(std::string, store, "", "rule database (taso_rules_db) address, or every store shard's, comma-separated, in any order");
ABSL_FLAG(std::string, job, "", "verify this job only; empty: whichever job has work");
ABSL_FLAG(int32_t, threads, 1, "prover threads, each holding its own lease");
ABSL_FLAG(std::string, worker_id, "", "name in leases and provenance; default host:pid");
ABSL_FLAG(int64_t, lease_ms, 60000, "lease length; a class not reported within it goes to another worker");
ABSL_FLAG(int64_t, hand_back_ms, 0,
          "a thread still busy with its batch of leases after this long (a slow class) releases the leases it has "
          "not started, for other workers to take, rather than let them expire; 0: a third of --lease_ms");
ABSL_FLAG(int64_t, rlimit, 20000000, "Z3 resource limit per proof or validated axiom instance (deterministic; 0: none)");
ABSL_FLAG(int32_t, timeout_ms, 10000, "wall-clock limit per proof query");
ABSL_FLAG(int64_t, renew_prover_above_mib, static_cast<int64_t>(taso::verifier::ProverOptions().renew_above_mib),
          "start a thread's prover over with a fresh Z3 context once Z3 holds this many MiB in the process (0: never)");
ABSL_FLAG(int64_t, z3_memory_mib, -1,
          "cap on what Z3 may allocate in this process, over all --threads; a query that would pass it is a timeout "
          "(memout) and its prover starts over. -1: --threads x 2 x --renew_prover_above_mib; 0: no cap");
ABSL_FLAG(double, stall_s, absl::ToDoubleSeconds(taso::verifier::VerifierWorkerOptions().stall_after),
          "end the verifier (exit 75) when one Z3 query has run this long, past its own limits, which Z3 does not "
          "check everywhere: its leases expire and the classes go to another verifier; 0: never");
ABSL_FLAG(bool, wait, false, "keep polling for new jobs instead of exiting when no work is left");
ABSL_FLAG(int32_t, retry_seconds, 120, "keep retrying an unreachable rule database this long");
ABSL_FLAG(bool, quiet, false, "do not log expired leases to stderr");
ABSL_FLAG(int32_t, max_dim, 3, "axioms validate: largest tensor dimension tried (kernels also try 3)");
ABSL_FLAG(int64_t, max_instances_per_stratum, taso::verifier::ValidationOptions().max_instances_per_stratum,
          "axioms validate: instances checked per assignment of an axiom's integer parameters; 0: all");
ABSL_FLAG(bool, exhaustive, false, "axioms validate: every instance (as --max_instances_per_stratum 0)");
ABSL_FLAG(bool, json, false, "axioms validate: print the report as one JSON object");
ABSL_FLAG(bool, by_param, false, "axioms validate: also print each axiom's instances per parameter value");
ABSL_FLAG(std::vector<std::string>, only, {}, "axioms: only these axioms");
ABSL_FLAG(std::string, extra, "", "axioms validate, prove: file of extra axioms, one SMT-LIB2 assertion per line");
ABSL_FLAG(bool, mbqi, false, "prove: model-based quantifier instantiation as well as E-matching");
ABSL_FLAG(std::vector<std::string>, skip, {}, "prove: leave these axioms out");

namespace {

// The --extra file: one SMT-LIB2 assertion per line; blank lines and `;`
// comments skipped. False when it cannot be read.
bool ReadExtraAxioms(std::vector<std::string>& out) {
  const std::string path = absl::GetFlag(FLAGS_extra);
  if (path.empty()) return true;
  std::ifstream in(path);
  if (!in) {
    std::cerr << "error: cannot read " << path << "\n";
    return false;
  }
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] != ';') out.push_back(line);
  }
  return true;
}

// Proves each rule of a file in the export syntax and prints its outcome:
// how unproved candidates are classified (a bigger budget, MBQI, a lemma
// given as an --extra axiom, an axiom left out). Exit 0 when all are proved.
int ProveFile(const std::vector<char*>& args) {
  if (args.size() != 3) {
    std::cerr << "error: use `taso_verifier prove FILE`\n";
    return 2;
  }
  std::ifstream in(args[2]);
  if (!in) {
    std::cerr << "error: cannot read " << args[2] << "\n";
    return 2;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto rules = taso::RulesFromSexpr(text);
  if (!rules.ok()) {
    std::cerr << "error: " << args[2] << ": " << rules.status().message() << "\n";
    return 2;
  }
  taso::verifier::ProverOptions options;
  options.rlimit = static_cast<uint64_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_rlimit)));
  options.timeout_ms = static_cast<uint32_t>(std::max(0, absl::GetFlag(FLAGS_timeout_ms)));
  options.mbqi = absl::GetFlag(FLAGS_mbqi);
  for (const std::string& a : absl::GetFlag(FLAGS_skip)) options.skip_axioms.insert(a);
  if (!ReadExtraAxioms(options.extra_axioms_smt2)) return 2;
  auto prover = taso::verifier::Prover::Create(options);
  if (!prover.ok()) {
    std::cerr << "error: " << prover.status().message() << "\n";
    return 2;
  }
  std::map<std::string, int> counts;
  for (size_t i = 0; i < rules->size(); ++i) {
    const taso::rules::Rule& rule = (*rules)[i];
    auto source = taso::GraphFromProto(rule.source());
    auto target = taso::GraphFromProto(rule.target());
    std::vector<std::pair<int, int>> outputs;
    for (const auto& p : rule.outputs()) outputs.emplace_back(p.source_output(), p.target_output());
    absl::StatusOr<taso::verifier::ProofResult> r =
        !source.ok() ? source.status() : !target.ok() ? target.status() : (*prover)->Prove(*source, *target, outputs);
    std::string outcome = "error", detail;
    if (!r.ok()) {
      detail = std::string(r.status().message());
    } else {
      outcome = taso::verifier::ProofOutcomeName(r->outcome);
      detail = r->outcome == taso::verifier::ProofOutcome::kProved ? absl::StrJoin(r->axioms_used, ",") : r->detail;
    }
    ++counts[outcome];
    std::printf("%zu %s %.2fs %s\n", i + 1, outcome.c_str(), r.ok() ? r->seconds : 0.0, detail.c_str());
    std::fflush(stdout);  // long runs (MBQI) show progress
  }
  std::vector<std::string> parts;
  for (const auto& [k, v] : counts) parts.push_back(absl::StrCat(v, " ", k));
  std::printf("%zu rules: %s\n", rules->size(), absl::StrJoin(parts, ", ").c_str());
  return counts["proved"] == static_cast<int>(rules->size()) ? 0 : 1;
}

int Axioms(const std::vector<char*>& args) {
  const std::string what = args.size() > 2 ? args[2] : "";
  if (what == "list") {
    for (const auto& a : taso::verifier::AxiomList()) std::printf("%-32s %s\n", a.name.c_str(), a.description.c_str());
    std::printf("%zu axioms, version %s\n", taso::verifier::AxiomList().size(),
                taso::verifier::AxiomSetVersion().c_str());
    return 0;
  }
  const auto only_list = absl::GetFlag(FLAGS_only);
  const std::set<std::string> only(only_list.begin(), only_list.end());
  if (what == "validate") {
    taso::verifier::ValidationOptions options;
    options.max_dim = absl::GetFlag(FLAGS_max_dim);
    options.threads = absl::GetFlag(FLAGS_threads);
    options.rlimit = static_cast<uint64_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_rlimit)));
    options.max_instances_per_stratum =
        absl::GetFlag(FLAGS_exhaustive) ? 0 : absl::GetFlag(FLAGS_max_instances_per_stratum);
    options.only = only;
    if (options.max_dim < 1 || options.max_dim > 4) {
      std::cerr << "error: --max_dim must be in 1..4\n";
      return 2;
    }
    if (options.max_instances_per_stratum < 0) {
      std::cerr << "error: --max_instances_per_stratum must be 0 (all) or positive\n";
      return 2;
    }
    if (!ReadExtraAxioms(options.extra_axioms_smt2)) return 2;
    options.progress = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
    const auto start = std::chrono::steady_clock::now();
    auto results = taso::verifier::ValidateAxioms(options);
    if (!results.ok()) {
      std::cerr << "taso_verifier: error: " << results.status().message() << "\n";
      return 2;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (absl::GetFlag(FLAGS_json)) {
      std::fputs(taso::verifier::ValidationJson(*results, options, wall).c_str(), stdout);
    } else {
      std::fputs(taso::verifier::ValidationTable(*results, absl::GetFlag(FLAGS_by_param)).c_str(), stdout);
      std::printf("max_dim %d, %s per stratum, %d thread(s): %.1f s wall\n", options.max_dim,
                  options.max_instances_per_stratum == 0
                      ? "every instance"
                      : absl::StrCat("at most ", options.max_instances_per_stratum, " instances").c_str(),
                  options.threads, wall);
    }
    const bool failed = std::any_of(results->begin(), results->end(), [](const auto& r) { return r.failed > 0; });
    return failed ? 1 : 0;
  }
  if (what == "redundancy") {
    taso::verifier::RedundancyOptions options;
    options.rlimit = static_cast<uint64_t>(std::max<int64_t>(1, absl::GetFlag(FLAGS_rlimit)));
    options.only = only;
    auto results = taso::verifier::FindRedundantAxioms(options);
    if (!results.ok()) {
      std::cerr << "taso_verifier: error: " << results.status().message() << "\n";
      return 1;
    }
    int entailed = 0;
    for (const auto& r : *results) {
      if (r.entailed) {
        ++entailed;
        std::printf("%-32s entailed by %s\n", r.name.c_str(), absl::StrJoin(r.by, ", ").c_str());
      } else {
        std::printf("%-32s %s\n", r.name.c_str(), r.detail.c_str());
      }
    }
    std::printf("%d of %zu axioms are entailed by the others\n", entailed, results->size());
    return 0;
  }
  std::cerr << "error: use `taso_verifier axioms list|validate|redundancy`\n";
  return 2;
}

// Whether a prover per thread starts under the Z3 memory cap just set: a
// thread left without room would wait at every pair and then store it as a
// timeout.
absl::Status MemoryCapLeavesRoom(const taso::verifier::ProverOptions& options, int threads, int64_t cap_mib) {
  {
    std::vector<std::unique_ptr<taso::verifier::Prover>> provers;
    while (static_cast<int>(provers.size()) < threads) {
      auto prover = taso::verifier::Prover::Create(options);
      if (!prover.ok()) break;
      provers.push_back(std::move(*prover));
    }
    if (static_cast<int>(provers.size()) == threads) return absl::OkStatus();
  }
  // Its size, from the first prover this process made (one without a cap, if none fitted under it).
  taso::verifier::SetSolverMemoryLimitMib(0);
  if (taso::verifier::SolverContextMib() == 0) (void)taso::verifier::Prover::Create(options);
  const double context_mib = taso::verifier::SolverContextMib();
  return absl::InvalidArgumentError(absl::StrFormat(
      "--z3_memory_mib %d leaves Z3 no room for %d prover(s) (a context with the axioms takes about %.0f MiB here, "
      "and each of --threads holds one, growing with its queries): raise it, or 0 for no cap",
      cap_mib, threads, std::max(1.0, context_mib)));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args = taso::app::ParseCommandLine(
      {"taso_verifier",
       "proves candidate rules with Z3\n"
       "  taso_verifier --store HOST:PORT[,HOST:PORT...] [--threads N] [--job ID]\n"
       "  taso_verifier axioms list | validate [--max_dim D] [--max_instances_per_stratum N | --exhaustive]\n"
       "                [--only A,B] [--extra FILE] [--json] [--by_param] | redundancy\n"
       "  taso_verifier prove FILE [--rlimit N] [--mbqi] [--extra FILE] [--skip A,B]"},
      argc, argv);
  if (absl::Status s = taso::net::ConfigureClientsFromFlags(); !s.ok()) return taso::app::Error(s.message(), 2);
  if (args.size() > 1 && std::string(args[1]) == "axioms") return Axioms(args);
  if (args.size() > 1 && std::string(args[1]) == "prove") return ProveFile(args);
  if (taso::app::TooManyArguments(args)) return 2;
  taso::verifier::VerifierWorkerOptions options;
  options.store = absl::GetFlag(FLAGS_store);
  options.job_id = absl::GetFlag(FLAGS_job);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.lease_ms = absl::GetFlag(FLAGS_lease_ms);
  options.hand_back_after = absl::Milliseconds(std::max<int64_t>(0, absl::GetFlag(FLAGS_hand_back_ms)));
  options.prover.rlimit = static_cast<uint64_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_rlimit)));
  options.prover.timeout_ms = static_cast<uint32_t>(std::max(0, absl::GetFlag(FLAGS_timeout_ms)));
  options.prover.renew_above_mib =
      static_cast<uint64_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_renew_prover_above_mib)));
  // The default leaves each thread room for two contexts at the renewal
  // bound, and never less than kMinimumDefaultCapMib (a tiny bound renews
  // after every query; the cap is not meant to follow it down).
  constexpr int64_t kMinimumDefaultCapMib = 256;
  const int64_t memory_cap =
      absl::GetFlag(FLAGS_z3_memory_mib) >= 0
          ? absl::GetFlag(FLAGS_z3_memory_mib)
          : options.prover.renew_above_mib == 0
                ? 0
                : std::max(kMinimumDefaultCapMib, int64_t{2} * std::max(1, options.threads) *
                                                      static_cast<int64_t>(options.prover.renew_above_mib));
  taso::verifier::SetSolverMemoryLimitMib(static_cast<uint64_t>(memory_cap));
  options.exit_when_done = !absl::GetFlag(FLAGS_wait);
  options.retry_for = absl::Seconds(absl::GetFlag(FLAGS_retry_seconds));
  options.worker_id = absl::GetFlag(FLAGS_worker_id);
  if (options.worker_id.empty()) {
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    options.worker_id = absl::StrCat(host, ":", getpid());
  }
  if (options.store.empty()) {
    std::cerr << "error: --store is required (try --help)\n";
    return 2;
  }
  if (options.threads < 1 || options.threads > 256) {
    std::cerr << "error: --threads must be in 1..256\n";
    return 2;
  }
  if (options.lease_ms < 1000) {
    std::cerr << "error: --lease_ms must be at least 1000\n";
    return 2;
  }
  if (absl::GetFlag(FLAGS_stall_s) < 0) {
    std::cerr << "error: --stall_s must be 0 (no watchdog) or more\n";
    return 2;
  }
  options.stall_after = absl::Seconds(absl::GetFlag(FLAGS_stall_s));
  if (memory_cap > 0) {
    if (absl::Status room = MemoryCapLeavesRoom(options.prover, options.threads, memory_cap); !room.ok()) {
      return taso::app::Error(room.message(), 2);
    }
  }
  if (!absl::GetFlag(FLAGS_quiet)) options.log = taso::app::StderrLog("taso_verifier");
  // SIGTERM (a rollout, a scale-down): finish the classes being proved and
  // exit 0 rather than strand them until their leases expire.
  taso::app::CatchInterrupts();
  options.stop = taso::app::Interrupted;
  taso::verifier::VerifierCounters counters;
  taso::net::MetricsRegistry metrics;
  using C = taso::verifier::VerifierCounters;
  for (auto [name, help, field] : std::vector<std::tuple<const char*, const char*, std::atomic<int64_t> C::*>>{
           {"taso_verifier_classes_total", "Candidate classes leased and checked", &C::classes},
           {"taso_verifier_proved_total", "Rules proved", &C::proved},
           {"taso_verifier_refuted_total", "Candidate rules refuted", &C::refuted},
           {"taso_verifier_timeout_total", "Proofs that ran out of time or resources", &C::timeout},
           {"taso_verifier_unknown_total", "Proofs the solver could not decide", &C::unknown},
           {"taso_verifier_rejected_precheck_total", "Candidates rejected by the numeric re-check", &C::rejected_precheck},
           {"taso_verifier_errors_total", "Classes that failed with an error", &C::errors},
           {"taso_verifier_prover_renewals_total", "Fresh Z3 contexts started to give back memory", &C::prover_renewals},
       }) {
    metrics.AddCallback(name, help, taso::net::MetricType::kCounter,
                        [&counters, field = field] { return static_cast<double>((counters.*field).load()); });
  }
  auto metrics_server = taso::net::StartMetricsFromFlags(&metrics, "taso_verifier");
  if (!metrics_server.ok()) return taso::app::Error(metrics_server.status().message(), 2);
  absl::Status s = taso::verifier::RunVerifierWorker(options, counters);
  if (taso::app::Interrupted() && s.ok()) std::fprintf(stderr, "taso_verifier: stopped by a signal after reporting the classes in hand\n");
  std::fprintf(stderr,
               "taso_verifier: %lld classes; %lld proved, %lld refuted, %lld timeout, %lld unknown, "
               "%lld rejected by the re-check; %lld fresh solver contexts\n",
               (long long)counters.classes.load(), (long long)counters.proved.load(), (long long)counters.refuted.load(),
               (long long)counters.timeout.load(), (long long)counters.unknown.load(),
               (long long)counters.rejected_precheck.load(), (long long)counters.prover_renewals.load());
  return taso::app::WorkerExitCode("taso_verifier", s);
}
