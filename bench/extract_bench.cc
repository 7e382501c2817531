// Times ILP extraction (optimizer/eqsat/extract.h) on an e-graph's extraction
// problem under several settings, each in a child process so that its peak
// resident memory is its own. Write the problem of a real run first:
//   TASO_ILP_DUMP=/tmp/r50.prob taso optimize resnet50.onnx -o /tmp/x.onnx
//     --rules rules.pb --search eqsat --backend cpu --cache-dir costs
//   extract_bench --problem /tmp/r50.prob --configs 'old;lo'
// (bench/extract_run.sh does both for ResNet-50 and Inception-v3.)
//
// A config is a comma-separated list of tokens, applied in order (the
// defaults are IlpSettings'): acyclicity "lo" (linear order), "lazy" (cycle
// cuts) or "order" (Tensat's order variables); "cycles=N" (cycle cuts up
// front); "noprune"; "dense" (no class variables); "nocollapse" (no class
// collapsing); "acyclicrows" (child rows strengthened in cyclic
// components); "noneeded" (no needed
// rows); "cutoff", "mipstart" or "nostart" (how CBC gets greedy's choice);
// "old" (the model and CBC settings ExtractIlp had before: order variables,
// nothing pruned, dense, MIP start, CBC's defaults); "log" (CBC's log); and
// NAME=VALUE for Cbc_setParameter. Per config it prints the model's size,
// wall time, objective against greedy's, outcome, and the child's peak RSS
// (VmHWM) and how much the ILP added to it.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "absl/strings/match.h"
#include "core/proc_status.h"
#include "optimizer/eqsat/egraph_json.h"
#include "optimizer/eqsat/extract.h"

ABSL_FLAG(std::string, problem, "",
          "extraction problem written by TASO_ILP_DUMP, or an e-graph as egraph-serialize JSON (FILE.json); several, comma-separated, are solved as one (their disjoint "
          "union: a larger problem)");
ABSL_FLAG(double, cost_noise, 0, "multiply each e-node's cost by a random factor in [1 - x, 1 + x] (a harder problem)");
ABSL_FLAG(int, seed, 1, "for --cost_noise");
ABSL_FLAG(bool, relaxation, false, "first solve the ILP's linear relaxation and print, per operator, what it pays "
          "against greedy's choice (where the bound is weak), and what DAG greedy guided by it finds");
ABSL_FLAG(bool, diff, false, "print the e-nodes where each config's choice differs from greedy's");
ABSL_FLAG(std::string, configs, "order,noprune;lazy,noprune;order;lazy", "';'-separated configs (see the top)");
ABSL_FLAG(double, time_limit, 20, "ILP time limit in seconds (the optimizer's)");
ABSL_FLAG(int, max_memory_mb, 8000, "address-space limit of each child (so a runaway CBC fails, not the machine)");

using namespace taso::optimizer;

namespace {

constexpr int kExitOffset = 10;  // a child's exit status when it ran to the end

// The operator of an e-node's label ("matmul[act=none]" -> "matmul").
std::string OpOf(const ExtractionProblem& p, int n) {
  if (n >= static_cast<int>(p.node_label.size())) return "?";
  const std::string& label = p.node_label[n];
  return label.substr(0, label.find_first_of("[(:"));
}

// The relaxation's cost per operator beside greedy's, and how fractional it is.
void PrintRelaxation(const ExtractionProblem& p, const ProblemChoice& greedy) {
  IlpStats stats;
  auto x = SolveIlpRelaxation(p, {}, &stats);
  if (!x.ok()) {
    std::printf("relaxation: %s\n", std::string(x.status().message()).c_str());
    return;
  }
  std::map<std::string, std::pair<double, double>> by_op;  // op -> (relaxation, greedy)
  int fractional = 0;
  for (size_t n = 0; n < p.node_id.size(); ++n) {
    by_op[OpOf(p, static_cast<int>(n))].first += (*x)[n] * p.node_cost[n];
    fractional += (*x)[n] > 0.01 && (*x)[n] < 0.99;
  }
  for (int n : greedy.pick) {
    if (n >= 0) by_op[OpOf(p, n)].second += p.node_cost[n];
  }
  std::printf("relaxation: %.4f ms (greedy %.4f), %d fractional e-nodes; per operator (relaxation / greedy ms):\n",
              stats.lower_bound_ms, greedy.cost_ms, fractional);
  std::vector<std::pair<std::string, std::pair<double, double>>> rows(by_op.begin(), by_op.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.second - a.second.first > b.second.second - b.second.first;
  });
  for (const auto& [op, costs] : rows) {
    if (costs.first < 1e-6 && costs.second < 1e-6) continue;
    std::printf("  %-28s %9.4f / %9.4f\n", op.c_str(), costs.first, costs.second);
  }
  // Rounding guided by the relaxation: DAG greedy on costs scaled by (1 - x),
  // its choice priced at the real costs (is there a better program to find?).
  ExtractionProblem hinted = p;
  for (size_t n = 0; n < p.node_id.size(); ++n) hinted.node_cost[n] = p.node_cost[n] * (1 - std::min(1.0, (*x)[n]));
  if (auto rounded = SolveGreedyDag(hinted); rounded.ok()) {
    double cost = 0;
    for (int n : rounded->pick) cost += n >= 0 ? p.node_cost[n] : 0;
    std::printf("relaxation-guided DAG greedy: %.4f ms\n", cost);
  }
}

