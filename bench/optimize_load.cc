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
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
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

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string server = absl::GetFlag(FLAGS_server);
  std::vector<std::string> paths = absl::StrSplit(absl::GetFlag(FLAGS_models), ',', absl::SkipEmpty());
  const std::string search = absl::GetFlag(FLAGS_search);
  if (server.empty() || paths.empty() || absl::GetFlag(FLAGS_concurrency) < 1 ||
      (search != "backtrack" && search != "eqsat" && search != "mixed")) {
    std::cerr << "optimize_load: --server and --models are required; --concurrency >= 1; "
                 "--search backtrack|eqsat|mixed\n";
    return 2;
  }
  const std::string backend_name = absl::GetFlag(FLAGS_backend);
  if (!backend_name.empty() && backend_name != "cpu" && backend_name != "analytic") {
    std::cerr << "optimize_load: --backend must be cpu or analytic\n";
    return 2;
  }
  const taso::profiler::Backend backend = backend_name == "cpu"        ? taso::profiler::BACKEND_CPU
                                          : backend_name == "analytic" ? taso::profiler::BACKEND_ANALYTIC
                                                                       : taso::profiler::BACKEND_UNSPECIFIED;
  std::vector<std::string> models;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << "optimize_load: cannot read " << path << "\n";
      return 2;
    }
    std::stringstream bytes;
    bytes << in.rdbuf();
    models.push_back(bytes.str());
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(1 << 30);
  args.SetMaxSendMessageSize(1 << 30);
  auto channel = grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), args);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    std::cerr << "optimize_load: " << server << " is unreachable\n";
    return 3;
  }
  auto stub = taso::optimizer::Optimizer::NewStub(channel);

  const auto start = std::chrono::steady_clock::now();
  const auto stop_issuing = start + std::chrono::milliseconds(static_cast<int64_t>(absl::GetFlag(FLAGS_seconds) * 1000));
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<Call> calls;
  std::map<std::string, int> error_messages;
  std::vector<std::thread> clients;
  for (int c = 0; c < absl::GetFlag(FLAGS_concurrency); ++c) {
    clients.emplace_back([&] {
      while (std::chrono::steady_clock::now() < stop_issuing) {
        const size_t n = next++;
        taso::optimizer::OptimizeRequest request;
        request.set_model(models[n % models.size()]);
        request.set_model_name(paths[n % paths.size()]);
        const bool eqsat = search == "eqsat" || (search == "mixed" && (n / models.size()) % 2 == 1);
        request.mutable_options()->set_search(eqsat ? taso::optimizer::SEARCH_EQSAT : taso::optimizer::SEARCH_BACKTRACK);
        request.mutable_options()->set_time_limit_s(absl::GetFlag(FLAGS_time_limit_s));
        request.mutable_options()->set_cost_backend(backend);
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::seconds(static_cast<int64_t>(absl::GetFlag(FLAGS_time_limit_s) * 3) + 120));
        taso::optimizer::OptimizeResponse response;
        const auto t0 = std::chrono::steady_clock::now();
        grpc::Status status = stub->Optimize(&context, request, &response);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::lock_guard<std::mutex> lock(mu);
        calls.push_back({seconds, status.error_code()});
        if (!status.ok()) ++error_messages[status.error_message().substr(0, 200)];
      }
    });
  }
  // The server's RSS once a second: bounded means it levels off, so the
  // report gives it after the first quarter of the run beside the end.
  std::atomic<bool> done{false};
  std::vector<int64_t> rss_samples;
  std::thread sampler([&] {
    const int pid = absl::GetFlag(FLAGS_server_pid);
    while (pid > 0 && !done.load()) {
      rss_samples.push_back(taso::ProcStatusKib(pid, "VmRSS"));
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });
  for (auto& t : clients) t.join();
  done = true;
  sampler.join();
  const int64_t quarter_kib = rss_samples.empty() ? -1 : rss_samples[rss_samples.size() / 4];
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<double> ok_latency;
  std::map<int, int> errors_by_code;
  for (const Call& call : calls) {
    if (call.code == grpc::StatusCode::OK) {
      ok_latency.push_back(call.seconds);
    } else {
      ++errors_by_code[call.code];
    }
  }
  const int errors = static_cast<int>(calls.size() - ok_latency.size());
  const int pid = absl::GetFlag(FLAGS_server_pid);
  const int64_t peak_kib = pid > 0 ? taso::ProcStatusKib(pid, "VmHWM") : -1;
  const int64_t now_kib = pid > 0 ? taso::ProcStatusKib(pid, "VmRSS") : -1;
  const double throughput = static_cast<double>(ok_latency.size()) / wall;
  const double p50 = Percentile(ok_latency, 0.5), p99 = Percentile(ok_latency, 0.99);
  const double max = ok_latency.empty() ? 0 : *std::max_element(ok_latency.begin(), ok_latency.end());
  if (absl::GetFlag(FLAGS_json)) {
    std::printf(
        "{\"concurrency\": %d, \"models\": %zu, \"search\": \"%s\", \"time_limit_s\": %g, \"wall_s\": %.1f, "
        "\"calls\": %zu, \"ok\": %zu, \"errors\": %d, \"calls_per_s\": %.3f, \"p50_s\": %.3f, \"p99_s\": %.3f, "
        "\"max_s\": %.3f, \"server_peak_rss_mib\": %.1f, \"server_rss_quarter_mib\": %.1f, \"server_rss_mib\": %.1f}\n",
        absl::GetFlag(FLAGS_concurrency), models.size(), search.c_str(), absl::GetFlag(FLAGS_time_limit_s), wall,
        calls.size(), ok_latency.size(), errors, throughput, p50, p99, max, peak_kib / 1024.0, quarter_kib / 1024.0,
        now_kib / 1024.0);
  } else {
    std::printf("%d clients, %zu models (%s), %.1f s: %zu calls, %zu ok, %d errors\n", absl::GetFlag(FLAGS_concurrency),
                models.size(), search.c_str(), wall, calls.size(), ok_latency.size(), errors);
    std::printf("throughput %.2f calls/s; latency p50 %.2f s, p99 %.2f s, max %.2f s\n", throughput, p50, p99, max);
    if (peak_kib >= 0) {
      std::printf("server RSS: peak %.1f MiB; %.1f MiB a quarter of the way in, %.1f MiB at the end\n",
                  peak_kib / 1024.0, quarter_kib / 1024.0, now_kib / 1024.0);
    }
  }
  for (const auto& [code, count] : errors_by_code) std::fprintf(stderr, "errors with gRPC code %d: %d\n", code, count);
  for (const auto& [message, count] : error_messages) std::fprintf(stderr, "  %d x %s\n", count, message.c_str());
  return errors == 0 ? 0 : 1;
}
