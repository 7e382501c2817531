// Load on one taso_optimizer: N concurrent clients send Optimize calls of a
// mix of models for a fixed time and the figures a service owner asks for
// come out: completed calls per second, latency p50/p99, errors by code and
// the server's peak resident memory (VmHWM of --server_pid).
//
//   optimize_load --server HOST:PORT --models A.onnx,B.onnx,... [--concurrency 4]
//                 [--seconds 60] [--time_limit_s 2] [--search backtrack|eqsat|mixed]
//                 [--backend cpu|analytic] [--server_pid PID] [--json]
//
// bench/load_run.sh starts the server and this client together.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/proc_status.h"
#include "grpcpp/grpcpp.h"
#include "proto/optimizer.grpc.pb.h"

ABSL_FLAG(std::string, server, "", "taso_optimizer address");
ABSL_FLAG(std::string, models, "", "comma-separated ONNX files, sent in turn");
ABSL_FLAG(int, concurrency, 4, "clients calling at once");
ABSL_FLAG(double, seconds, 60, "how long new calls are started");
ABSL_FLAG(double, time_limit_s, 2, "each call's search time limit");
ABSL_FLAG(std::string, search, "mixed", "backtrack, eqsat, or mixed (alternating)");
ABSL_FLAG(std::string, backend, "", "cost backend of each call: cpu or analytic (default: the server's best)");
ABSL_FLAG(int, server_pid, 0, "the server's pid, for its peak RSS (0: not reported)");
ABSL_FLAG(bool, json, false, "one JSON object instead of the table");

namespace {

struct Call {
  double seconds;
  grpc::StatusCode code;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

// The flags, checked, and the models' bytes.
struct LoadConfig {
  std::string server;
  std::vector<std::string> paths;
  std::vector<std::string> models;  // each path's bytes
  std::string search;               // backtrack, eqsat or mixed
  taso::profiler::Backend backend = taso::profiler::BACKEND_UNSPECIFIED;
  int concurrency = 0;
  double seconds = 0;
  double time_limit_s = 0;
  int server_pid = 0;
  bool json = false;
};

absl::StatusOr<std::vector<std::string>> ReadModels(const std::vector<std::string>& paths) {
  std::vector<std::string> models;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
    std::stringstream bytes;
    bytes << in.rdbuf();
    models.push_back(bytes.str());
  }
  return models;
}

// Bad flags or an unreadable model: the message for the usage error (exit 2).
absl::StatusOr<LoadConfig> ConfigFromFlags() {
  LoadConfig config;
  config.server = absl::GetFlag(FLAGS_server);
  config.paths = absl::StrSplit(absl::GetFlag(FLAGS_models), ',', absl::SkipEmpty());
  config.search = absl::GetFlag(FLAGS_search);
  config.concurrency = absl::GetFlag(FLAGS_concurrency);
  if (config.server.empty() || config.paths.empty() || config.concurrency < 1 ||
      (config.search != "backtrack" && config.search != "eqsat" && config.search != "mixed")) {
    return absl::InvalidArgumentError(
        "--server and --models are required; --concurrency >= 1; --search backtrack|eqsat|mixed");
  }
  const std::string backend = absl::GetFlag(FLAGS_backend);
  if (!backend.empty() && backend != "cpu" && backend != "analytic") {
    return absl::InvalidArgumentError("--backend must be cpu or analytic");
  }
  config.backend = backend == "cpu"        ? taso::profiler::BACKEND_CPU
                   : backend == "analytic" ? taso::profiler::BACKEND_ANALYTIC
                                           : taso::profiler::BACKEND_UNSPECIFIED;
  auto models = ReadModels(config.paths);
  if (!models.ok()) return models.status();
  config.models = *std::move(models);
  config.seconds = absl::GetFlag(FLAGS_seconds);
  config.time_limit_s = absl::GetFlag(FLAGS_time_limit_s);
  config.server_pid = absl::GetFlag(FLAGS_server_pid);
  config.json = absl::GetFlag(FLAGS_json);
  return config;
}

// A stub on a channel that connected within 10 s; models are large, hence
// the 1 GiB message limits.
absl::StatusOr<std::unique_ptr<taso::optimizer::Optimizer::Stub>> Connect(const std::string& server) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(1 << 30);
  args.SetMaxSendMessageSize(1 << 30);
  auto channel = grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), args);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    return absl::UnavailableError(absl::StrCat(server, " is unreachable"));
  }
  return taso::optimizer::Optimizer::NewStub(channel);
}

// The n-th call of the run: the models in turn; --search mixed alternates
// backtracking and eqsat with each pass over the models.
taso::optimizer::OptimizeRequest NthRequest(const LoadConfig& config, size_t n) {
  taso::optimizer::OptimizeRequest request;
  request.set_model(config.models[n % config.models.size()]);
  request.set_model_name(config.paths[n % config.paths.size()]);
  const bool eqsat = config.search == "eqsat" || (config.search == "mixed" && (n / config.models.size()) % 2 == 1);
  request.mutable_options()->set_search(eqsat ? taso::optimizer::SEARCH_EQSAT : taso::optimizer::SEARCH_BACKTRACK);
  request.mutable_options()->set_time_limit_s(config.time_limit_s);
  request.mutable_options()->set_cost_backend(config.backend);
  return request;
}

