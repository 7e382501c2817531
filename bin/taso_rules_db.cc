// taso_rules_db: the hash store and the rule database as one service.
//   taso_rules_db --db DIR [--listen HOST:PORT] [--port_file F] [--store_index I --store_count N]
//   taso_rules_db dump --db DIR --job ID     print a finished job's classes
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "app/startup.h"
#include "core/scratch_dir.h"
#include "generator/recheck.h"
#include "net/metrics_flags.h"
#include "net/security_flags.h"
#include "net/server.h"
#include "net/server_flags.h"
#include "optimizer/rewrite/rule_matches.h"
#include "records/encoding.h"
#include "records/spec.h"
#include "rules_db/hash_store.h"
#include "rules_db/hash_store_service.h"
#include "rules_db/rule_db_service.h"
#include "rules_db/rule_store.h"
#include "storage/database.h"
#include "verifier/candidate.h"
#include "verifier/precheck.h"
#include "verifier/prover.h"
#include "verifier/pruning.h"
#include "verifier/renaming_proof.h"

ABSL_FLAG(std::string, db, "", "database directory (created if missing)");
ABSL_FLAG(std::string, listen, "127.0.0.1:7070", "address to serve on; port 0 picks a free one");
ABSL_FLAG(std::string, port_file, "", "write the bound port to this file once serving");
ABSL_FLAG(int64_t, block_cache_mb, 64, "RocksDB block cache size (MiB)");
ABSL_FLAG(int64_t, write_buffer_mb, 64, "RocksDB memtable size (MiB); up to --max_write_buffers per column family");
ABSL_FLAG(int32_t, max_write_buffers, 3, "RocksDB memtables per column family");
ABSL_FLAG(bool, sync, false, "fsync the write-ahead log on every batch (survive power loss, not just crashes)");
ABSL_FLAG(int32_t, finalize_threads, 2, "threads re-checking candidate pairs when a job finishes");
ABSL_FLAG(bool, keep_graphs, false,
          "keep a job's enumerated graphs once its candidate classes are stored (nothing reads them; by default "
          "they are dropped, which frees most of the store's disk; a job finishing with no other job generating "
          "drops every job's)");
ABSL_FLAG(int32_t, store_index, -1,
          "this store's index among the store shards (0-based); fixed when the database is created, checked after");
ABSL_FLAG(int32_t, store_count, -1, "how many store shards the fingerprints are spread over (with --store_index)");
ABSL_FLAG(std::string, job, "", "dump: the job to print");
ABSL_FLAG(int32_t, check_threads, 2,
          "proofs the store runs at once to check what clients call proved (each PROVED verdict a verifier reports, "
          "PutRules): no proof is stored on trust");
ABSL_FLAG(int32_t, max_match_sites, taso::rules_db::RuleStoreOptions().max_match_sites,
          "MatchRules: most sites per rule a request may ask for (INVALID_ARGUMENT above)");
ABSL_FLAG(int32_t, max_match_graph_nodes, taso::rules_db::RuleStoreOptions().max_match_graph_nodes,
          "MatchRules: largest graph a request may send, in nodes (INVALID_ARGUMENT above)");
ABSL_FLAG(double, match_time_limit_s, absl::ToDoubleSeconds(taso::rules_db::RuleStoreOptions().match_time_limit),
          "MatchRules: longest a request may match before it stops with RESOURCE_EXHAUSTED");
ABSL_FLAG(int32_t, finish_threads, taso::rules_db::RuleStoreOptions().finish_threads,
          "threads deriving the verdicts of the pairs not leased when a job's last class is verified");
ABSL_FLAG(int64_t, lease_ms, 60000, "how long a verifier holds a candidate class without reporting");
ABSL_FLAG(int32_t, max_lease_expiries, taso::rules_db::RuleStoreOptions().max_lease_expiries,
          "give a class up after its lease expired this many times without a report (verifiers died or stalled on "
          "it): its unreported pairs are stored TIMEOUT, so the job finishes; 0: lease it again forever");
ABSL_FLAG(int64_t, prune_max_rules, 250000, "largest job whose rules the store prunes itself, in memory (~11 KB per rule: 337k rules took it to 3.75 GiB); larger jobs are left to `taso rules prune`, which streams");
ABSL_FLAG(bool, prove_once_per_form, true,
          "lease one candidate pair per form (pairs equal up to renaming their variables) and derive the others' "
          "verdicts from its proof; false: every pair is leased and proved");
