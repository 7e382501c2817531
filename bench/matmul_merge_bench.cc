// Predicted cost before and after each search on recurrent cells whose
// matmuls share inputs (LSTM: 4 gates, NAS-RNN: 8 branches, each
// matmul(x, Wx) + matmul(h, Wh), weights shared across unrolled steps) and
// on Q/K/V projections with bias adds, costed by the profiler in-process
// (cpu backend by default). Prints one row per model and search, with the
// e-graph's stop reason and the rules each result used.
//
//   bazel run -c opt //bench:matmul_merge_bench -- --rows 1 --steps 1
//   bazel run -c opt //bench:matmul_merge_bench -- --rules RULES.pb --steps 2 --models nasrnn
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "core/canonical.h"
#include "core/graph.h"
#include "optimizer/eqsat/eqsat.h"
#include "optimizer/optimize.h"
#include "optimizer/passes/structural_rules.h"
#include "optimizer/rule_source.h"
#include "profiler/open_client.h"
#include "profiler/profiler.h"

ABSL_FLAG(int64_t, rows, 1, "rows of x and h (batch)");
ABSL_FLAG(int64_t, width, 512, "hidden size: x and h are [rows, width], weights [width, width]");
ABSL_FLAG(int, steps, 1, "unrolled steps of the recurrent cells");
ABSL_FLAG(std::string, models, "lstm,nasrnn,qkv", "which graphs, comma-separated");
ABSL_FLAG(std::string, searches, "backtrack,eqsat", "which searches, comma-separated");
ABSL_FLAG(std::string, rules, "", "a RuleCollection file (taso rules export); empty: structural rewrites only");
ABSL_FLAG(int, time_limit_s, 60, "each search's time limit");
ABSL_FLAG(std::string, backend, "cpu", "profiler backend: cpu or analytic");
ABSL_FLAG(int, top_rules, 0,
          "for eqsat: saturate once more and print the N rules with the most applications (what fills the e-graph)");
ABSL_FLAG(int, eqsat_multi_rounds, 2, "rounds in which eqsat runs shape-generic multi-output rules (Tensat's k_multi)");
ABSL_FLAG(int, threads, 1, "cpu backend threads (1: stable on a loaded 2-core machine, as ORT is run)");
ABSL_FLAG(int, repetitions, 100, "timed runs per operator signature (medians)");
ABSL_FLAG(std::string, cache_dir, "none", "cost cache: none (memory), '' (the default directory) or a path");