// What the clients saw, and the server's RSS sampled during the run.
struct LoadRun {
  std::vector<Call> calls;
  std::map<std::string, int> error_messages;  // first 200 characters, counted
  std::vector<int64_t> rss_kib;               // once a second
  double wall = 0;                            // seconds, until the last call returned
};

// `concurrency` clients call until --seconds have passed (calls under way
// finish); meanwhile the server's RSS is sampled once a second, since
// bounded memory shows as RSS levelling off.
LoadRun RunLoad(const LoadConfig& config, taso::optimizer::Optimizer::Stub& stub) {
  LoadRun run;
  const auto start = std::chrono::steady_clock::now();
  const auto stop_issuing = start + std::chrono::milliseconds(static_cast<int64_t>(config.seconds * 1000));
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::thread> clients;
  for (int c = 0; c < config.concurrency; ++c) {
    clients.emplace_back([&] {
      while (std::chrono::steady_clock::now() < stop_issuing) {
        const taso::optimizer::OptimizeRequest request = NthRequest(config, next++);
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::seconds(static_cast<int64_t>(config.time_limit_s * 3) + 120));
        taso::optimizer::OptimizeResponse response;
        const auto t0 = std::chrono::steady_clock::now();
        grpc::Status status = stub.Optimize(&context, request, &response);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::lock_guard<std::mutex> lock(mu);
        run.calls.push_back({seconds, status.error_code()});
        if (!status.ok()) ++run.error_messages[status.error_message().substr(0, 200)];
      }
    });
  }
  std::atomic<bool> done{false};
  std::thread sampler([&] {
    while (config.server_pid > 0 && !done.load()) {
      run.rss_kib.push_back(taso::ProcStatusKib(config.server_pid, "VmRSS"));
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });
  for (auto& t : clients) t.join();
  done = true;
  sampler.join();
  run.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

// Prints the figures (table or JSON) to stdout and the errors, by code and
// by message, to stderr. Returns the number of failed calls.
int Report(const LoadConfig& config, const LoadRun& run) {
  // RSS a quarter of the way in, beside the end: bounded means they agree.
  const int64_t quarter_kib = run.rss_kib.empty() ? -1 : run.rss_kib[run.rss_kib.size() / 4];
  std::vector<double> ok_latency;
  std::map<int, int> errors_by_code;
  for (const Call& call : run.calls) {
    if (call.code == grpc::StatusCode::OK) {
      ok_latency.push_back(call.seconds);
    } else {
      ++errors_by_code[call.code];
    }
  }
  const int errors = static_cast<int>(run.calls.size() - ok_latency.size());
  const int pid = config.server_pid;
  const int64_t peak_kib = pid > 0 ? taso::ProcStatusKib(pid, "VmHWM") : -1;
  const int64_t now_kib = pid > 0 ? taso::ProcStatusKib(pid, "VmRSS") : -1;
  const double throughput = static_cast<double>(ok_latency.size()) / run.wall;
  const double p50 = Percentile(ok_latency, 0.5), p99 = Percentile(ok_latency, 0.99);
  const double max = ok_latency.empty() ? 0 : *std::max_element(ok_latency.begin(), ok_latency.end());
  if (config.json) {
    std::printf(
        "{\"concurrency\": %d, \"models\": %zu, \"search\": \"%s\", \"time_limit_s\": %g, \"wall_s\": %.1f, "
        "\"calls\": %zu, \"ok\": %zu, \"errors\": %d, \"calls_per_s\": %.3f, \"p50_s\": %.3f, \"p99_s\": %.3f, "
        "\"max_s\": %.3f, \"server_peak_rss_mib\": %.1f, \"server_rss_quarter_mib\": %.1f, \"server_rss_mib\": %.1f}\n",
        config.concurrency, config.models.size(), config.search.c_str(), config.time_limit_s, run.wall,
        run.calls.size(), ok_latency.size(), errors, throughput, p50, p99, max, peak_kib / 1024.0, quarter_kib / 1024.0,
        now_kib / 1024.0);
  } else {
    std::printf("%d clients, %zu models (%s), %.1f s: %zu calls, %zu ok, %d errors\n", config.concurrency,
                config.models.size(), config.search.c_str(), run.wall, run.calls.size(), ok_latency.size(), errors);
    std::printf("throughput %.2f calls/s; latency p50 %.2f s, p99 %.2f s, max %.2f s\n", throughput, p50, p99, max);
    if (peak_kib >= 0) {
      std::printf("server RSS: peak %.1f MiB; %.1f MiB a quarter of the way in, %.1f MiB at the end\n",
                  peak_kib / 1024.0, quarter_kib / 1024.0, now_kib / 1024.0);
    }
  }
  for (const auto& [code, count] : errors_by_code) std::fprintf(stderr, "errors with gRPC code %d: %d\n", code, count);
  for (const auto& [message, count] : run.error_messages) std::fprintf(stderr, "  %d x %s\n", count, message.c_str());
  return errors;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  auto config = ConfigFromFlags();
  if (!config.ok()) {
    std::cerr << "optimize_load: " << config.status().message() << "\n";
    return 2;
  }
  auto stub = Connect(config->server);
  if (!stub.ok()) {
    std::cerr << "optimize_load: " << stub.status().message() << "\n";
    return 3;
  }
  const LoadRun run = RunLoad(*config, **stub);
  return Report(*config, run) == 0 ? 0 : 1;
}