ABSL_FLAG(bool, prove_from_smaller, true,
          "with --prove_once_per_form, derive the verdicts of the pairs that follow from a smaller rule of the job "
          "(what pruning would drop as a common subgraph or supergraph) from its proof; false: lease and prove them");
ABSL_FLAG(bool, op_index, true, "index rules stored before the operator index existed, in the background from start "
          "(resumes where it stopped); false: operator queries and MatchRules scan every rule until it is built");

namespace {

// The store's own check of every rule a client calls proved (PutRules, and
// each PROVED verdict a verifier reports): the numeric pre-check and the
// claimed proof checked with its own axioms, else the proof `taso rules
// import` runs, with the verifier's default limits. Provers are
// made on first use (a store nobody reports to needs none) up to `max`, one
// per concurrent check, since a prover is not thread-safe.
class StoreRuleChecker {
 public:
  explicit StoreRuleChecker(int max) : max_(std::max(1, max)) {}

  absl::Status Check(taso::rules::Rule& rule) {
    auto prover = Acquire();
    if (!prover.ok()) return prover.status();
    absl::Status s = taso::verifier::VerifyClaim(**prover, taso::verifier::SolverName(), rule);
    Release(std::move(*prover));
    return s;
  }

 private:
  absl::StatusOr<std::unique_ptr<taso::verifier::Prover>> Acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    free_cv_.wait(lock, [this] { return !free_.empty() || made_ < max_; });
    if (!free_.empty()) {
      auto prover = std::move(free_.back());
      free_.pop_back();
      return prover;
    }
    ++made_;
    lock.unlock();
    auto prover = taso::verifier::Prover::Create();
    if (!prover.ok()) {
      std::lock_guard<std::mutex> relock(mu_);
      --made_;
      free_cv_.notify_one();
    }
    return prover;
  }

  void Release(std::unique_ptr<taso::verifier::Prover> prover) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(prover));
    free_cv_.notify_one();
  }

  const int max_;
  std::mutex mu_;
  std::condition_variable free_cv_;
  std::vector<std::unique_ptr<taso::verifier::Prover>> free_;
  int made_ = 0;  // provers in existence, free or checking
};

