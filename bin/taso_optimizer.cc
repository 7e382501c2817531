// taso_optimizer: ONNX model in, faster equivalent ONNX model out, over gRPC.
//   taso_optimizer [--listen HOST:PORT] [--rules FILE | --rules_db ADDR] [--profiler ADDR | --cache_dir DIR]
//                  [--ort_* (the embedded profiler's ort backend, profiler/ort/ort_flags.h)]
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "app/startup.h"
#include "core/scratch_dir.h"
#include "net/metrics_flags.h"
#include "net/security_flags.h"
#include "net/server.h"
#include "net/server_flags.h"
#include "optimizer/eqsat/eqsat.h"
#include "optimizer/optimize_front.h"
#include "optimizer/optimizer_service.h"
#include "optimizer/rule_source.h"
#include "optimizer/served_rules.h"
#include "profiler/open_client.h"
#include "profiler/ort/ort_flags.h"

namespace {
// The flags' defaults are the service's own (optimizer_service.h), so each is
// written once.
const taso::optimizer::OptionDefaults& Server() {
  static const taso::optimizer::OptionDefaults defaults = taso::optimizer::ServerOptionDefaults();
  return defaults;
}
}  // namespace

ABSL_FLAG(std::string, listen, "127.0.0.1:7073", "address to serve on; port 0 picks a free one");
ABSL_FLAG(std::string, port_file, "", "write the bound port to this file once serving");
ABSL_FLAG(std::string, rules, "", "rules file (`taso rules export --format proto -o FILE`); default: the proved "
          "size-3 set built in (or --rules_db); 'none': structural rewrites only");
ABSL_FLAG(std::string, rules_db, "",
          "taso_rules_db address (or every store shard's, comma-separated) to load proved rules from at start");
ABSL_FLAG(int32_t, rules_max_ops, 0, "only rules whose larger side has at most this many operators (0: all)");
ABSL_FLAG(int64_t, max_store_rules, 250'000, "--rules_db: the most proved rules loaded from the stores; past it the "
          "optimizer keeps the rules it has (the built-in set at start) until the job is pruned over its shards "
          "(`taso rules prune --store`; size 4: 2.8M proved, ~93k pruned)");
ABSL_FLAG(double, rules_refresh_s, 5, "with --rules_db: look at the stores' finished jobs at most this often (on a "
          "request) and read their rules again when one finished since");
ABSL_FLAG(std::string, profiler, "", "taso_profiler address; default: an embedded profiler on --cache_dir");
ABSL_FLAG(std::string, cache_dir, "", "embedded profiler: cost cache directory (default ~/.cache/taso/costs; 'none': memory only)");
ABSL_FLAG(std::string, search, Server().options.search() == taso::optimizer::SEARCH_EQSAT ? "eqsat" : "backtrack",
          "default search: backtrack or eqsat");
ABSL_FLAG(int64_t, max_model_mb, Server().max_model_bytes >> 20, "largest model accepted");
ABSL_FLAG(double, default_time_limit_s, Server().options.time_limit_s(), "search time when a request names none");
ABSL_FLAG(int32_t, max_concurrent, taso::optimizer::ServiceLimits().max_concurrent,
          "searches run at once (each takes a core for up to its time limit)");
ABSL_FLAG(int32_t, max_queued, taso::optimizer::ServiceLimits().max_queued,
          "calls that wait for a free search; beyond them a call is refused with RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, ilp_memory_mb, Server().ilp_memory_mb,
          "eqsat: memory the extraction ILP's child process may add (0: no cap); past it the greedy program is used");
ABSL_FLAG(int64_t, max_check_mb, Server().max_check_bytes >> 20,
          "largest total of a model's tensors (at its declared shapes) the numerical check may hold; larger models "
          "are refused (INVALID_ARGUMENT)");
ABSL_FLAG(double, max_check_gflop, Server().max_check_flops / 1e9,
          "most arithmetic, in GFLOP per model run at its declared shapes, the numerical check may do in the "
          "interpreter; larger models are refused (INVALID_ARGUMENT)");
ABSL_FLAG(double, max_time_limit_s, absl::ToDoubleSeconds(Server().max_time_limit),
          "longest search a request may ask for");
ABSL_FLAG(bool, eqsat_backoff, taso::optimizer::EqsatOptions().backoff_scheduler,
          "eqsat default: ban rules that match more than their limit in a round (requests may override)");
ABSL_FLAG(int32_t, eqsat_match_limit, taso::optimizer::EqsatOptions().max_matches_per_rule,
          "eqsat default: matches a rule may have in a round before its first ban or cut");
