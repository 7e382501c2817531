#include "cli/egraph_command.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "core/json_text.h"
#include "optimizer/eqsat/egraph_json.h"
#include "optimizer/eqsat/extract.h"

namespace taso::cli {
namespace {

using optimizer::ExtractionProblem;
using optimizer::ProblemChoice;
using optimizer::SerializedEGraph;

enum class Extractor { kGreedy, kGreedyDag, kSharing, kIlp };

// How an extractor's result came about.
enum class Stop {
  kHeuristic,  // a heuristic's fixpoint: no bound
  kOptimal,    // the ILP proved nothing cheaper exists
  kTimeLimit,  // the ILP ran out of time: its best, with its bound
  kStopped,    // the ILP stopped otherwise: its best, with its bound
  kFailed,     // no acyclic choice found
};

const char* ExtractorName(Extractor e) {
  switch (e) {
    case Extractor::kGreedy:
      return "greedy";
    case Extractor::kGreedyDag:
      return "greedy-dag";
    case Extractor::kSharing:
      return "sharing";
    case Extractor::kIlp:
      return "ilp";
  }
  return "?";
}

const char* StopName(Stop s) {
  switch (s) {
    case Stop::kHeuristic:
      return "heuristic";
    case Stop::kOptimal:
      return "optimal";
    case Stop::kTimeLimit:
      return "time limit";
    case Stop::kStopped:
      return "stopped";
    case Stop::kFailed:
      return "failed";
  }
  return "?";
}

absl::StatusOr<std::vector<Extractor>> ParseExtractors(const std::string& text) {
  constexpr Extractor kAll[] = {Extractor::kGreedy, Extractor::kGreedyDag, Extractor::kSharing, Extractor::kIlp};
  if (text == "all") return std::vector<Extractor>(std::begin(kAll), std::end(kAll));
  std::vector<Extractor> out;
  for (absl::string_view name : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::optional<Extractor> e;
    for (Extractor candidate : kAll) {
      if (name == ExtractorName(candidate)) e = candidate;
    }
    if (!e) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown extractor '", name, "': --extractor is greedy, greedy-dag, sharing, ilp (comma-separated) or all"));
    }
    out.push_back(*e);
  }
  if (out.empty()) return absl::InvalidArgumentError("--extractor names no extractor");
  return out;
}

struct Outcome {
  Extractor extractor;
  Stop stop = Stop::kFailed;
  double dag_cost = 0, tree_cost = 0, seconds = 0;
  std::optional<double> bound;  // the ILP's lower bound
  bool kept_earlier = false;    // DAG greedy returned greedy's choice
  std::string error;
};

Outcome Run(Extractor e, const SerializedEGraph& g, absl::Duration time_limit,
            const optimizer::IlpSettings& ilp) {
  const ExtractionProblem& p = g.problem;
  Outcome o{e};
  const absl::Time start = absl::Now();
  absl::StatusOr<ProblemChoice> choice;
  switch (e) {
    case Extractor::kGreedy:
      choice = optimizer::SolveGreedy(p);
      break;
    case Extractor::kGreedyDag:
      choice = optimizer::SolveGreedyDag(p);
      break;
    case Extractor::kSharing:
      choice = optimizer::SolveGreedyDag(p);
      if (choice.ok()) choice = optimizer::ImproveBySharing(p, *choice, start + time_limit);
      break;
    case Extractor::kIlp: {
      // From sharing moves (a quarter of the time at most), as eqsat starts it.
      absl::StatusOr<ProblemChoice> warm = optimizer::SolveGreedyDag(p);
      if (warm.ok()) warm = optimizer::ImproveBySharing(p, *warm, start + time_limit / 4);
      const absl::Duration left = std::max(absl::ZeroDuration(), time_limit - (absl::Now() - start));
      choice = optimizer::SolveIlp(p, left, warm.ok() ? &*warm : nullptr, ilp);
      break;
    }
  }
  o.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (!choice.ok()) {
    o.error = std::string(choice.status().message());
    return o;
  }
  o.dag_cost = choice->cost_ms;
  o.tree_cost = optimizer::TreeCost(p, choice->pick, &g.child_uses);
  o.kept_earlier = choice->kept_earlier;
  if (e != Extractor::kIlp) {
    o.stop = Stop::kHeuristic;
  } else if (choice->optimal) {
    o.stop = Stop::kOptimal;
    o.bound = choice->cost_ms;
  } else {
    o.stop = choice->time_limited ? Stop::kTimeLimit : Stop::kStopped;
    o.bound = std::min(choice->lower_bound_ms, choice->cost_ms);
  }
  return o;
}

double Gap(const Outcome& o) { return o.dag_cost > 0 && o.bound ? (o.dag_cost - *o.bound) / o.dag_cost : 0; }

void PrintText(const std::string& file, const SerializedEGraph& g, const std::vector<Outcome>& outcomes,
               std::ostream& out) {
  out << file << ": " << g.problem.class_id.size() << " e-classes, " << g.problem.node_id.size() << " e-nodes";
  if (g.subsumed > 0) out << " (and " << g.subsumed << " subsumed)";
  out << ", " << g.problem.roots.size() << " roots\n";
  out << absl::StrFormat("  %-11s %14s %14s %9s  %s\n", "extractor", "dag cost", "tree cost", "seconds", "result");
  for (const Outcome& o : outcomes) {
    if (o.stop == Stop::kFailed) {
      out << absl::StrFormat("  %-11s %14s %14s %9.3f  failed: %s\n", ExtractorName(o.extractor), "-", "-", o.seconds,
                             o.error);
      continue;
    }
    std::string result = StopName(o.stop);
    if (o.kept_earlier) absl::StrAppend(&result, " (greedy's choice kept: its own was dearer)");
    if (o.stop == Stop::kTimeLimit || o.stop == Stop::kStopped) {
      absl::StrAppend(&result, absl::StrFormat(", bound %.6g, gap %.2f%%", *o.bound, 100 * Gap(o)));
    }
    out << absl::StrFormat("  %-11s %14.6g %14.6g %9.3f  %s\n", ExtractorName(o.extractor), o.dag_cost, o.tree_cost,
                           o.seconds, result);
  }
}

Json JsonOf(const std::string& file, const SerializedEGraph& g, const std::vector<Outcome>& outcomes) {
  Json j;
  j["file"] = file;
  j["classes"] = g.problem.class_id.size();
  j["enodes"] = g.problem.node_id.size();
  j["subsumed"] = g.subsumed;
  j["roots"] = g.problem.roots.size();
  Json results = Json::array();
  for (const Outcome& o : outcomes) {
    Json r;
    r["extractor"] = ExtractorName(o.extractor);
    r["stop"] = StopName(o.stop);
    r["seconds"] = RoundTo(o.seconds, 4);
    if (o.stop == Stop::kFailed) {
      r["error"] = o.error;
    } else {
      r["dag_cost"] = o.dag_cost;
      r["tree_cost"] = std::isfinite(o.tree_cost) ? Json(o.tree_cost) : Json("inf");
      r["optimal"] = o.stop == Stop::kOptimal;
      r["lower_bound"] = o.bound ? Json(*o.bound) : Json(nullptr);
      r["gap"] = o.bound ? Json(Gap(o)) : Json(nullptr);
      r["kept_earlier"] = o.kept_earlier;
    }
    results.push_back(std::move(r));
  }
  j["results"] = std::move(results);
  return j;
}

}  // namespace