namespace taso {
namespace {

TensorType F32(std::vector<int64_t> dims) { return TensorType::RowMajor(DType::kFloat32, std::move(dims)); }

TensorRef Op(Graph& g, OpKind kind, std::vector<TensorRef> in) {
  auto r = g.AddOp1(kind, OpParams{}, in);
  if (!r.ok()) {
    std::cerr << r.status() << "\n";
    std::exit(1);
  }
  return *r;
}

// `branches` gate pre-activations matmul(x, Wx_k) + matmul(h, Wh_k) per step.
std::vector<TensorRef> Gates(Graph& g, TensorRef x, TensorRef h, const std::vector<TensorRef>& wx,
                             const std::vector<TensorRef>& wh) {
  std::vector<TensorRef> gates;
  for (size_t k = 0; k < wx.size(); ++k) {
    gates.push_back(Op(g, OpKind::kEwAdd, {Op(g, OpKind::kMatMul, {x, wx[k]}), Op(g, OpKind::kMatMul, {h, wh[k]})}));
  }
  return gates;
}

Graph Recurrent(bool nas, int64_t rows, int64_t width, int steps) {
  Graph g;
  const int branches = nas ? 8 : 4;
  std::vector<TensorRef> wx, wh;
  for (int k = 0; k < branches; ++k) {
    wx.push_back(g.AddWeight(absl::StrCat("wx", k), F32({width, width})));
    wh.push_back(g.AddWeight(absl::StrCat("wh", k), F32({width, width})));
  }
  TensorRef h = g.AddInput("h0", F32({rows, width}));
  TensorRef c = g.AddInput("c0", F32({rows, width}));
  for (int s = 0; s < steps; ++s) {
    TensorRef x = g.AddInput(absl::StrCat("x", s), F32({rows, width}));
    std::vector<TensorRef> gt = Gates(g, x, h, wx, wh);
    if (!nas) {
      TensorRef i = Op(g, OpKind::kSigmoid, {gt[0]}), f = Op(g, OpKind::kSigmoid, {gt[1]});
      TensorRef o = Op(g, OpKind::kSigmoid, {gt[2]}), u = Op(g, OpKind::kTanh, {gt[3]});
      c = Op(g, OpKind::kEwAdd, {Op(g, OpKind::kEwMul, {f, c}), Op(g, OpKind::kEwMul, {i, u})});
      h = Op(g, OpKind::kEwMul, {o, Op(g, OpKind::kTanh, {c})});
    } else {
      // NAS-RNN's cell: activations of the 8 branches combined pairwise.
      std::vector<TensorRef> a;
      for (int k = 0; k < 8; ++k) {
        const OpKind act = k % 3 == 0 ? OpKind::kSigmoid : k % 3 == 1 ? OpKind::kTanh : OpKind::kRelu;
        a.push_back(Op(g, act, {gt[k]}));
      }
      TensorRef l1 = Op(g, OpKind::kEwMul, {a[0], a[1]}), l2 = Op(g, OpKind::kEwAdd, {a[2], a[3]});
      TensorRef l3 = Op(g, OpKind::kEwMul, {a[4], a[5]}), l4 = Op(g, OpKind::kEwAdd, {a[6], a[7]});
      TensorRef m1 = Op(g, OpKind::kTanh, {Op(g, OpKind::kEwMul, {l1, l2})});
      TensorRef m2 = Op(g, OpKind::kTanh, {Op(g, OpKind::kEwAdd, {l3, l4})});
      h = Op(g, OpKind::kTanh, {Op(g, OpKind::kEwMul, {m1, m2})});
    }
  }
  g.AddOutput("h", h);
  if (!nas) g.AddOutput("c", c);
  return g;
}

Graph Projections(int64_t rows, int64_t width) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({rows, width}));
  std::vector<TensorRef> heads;
  for (const char* n : {"q", "k", "v"}) {
    TensorRef w = g.AddWeight(absl::StrCat("w", n), F32({width, width}));
    TensorRef b = g.AddWeight(absl::StrCat("b", n), F32({width}));
    heads.push_back(Op(g, OpKind::kEwAdd, {Op(g, OpKind::kMatMul, {x, w}), b}));
  }
  g.AddOutput("y", Op(g, OpKind::kEwMul, {Op(g, OpKind::kEwMul, {heads[0], heads[1]}), heads[2]}));
  return g;
}

int MatMuls(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == OpKind::kMatMul;
  return n;
}

// Saturates `g` as the optimizer would and prints the most applied rules.
void PrintTopRules(const Graph& g, const std::vector<optimizer::RewriteRule>& rules,
                   const optimizer::OptimizerOptions& options) {
  std::vector<optimizer::RewriteRule> all = rules;
  for (optimizer::RewriteRule& r : optimizer::StructuralRewrites(g)) all.push_back(std::move(r));
  optimizer::EqsatOptions eq = options.eqsat;
  eq.time_limit = options.time_limit;
  auto sat = optimizer::Saturate(g, all, eq);
  if (!sat.ok()) {
    std::cerr << sat.status() << "\n";
    return;
  }
  std::vector<std::pair<int, std::string>> counts;
  for (const auto& [rule, n] : sat->rules_applied) counts.push_back({n, rule});
  std::sort(counts.rbegin(), counts.rend());
  std::cout << absl::StrFormat("        saturation again: %s, %d e-nodes, %d bans; most applied:", sat->stop_detail,
                               sat->egraph.num_enodes(), sat->rule_bans);
  for (size_t i = 0; i < counts.size() && i < static_cast<size_t>(absl::GetFlag(FLAGS_top_rules)); ++i) {
    std::cout << " " << counts[i].second << " x" << counts[i].first << ";";
  }
  std::cout << "\n";
  for (size_t i = 0; i < counts.size() && i < static_cast<size_t>(absl::GetFlag(FLAGS_top_rules)); ++i) {
    for (const optimizer::RewriteRule& r : all) {
      if (r.name != counts[i].second) continue;
      auto lhs = CanonicalText(r.lhs()), rhs = CanonicalText(r.rhs());
      if (lhs.ok() && rhs.ok()) std::cout << "          " << r.name << ": " << *lhs << "  =>  " << *rhs << "\n";
      break;
    }
  }
}