ABSL_FLAG(int32_t, eqsat_ban_length, taso::optimizer::EqsatOptions().backoff_ban_length,
          "eqsat default: rounds of a rule's first ban");
ABSL_FLAG(std::string, calibration, "", "embedded profiler: the cpu cost model's calibration JSON (default: the "
          "one compiled in; 'none': plain sums of kernel times)");
ABSL_FLAG(bool, measure, Server().measure, "never slower: time the result against the input's runtime baseline end to end "
          "where the profiler's backend can (cpu) and return the input if the result is slower; requests may skip it");
ABSL_FLAG(double, measure_tolerance, Server().measure_tolerance, "never slower, with a minimum gain of 0: keep the result unless measured "
          "slower than the baseline by more than this fraction");
ABSL_FLAG(double, min_gain, Server().options.min_gain(),
          "a result predicted, or measured by the never-slower step, faster than the runtime baseline by less than "
          "this fraction comes back as the input, byte for byte (requests may set their own)");

int main(int argc, char** argv) {
  taso::net::BlockTerminationSignals();
  std::vector<char*> args = taso::app::ParseCommandLine(
      {"taso_optimizer",
       "optimizes ONNX models with verified rewrites (gRPC Optimizer service)\n"
       "  taso_optimizer [--listen HOST:PORT] [--rules FILE | --rules_db ADDR] [--profiler ADDR]"},
      argc, argv);
  if (absl::Status s = taso::net::ConfigureClientsFromFlags(); !s.ok()) return taso::app::Error(s.message(), 2);
  if (taso::app::TooManyArguments(args)) return 2;
  const std::string search = absl::GetFlag(FLAGS_search);
  if (search != "backtrack" && search != "eqsat") {
    std::cerr << "error: --search must be backtrack or eqsat\n";
    return 2;
  }
  const std::string rules_file = absl::GetFlag(FLAGS_rules), rules_db = absl::GetFlag(FLAGS_rules_db);
  if (!rules_file.empty() && !rules_db.empty()) return taso::app::Error("give --rules or --rules_db, not both", 2);
  std::unique_ptr<taso::optimizer::ServedRules> rules;
  if (!rules_db.empty()) {
    auto served = taso::optimizer::ServedRules::FromStores(
        taso::optimizer::StoreRulesReader(rules_db, absl::GetFlag(FLAGS_rules_max_ops),
                                          absl::GetFlag(FLAGS_max_store_rules)),
        absl::Seconds(absl::GetFlag(FLAGS_rules_refresh_s)), taso::app::StderrLog("taso_optimizer"));
    if (!served.ok()) {
      return taso::app::Error(served.status().message(),
                              served.status().code() == absl::StatusCode::kUnavailable ? 3 : 1);
    }
    rules = std::move(*served);
  } else {
    auto loaded = taso::optimizer::LoadRules(rules_file, "", absl::GetFlag(FLAGS_rules_max_ops));
    if (!loaded.ok()) return taso::app::Error(loaded.status().message(), 1);
    if (std::string warning = taso::optimizer::UnusableRulesWarning(*loaded); !warning.empty()) {
      std::cerr << "taso_optimizer: warning: " << warning << "\n";
    }
    std::cerr << "taso_optimizer: rules: " << taso::optimizer::DescribeRules(loaded->provenance) << "\n";
    rules = std::make_unique<taso::optimizer::ServedRules>(std::move(*loaded));
  }
  taso::profiler::ProfilerOptions embedded;
  embedded.cache_dir = taso::profiler::CacheDirFromFlag(absl::GetFlag(FLAGS_cache_dir));
  embedded.cpu.calibration = absl::GetFlag(FLAGS_calibration);
  auto ort = taso::profiler::OrtBackendOptionsFromFlags();
  if (!ort.ok()) {
    std::cerr << "taso_optimizer: " << ort.status().message() << "\n";
    return 2;
  }
  embedded.ort = *ort;
  auto opened = taso::profiler::OpenProfiler(absl::GetFlag(FLAGS_profiler), embedded);
  // A profiler server that does not answer is unreachable (3); an embedded one that cannot start, an error.
  if (!opened.ok()) return taso::app::Error(opened.status().message(), absl::GetFlag(FLAGS_profiler).empty() ? 1 : 3);
  std::unique_ptr<taso::profiler::ProfilerClient> profiler = std::move(*opened);
  taso::optimizer::ServiceLimits limits;
  limits.max_concurrent = absl::GetFlag(FLAGS_max_concurrent);
  limits.max_queued = absl::GetFlag(FLAGS_max_queued);
  if (limits.max_concurrent < 1 || limits.max_queued < 0) {
    return taso::app::Error("--max_concurrent must be >= 1 and --max_queued >= 0", 2);
  }
  taso::optimizer::OptionDefaults& defaults = limits.defaults;
  if (absl::GetFlag(FLAGS_max_model_mb) < 1 || absl::GetFlag(FLAGS_max_model_mb) > 2000) {
    return taso::app::Error("--max_model_mb must be 1 to 2000: a gRPC message stops below 2 GiB (larger models: "
                            "taso optimize embedded, which reads external data)", 2);
  }
  defaults.max_model_bytes = absl::GetFlag(FLAGS_max_model_mb) << 20;
  defaults.max_time_limit = absl::Seconds(absl::GetFlag(FLAGS_max_time_limit_s));
  defaults.measure = absl::GetFlag(FLAGS_measure);
  defaults.ilp_memory_mb = absl::GetFlag(FLAGS_ilp_memory_mb);
  defaults.max_check_bytes = absl::GetFlag(FLAGS_max_check_mb) << 20;
  auto max_check_flops = taso::optimizer::MaxCheckFlopsFromGflop(absl::GetFlag(FLAGS_max_check_gflop),
                                                                        "--max_check_gflop");
  if (!max_check_flops.ok()) return taso::app::Error(max_check_flops.status().message(), 2);
  defaults.max_check_flops = *max_check_flops;
  defaults.measure_tolerance = absl::GetFlag(FLAGS_measure_tolerance);
  if (!(defaults.measure_tolerance >= 0)) return taso::app::Error("--measure_tolerance must be >= 0", 2);
  // What a request leaves unset: the same fields it would set.
  taso::optimizer::OptimizeOptions& unset = defaults.options;
  unset.set_time_limit_s(absl::GetFlag(FLAGS_default_time_limit_s));
  unset.set_min_gain(absl::GetFlag(FLAGS_min_gain));
  if (!(unset.min_gain() >= 0 && unset.min_gain() < 1)) return taso::app::Error("--min_gain must be in [0, 1)", 2);
  unset.set_search(search == "eqsat" ? taso::optimizer::SEARCH_EQSAT : taso::optimizer::SEARCH_BACKTRACK);
  unset.set_eqsat_backoff(absl::GetFlag(FLAGS_eqsat_backoff) ? taso::optimizer::EQSAT_BACKOFF_ON
                                                             : taso::optimizer::EQSAT_BACKOFF_OFF);
  unset.set_eqsat_match_limit(absl::GetFlag(FLAGS_eqsat_match_limit));
  unset.set_eqsat_ban_length(absl::GetFlag(FLAGS_eqsat_ban_length));
  if (unset.eqsat_match_limit() <= 0 || unset.eqsat_ban_length() <= 0) {
    return taso::app::Error("--eqsat_match_limit and --eqsat_ban_length must be > 0", 2);
  }
  std::cerr << "taso_optimizer: " << rules->Current()->rewrites.size() << " rewrites; costs from "
            << profiler->Describe() << "\n";
  taso::optimizer::OptimizerService service(rules.get(), profiler.get(), limits);
  taso::net::MetricsRegistry metrics;
  service.AttachMetrics(&metrics);
  taso::net::ServerOptions server_options;
  server_options.listen = absl::GetFlag(FLAGS_listen);
  server_options.port_file = absl::GetFlag(FLAGS_port_file);
  server_options.max_message_mb = static_cast<int>(absl::GetFlag(FLAGS_max_model_mb) + 16);
  server_options.name = "taso_optimizer";
  server_options.security = taso::net::ServerSecurityFromFlags();
  server_options.security.make_private_dir = &taso::MakePrivateTempDir;  // a killed server's key copies go too
  server_options.metrics = &metrics;
  taso::net::ApplyMetricsFlags(&server_options);
  taso::net::ApplyServerFlags(&server_options);
  // A search in flight may take its whole limit, then the check and the
  // never-slower measurement; a Kubernetes grace period covers this
  // (deploy/k8s: terminationGracePeriodSeconds).
  server_options.drain_seconds = static_cast<int>(absl::GetFlag(FLAGS_max_time_limit_s)) + 30;
  // Optimize is admitted before its request is read (optimizer/optimize_front.h).
  taso::optimizer::OptimizeFront front(&service, server_options.max_threads);
  server_options.generic_service = &front;
  absl::Status s = taso::net::RunServer(server_options, {front.described_service()});
  return s.ok() ? 0 : taso::app::Error(s.message(), 1);
}