int RunEGraph(const EGraphCommandOptions& options, std::ostream& out, std::ostream& err) {
  auto fail = [&](int code, const std::string& message) {
    err << "taso egraph: " << message << "\n";
    return code;
  };
  if (options.subcommand != "extract") {
    return fail(2, "give a subcommand: taso egraph extract FILE.json... [--extractor greedy,greedy-dag,sharing,ilp|all] "
                   "[--time-limit S] [--json]");
  }
  if (options.files.empty()) return fail(2, "give the e-graph files (egraph-serialize JSON)");
  if (!(options.time_limit_s > 0)) return fail(2, "--time-limit must be > 0 seconds");
  if (options.ilp_memory_mb < 1) return fail(2, "--ilp-memory-mb must be at least 1 (MiB)");
  optimizer::IlpSettings ilp;
  ilp.child_memory_mb = options.ilp_memory_mb;
  auto extractors = ParseExtractors(options.extractors);
  if (!extractors.ok()) return fail(2, std::string(extractors.status().message()));
  optimizer::EGraphJsonLimits limits;
  limits.max_nodes = options.max_nodes;
  int code = 0;
  for (const std::string& file : options.files) {
    auto g = optimizer::ReadEGraphJson(file, limits);
    if (!g.ok()) {
      fail(2, std::string(g.status().message()));
      code = 2;
      continue;
    }
    std::vector<Outcome> outcomes;
    for (Extractor e : *extractors) {
      outcomes.push_back(Run(e, *g, absl::Seconds(options.time_limit_s), ilp));
      if (outcomes.back().stop == Stop::kFailed) code = std::max(code, 1);
    }
    if (options.json) {
      out << JsonLine(JsonOf(file, *g, outcomes)) << "\n";
    } else {
      PrintText(file, *g, outcomes, out);
    }
  }
  return code;
}

}  // namespace taso::cli