int Run() {
  const int64_t rows = absl::GetFlag(FLAGS_rows), width = absl::GetFlag(FLAGS_width);
  const int steps = absl::GetFlag(FLAGS_steps);
  profiler::ProfilerOptions popts;
  popts.enable_cuda = false;
  popts.cpu.threads = absl::GetFlag(FLAGS_threads);
  popts.timing.repetitions = absl::GetFlag(FLAGS_repetitions);
  popts.cache_dir = profiler::CacheDirFromFlag(absl::GetFlag(FLAGS_cache_dir));
  const bool analytic = absl::GetFlag(FLAGS_backend) == "analytic";
  popts.default_backend = analytic ? profiler::BACKEND_ANALYTIC : profiler::BACKEND_CPU;
  auto client = profiler::OpenProfiler("", popts);
  if (!client.ok()) {
    std::cerr << client.status() << "\n";
    return 1;
  }
  std::vector<optimizer::RewriteRule> rules;
  if (!absl::GetFlag(FLAGS_rules).empty()) {
    auto loaded = optimizer::LoadRulesFile(absl::GetFlag(FLAGS_rules));
    if (!loaded.ok()) {
      std::cerr << loaded.status() << "\n";
      return 2;
    }
    rules = std::move(loaded->rewrites);
  }
  std::cout << absl::StrFormat("rows %d, width %d, steps %d, %d generated rewrites, backend %s, %d thread(s)\n", rows,
                               width, steps, rules.size(), absl::GetFlag(FLAGS_backend), absl::GetFlag(FLAGS_threads));
  for (const std::string& model : std::vector<std::string>(absl::StrSplit(absl::GetFlag(FLAGS_models), ','))) {
    Graph g = model == "qkv" ? Projections(rows, width) : Recurrent(model == "nasrnn", rows, width, steps);
    for (const std::string& search : std::vector<std::string>(absl::StrSplit(absl::GetFlag(FLAGS_searches), ','))) {
      optimizer::OptimizerOptions options;
      options.search = search == "eqsat" ? optimizer::SearchKind::kEqsat : optimizer::SearchKind::kBacktrack;
      options.time_limit = absl::Seconds(absl::GetFlag(FLAGS_time_limit_s));
      options.eqsat.multi_pattern_iteration_limit = absl::GetFlag(FLAGS_eqsat_multi_rounds);
      auto r = optimizer::OptimizeGraph(g, rules, **client, options);
      if (!r.ok()) {
        std::cerr << model << " " << search << ": " << r.status() << "\n";
        return 1;
      }
      const optimizer::OptimizeReport& rep = r->report;
      std::cout << absl::StrFormat(
          "%-7s %-9s cost %.4f -> %.4f ms (%.2fx)  matmuls %d -> %d  ops %d -> %d  search %.1f s  check %s\n"
          "        stop: %s\n",
          model, search, rep.cost_before_ms, rep.cost_after_ms,
          rep.cost_after_ms > 0 ? rep.cost_before_ms / rep.cost_after_ms : 1.0, MatMuls(g), MatMuls(r->graph),
          rep.operators_before, rep.operators_after, absl::ToDoubleSeconds(rep.search_time),
          rep.check.ran && rep.check.equal ? "equal" : rep.check.reason, rep.stop_detail);
      std::string used;
      for (const auto& [rule, count] : rep.rules_applied) absl::StrAppend(&used, " ", rule, " x", count, ";");
      std::cout << "        rules used:" << used << "\n";
      if (search == "eqsat" && absl::GetFlag(FLAGS_top_rules) > 0) PrintTopRules(g, rules, options);
    }
  }
  return 0;
}

}  // namespace
}  // namespace taso

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return taso::Run();
}