// `b` beside `a`, its classes and e-nodes renumbered after a's.
void Append(ExtractionProblem& a, const ExtractionProblem& b) {
  const int classes = static_cast<int>(a.class_id.size()), nodes = static_cast<int>(a.node_id.size());
  for (size_t c = 0; c < b.class_id.size(); ++c) {
    a.class_id.push_back(b.class_id[c]);
    a.class_nodes.emplace_back();
    for (int n : b.class_nodes[c]) a.class_nodes.back().push_back(n + nodes);
  }
  for (size_t n = 0; n < b.node_id.size(); ++n) {
    a.node_id.push_back(b.node_id[n]);
    a.node_class.push_back(b.node_class[n] + classes);
    a.node_cost.push_back(b.node_cost[n]);
    a.node_children.emplace_back();
    for (int d : b.node_children[n]) a.node_children.back().push_back(d + classes);
    a.node_label.push_back(n < b.node_label.size() ? b.node_label[n] : "");
  }
  for (int r : b.roots) a.roots.push_back(r + classes);
}

// The process's peak resident memory so far, in MB (VmHWM).
double PeakMb() { return static_cast<double>(taso::ProcStatusKib(0, "VmHWM")) / 1024; }

void Describe(const ExtractionProblem& p) {
  size_t edges = 0, single = 0, empty = 0, zero = 0;
  for (const auto& ch : p.node_children) edges += ch.size();
  for (const auto& nodes : p.class_nodes) {
    single += nodes.size() == 1;
    empty += nodes.empty();
  }
  for (double c : p.node_cost) zero += c == 0;
  std::printf("problem: %zu classes (%zu with one e-node, %zu with none), %zu e-nodes (%zu free), %zu child edges, "
              "%zu roots\n",
              p.class_id.size(), single, empty, p.node_id.size(), zero, edges, p.roots.size());
}