int Dump(taso::rules_db::GraphHashStore& store) {
  const std::string job_id = absl::GetFlag(FLAGS_job);
  auto job = store.GetJob(job_id);
  if (!job.ok()) {
    std::cerr << "error: " << job.status().message() << "\n";
    return 1;
  }
  auto spec = taso::records::SpecFromProto(job->spec());
  if (!spec.ok()) {
    std::cerr << "error: " << spec.status().message() << "\n";
    return 1;
  }
  taso::rules_db::ListCandidateClassesRequest request;
  request.set_job_id(job_id);
  request.set_page_size(1000);
  while (true) {
    auto page = store.ListCandidateClasses(request);
    if (!page.ok()) {
      std::cerr << "error: " << page.status().message() << "\n";
      return 1;
    }
    for (const auto& c : page->classes()) {
      for (const auto& p : c.pairs()) {
        std::cout << absl::BytesToHexString(c.fingerprint()) << (p.rejected() ? " rejected " : " pair ")
                  << taso::records::DescribeEncoding(*spec, c.members(p.source_member()).canonical())
                  << " == "
                  << taso::records::DescribeEncoding(*spec, c.members(p.target_member()).canonical())
                  << (p.rejected() ? "  # " + p.reason() : "") << "\n";
      }
    }
    if (page->next_page_token().empty()) break;
    request.set_page_token(page->next_page_token());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  taso::net::BlockTerminationSignals();
  std::vector<char*> args = taso::app::ParseCommandLine(
      {"taso_rules_db",
       "the TASO hash store and rule database (gRPC HashStore and RuleDb)\n"
       "  taso_rules_db --db DIR [--listen HOST:PORT]\n"
       "  taso_rules_db dump --db DIR --job ID"},
      argc, argv);
  bool dump = args.size() > 1 && std::string(args[1]) == "dump";
  if (args.size() > 1 && !dump) {
    std::cerr << "error: unknown command '" << args[1] << "' (try --help)\n";
    return 2;
  }
  // A generating job keeps its spool's 256 files open (rules_db/graph_spool.h),
  // beside RocksDB's: as many as the system allows for this user.
  if (rlimit files; getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &files);
  }
  taso::rules_db::HashStoreOptions options;
  options.path = absl::GetFlag(FLAGS_db);
  if (options.path.empty()) return taso::app::Error("--db DIR is required", 2);
  options.block_cache_mb = absl::GetFlag(FLAGS_block_cache_mb);
  options.write_buffer_mb = absl::GetFlag(FLAGS_write_buffer_mb);
  options.max_write_buffers = absl::GetFlag(FLAGS_max_write_buffers);
  options.sync_writes = absl::GetFlag(FLAGS_sync);
  options.finalize_threads = absl::GetFlag(FLAGS_finalize_threads);
  options.keep_graphs = absl::GetFlag(FLAGS_keep_graphs);
  options.class_checker = taso::generator::RecheckerFor;
  options.store_index = absl::GetFlag(FLAGS_store_index);
  options.store_count = absl::GetFlag(FLAGS_store_count);
  auto store = taso::rules_db::GraphHashStore::Open(options);
  if (!store.ok()) return taso::app::Error(store.status().message(), 1);
  if (dump) {
    (*store)->WaitForFinalization();
    return Dump(**store);
  }
  taso::rules_db::HashStoreService service(store->get());
  taso::net::MetricsRegistry metrics;
  service.AttachMetrics(&metrics);
  taso::rules_db::RuleStoreOptions rule_options;
  rule_options.default_lease_ms = absl::GetFlag(FLAGS_lease_ms);
  rule_options.prune_max_rules = absl::GetFlag(FLAGS_prune_max_rules);
  rule_options.finish_threads = absl::GetFlag(FLAGS_finish_threads);
  rule_options.max_match_sites = absl::GetFlag(FLAGS_max_match_sites);
  rule_options.max_match_graph_nodes = absl::GetFlag(FLAGS_max_match_graph_nodes);
  rule_options.match_time_limit = absl::Seconds(absl::GetFlag(FLAGS_match_time_limit_s));
  StoreRuleChecker checker(absl::GetFlag(FLAGS_check_threads));
  rule_options.checker = [&checker](taso::rules::Rule& rule) { return checker.Check(rule); };
  rule_options.pruner = taso::verifier::PruneRules;
  if (absl::GetFlag(FLAGS_prove_once_per_form)) rule_options.renaming_prover = taso::verifier::RenamingProverFor;
  rule_options.derive_from_smaller = absl::GetFlag(FLAGS_prove_from_smaller);
  rule_options.max_lease_expiries = std::max(0, absl::GetFlag(FLAGS_max_lease_expiries));
  rule_options.pair_rule = taso::verifier::RuleOfPair;
  rule_options.matcher = taso::optimizer::MatchProvedRules;
  rule_options.log = taso::app::StderrLog("taso_rules_db");
  taso::rules_db::RuleStore rule_store(store->get(), rule_options);
  if (absl::Status s = rule_store.ResumeFinishing(); !s.ok()) {
    rule_options.log(absl::StrCat("resuming the jobs left unfinished failed (a verifier's lease retries): ",
                                  s.message()));
  }
  taso::rules_db::RuleDbService rule_service(&rule_store);
  taso::net::ServerOptions server_options;
  server_options.listen = absl::GetFlag(FLAGS_listen);
  server_options.port_file = absl::GetFlag(FLAGS_port_file);
  server_options.name = "taso_rules_db";
  server_options.security = taso::net::ServerSecurityFromFlags();
  server_options.security.make_private_dir = &taso::MakePrivateTempDir;  // a killed server's key copies go too
  server_options.metrics = &metrics;
  taso::net::ApplyMetricsFlags(&server_options);
  taso::net::ApplyServerFlags(&server_options);
  // After a full disk the store serves reads but takes no writes until it is
  // restarted: a probe should see that (a liveness probe restarts it).
  server_options.health = [db = (*store)->database()] { return db->WriteHealth(); };
  // Rules stored before the operator index existed are indexed while the
  // store serves (queries scan until it is done); resumes after a restart.
  std::atomic<bool> stop_indexing{false};
  // One write per line (StderrLog): this thread logs while the server
  // announces its ports, and a script reads those lines back.
  std::thread indexing([&, log = taso::app::StderrLog("taso_rules_db")] {
    if (!absl::GetFlag(FLAGS_op_index)) return;
    const absl::Time start = absl::Now();
    if (absl::Status built = rule_store.BuildOpIndex(&stop_indexing); !built.ok()) {
      log(absl::StrCat("building the operator index failed (queries scan instead): ", built.message()));
    } else if (!stop_indexing) {
      log(absl::StrFormat("the operator index is ready (%.1f s)", absl::ToDoubleSeconds(absl::Now() - start)));
    }
  });
  absl::Status s = taso::net::RunServer(server_options, {&service, &rule_service});
  stop_indexing = true;
  indexing.join();
  return s.ok() ? 0 : taso::app::Error(s.message(), 1);
}
