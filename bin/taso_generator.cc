// taso_generator: one shard of a generation job, streaming into the store(s).
//   taso_generator --store HOST:PORT[,HOST:PORT...] --job ID --shard S --num_shards N
// The stores may be listed in any order: each is asked its index.
// Exit codes: 0 the shard is complete and stored; 1 an error retrying cannot
// fix (see the message); 2 bad flags; 3 the store stayed unreachable.
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "app/startup.h"
#include "net/metrics.h"
#include "net/metrics_flags.h"
#include "net/security_flags.h"
#include "generator/worker.h"

ABSL_FLAG(std::string, store, "", "hash store address(es), comma-separated, every store of the job in any order");
ABSL_FLAG(std::string, job, "", "generation job id (created with `taso generate` or CreateJob)");
ABSL_FLAG(int32_t, shard, 0, "this worker's shard, 0-based");
ABSL_FLAG(int32_t, num_shards, 1, "shards in the job");
ABSL_FLAG(int32_t, batch_records, 50000, "records per batch sent to the store");
ABSL_FLAG(int32_t, retry_seconds, 300, "keep retrying an unreachable store this long");
ABSL_FLAG(bool, quiet, false, "do not log retries and resumes to stderr");

int main(int argc, char** argv) {
  std::vector<char*> args = taso::app::ParseCommandLine(
      {"taso_generator",
       "one generator shard\n"
       "  taso_generator --store HOST:PORT --job ID --shard S --num_shards N"},
      argc, argv);
  if (absl::Status s = taso::net::ConfigureClientsFromFlags(); !s.ok()) return taso::app::Error(s.message(), 2);
  if (taso::app::TooManyArguments(args)) return 2;
  taso::generator::WorkerOptions options;
  for (absl::string_view a : absl::StrSplit(absl::GetFlag(FLAGS_store), ',', absl::SkipEmpty())) {
    options.stores.emplace_back(a);
  }
  options.job_id = absl::GetFlag(FLAGS_job);
  options.shard = absl::GetFlag(FLAGS_shard);
  options.num_shards = absl::GetFlag(FLAGS_num_shards);
  options.batch_records = absl::GetFlag(FLAGS_batch_records);
  options.retry_for = absl::Seconds(absl::GetFlag(FLAGS_retry_seconds));
  if (options.stores.empty() || options.job_id.empty()) {
    std::cerr << "error: --store and --job are required (try --help)\n";
    return 2;
  }
  if (options.num_shards < 1 || options.shard < 0 || options.shard >= options.num_shards) {
    std::cerr << "error: --shard must be in 0.." << options.num_shards - 1 << "\n";
    return 2;
  }
  if (options.batch_records < 1) {
    std::cerr << "error: --batch_records must be positive\n";
    return 2;
  }
  if (!absl::GetFlag(FLAGS_quiet)) options.log = taso::app::StderrLog("taso_generator");
  taso::generator::WorkerCounters counters;
  options.counters = &counters;
  taso::net::MetricsRegistry metrics;
  using C = taso::generator::WorkerCounters;
  auto exported = [&counters](auto C::*field) {
    return [&counters, field] { return static_cast<double>((counters.*field).load()); };
  };
  metrics.AddCallback("taso_generator_batches_sent_total", "Graph batches streamed to the stores",
                      taso::net::MetricType::kCounter, exported(&C::batches_sent));
  metrics.AddCallback("taso_generator_records_sent_total", "Graph records streamed to the stores",
                      taso::net::MetricType::kCounter, exported(&C::records_sent));
  metrics.AddCallback("taso_generator_attempts_total", "Connections to the stores (1 + resumes)",
                      taso::net::MetricType::kCounter, exported(&C::attempts));
  metrics.AddCallback("taso_generator_done_fraction", "Fraction of this shard enumerated",
                      taso::net::MetricType::kGauge, exported(&C::done_fraction));
  metrics.AddGauge("taso_generator_shard", "This worker's shard and the job's shard count", {"job", "num_shards"})
      .Set(options.shard, {options.job_id, absl::StrCat(options.num_shards)});
  auto metrics_server = taso::net::StartMetricsFromFlags(&metrics, "taso_generator");
  if (!metrics_server.ok()) return taso::app::Error(metrics_server.status().message(), 2);
  return taso::app::WorkerExitCode("taso_generator", taso::generator::RunWorker(options));
}