int RunConfig(const ExtractionProblem& problem, const ProblemChoice& greedy, const std::string& config) {
  IlpSettings settings;
  // Each config already runs in a child of its own (main), under
  // --max_memory_mb, whose peak RSS is the figure: CBC must run in it, not in
  // a further child of SolveIlp's.
  settings.isolate = false;
  for (const std::string& token : std::vector<std::string>(absl::StrSplit(config, ',', absl::SkipEmpty()))) {
    if (token == "order") {
      settings.acyclicity = IlpSettings::Acyclicity::kOrderVariables;
    } else if (token == "lo") {
      settings.acyclicity = IlpSettings::Acyclicity::kLinearOrder;
    } else if (token == "lazy") {
      settings.acyclicity = IlpSettings::Acyclicity::kLazyCycleCuts;
    } else if (token == "noprune") {
      settings.prune = false;
    } else if (token == "mipstart") {
      settings.warm_start = IlpSettings::WarmStart::kMipStart;
    } else if (token == "old") {  // the model before bench/extract_bench existed
      settings.acyclicity = IlpSettings::Acyclicity::kOrderVariables;
      settings.prune = settings.class_variables = settings.needed_rows = false;
      settings.warm_start = IlpSettings::WarmStart::kMipStart;
      settings.cbc_parameters = {{"timeMode", "cpu"}, {"zeroHalfCuts", "ifmove"}};
    } else if (token == "cutoff") {
      settings.warm_start = IlpSettings::WarmStart::kCutoff;
    } else if (token == "nostart") {
      settings.warm_start = IlpSettings::WarmStart::kNone;
    } else if (token == "acyclicrows") {
      settings.acyclic_child_rows = true;
    } else if (token == "nocollapse") {
      settings.collapse_classes = false;
    } else if (token == "noneeded") {
      settings.needed_rows = false;
    } else if (token == "dense") {
      settings.class_variables = false;
    } else if (token.rfind("cycles=", 0) == 0) {
      settings.cycle_limit = std::stoi(token.substr(7));
    } else if (token == "log") {
      settings.log_level = 1;
    } else if (auto eq = token.find('='); eq != std::string::npos) {
      settings.cbc_parameters.push_back({token.substr(0, eq), token.substr(eq + 1)});
    } else {
      std::fprintf(stderr, "unknown config token %s\n", token.c_str());
      return 2;
    }
  }
  IlpStats stats;
  const double peak_before = PeakMb();
  const auto start = std::chrono::steady_clock::now();
  auto result = SolveIlp(problem, absl::Seconds(absl::GetFlag(FLAGS_time_limit)), &greedy, settings, &stats);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.ok()) {
    std::printf("  %-40s error after %.1f s: %s\n", config.c_str(), seconds, std::string(result.status().message()).c_str());
    std::fflush(stdout);
    return 1;
  }
  std::printf("  %-40s %6.1f s  %.4f ms (greedy %.4f, %+.2f%%, bound %.4f)  %s  prep %.2f s, %d solves, %d cuts, %d cyclic  "
              "pruned %d+%d, model %d classes %d e-nodes (%d collapsed), %d acyclic child rows, %d must, %d implied, %d ordered, %d cycles up front%s -> %d cols %d rows %d nz\n",
              config.c_str(), seconds, result->cost_ms, greedy.cost_ms,
              100 * (result->cost_ms - greedy.cost_ms) / greedy.cost_ms, stats.lower_bound_ms, stats.outcome.c_str(),
              stats.prepare_seconds, stats.solves, stats.cycle_cuts, stats.cyclic_solutions, stats.pruned_by_bound, stats.pruned_by_dominance,
              stats.model_classes, stats.model_enodes, stats.collapsed_classes, stats.acyclic_child_rows, stats.must_classes, stats.needed_rows, stats.ordered_components,
              stats.upfront_cycles, stats.all_cycles_upfront ? " (all)" : "",
              stats.columns, stats.rows, stats.nonzeros);
  if (absl::GetFlag(FLAGS_diff)) {
    for (size_t c = 0; c < problem.class_id.size(); ++c) {
      const int mine = result->pick[c], theirs = greedy.pick[c];
      if (mine == theirs) continue;
      auto describe = [&](int n) {
        if (n < 0) return std::string("-");
        return (n < static_cast<int>(problem.node_label.size()) ? problem.node_label[n] : "") + " " +
               std::to_string(problem.node_cost[n]) + " ms";
      };
      std::printf("    class %d: %s (greedy: %s)\n", problem.class_id[c], describe(mine).c_str(),
                  describe(theirs).c_str());
    }
  }
  const double peak = PeakMb();
  std::printf("  %-40s peak RSS %.0f MB, %+.0f MB over the problem's\n", "", peak, peak - peak_before);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::optional<ExtractionProblem> problem;
  for (const std::string& path : std::vector<std::string>(absl::StrSplit(absl::GetFlag(FLAGS_problem), ','))) {
    // egraph-serialize JSON (`taso optimize --dump-egraph`, anyone's) or the dump's text format.
    auto part = absl::EndsWith(path, ".json")
                    ? [&]() -> absl::StatusOr<ExtractionProblem> {
                        auto g = ReadEGraphJson(path);
                        if (!g.ok()) return g.status();
                        return std::move(g->problem);
                      }()
                    : ReadExtractionProblem(path);
    if (!part.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(part.status().message()).c_str());
      return 1;
    }
    if (!problem.has_value()) {
      problem = *std::move(part);
    } else {
      Append(*problem, *part);
    }
  }
  if (const double noise = absl::GetFlag(FLAGS_cost_noise); noise > 0) {
    std::mt19937 rng(absl::GetFlag(FLAGS_seed));
    std::uniform_real_distribution<double> factor(1 - noise, 1 + noise);
    for (double& cost : problem->node_cost) cost *= factor(rng);
  }
  Describe(*problem);
  const auto start = std::chrono::steady_clock::now();
  auto greedy = SolveGreedy(*problem);
  if (!greedy.ok()) {
    std::fprintf(stderr, "error: greedy: %s\n", std::string(greedy.status().message()).c_str());
    return 1;
  }
  std::printf("greedy: %.4f ms in %.2f s\n", greedy->cost_ms,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  std::fflush(stdout);
  if (absl::GetFlag(FLAGS_relaxation)) PrintRelaxation(*problem, *greedy);
  const std::vector<std::string> configs = absl::StrSplit(absl::GetFlag(FLAGS_configs), ';', absl::SkipEmpty());
  for (const std::string& config : configs) {
    const pid_t child = fork();
    if (child < 0) {
      std::perror("fork");
      return 1;
    }
    if (child == 0) {
      const rlim_t limit = static_cast<rlim_t>(absl::GetFlag(FLAGS_max_memory_mb)) << 20;
      rlimit r{limit, limit};
      setrlimit(RLIMIT_AS, &r);
      // Offset, so that a library's own exit(0) (CBC's zero-half cut
      // separator exits the process when its allocations fail) shows.
      _exit(kExitOffset + RunConfig(*problem, *greedy, config));
    }
    int status = 0;
    rusage usage{};
    wait4(child, &status, 0, &usage);
    if (WIFSIGNALED(status) || WEXITSTATUS(status) != kExitOffset) {
      const std::string what = WIFSIGNALED(status) ? "KILLED by signal " + std::to_string(WTERMSIG(status))
                               : WEXITSTATUS(status) > kExitOffset ? std::string("FAILED")
                                                                   : "EXITED with " + std::to_string(WEXITSTATUS(status));
      std::printf("  %-40s %s (peak RSS %.0f MB)\n", config.c_str(), what.c_str(), usage.ru_maxrss / 1024.0);
    }
    std::fflush(stdout);
  }
  return 0;
}
