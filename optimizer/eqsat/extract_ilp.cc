// The ILP extraction (see extract.h for the formulation and why it has the
// rows it has): the starting point, CBC's solves with lazy cycle cuts, and
// reading its solutions. Pruning is in ilp_prune.cc, the model in
// ilp_model.cc.
#include <coin/Cbc_C_Interface.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "optimizer/eqsat/extract.h"
#include "optimizer/eqsat/extract_internal.h"
#include "optimizer/eqsat/ilp_internal.h"

namespace taso::optimizer {

using extract_internal::FindCycles;
using extract_internal::GreedyPick;
using extract_internal::PickCost;
using extract_internal::RestrictAcyclic;
using extract_internal::RestrictPick;
using ilp_internal::IlpDomain;
using ilp_internal::IlpModel;
using ilp_internal::LinearProgram;

namespace {

// Always: CBC's zero-half cut separator alone took 7-15 GB on ResNet-50's
// and Inception-v3's e-graphs (the old model), and calls exit() when an
// allocation fails.
constexpr std::pair<const char*, const char*> kCbcParameters[] = {
    {"timeMode", "elapsed"},
    {"zeroHalfCuts", "off"},
};

struct CbcDeleter {
  void operator()(Cbc_Model* model) const { Cbc_deleteModel(model); }
};

// Whether `choice` is a complete acyclic choice of the problem; restricts it
// to the classes the roots need and recomputes its cost.
bool Acyclic(const ExtractionProblem& p, ProblemChoice& choice) {
  choice.optimal = choice.time_limited = false;
  if (choice.pick.size() != p.class_id.size() || !RestrictAcyclic(p, choice.pick)) return false;
  choice.cost_ms = PickCost(p, choice.pick);
  return true;
}

// The best acyclic choice known: the cheapest of the warm start and DAG
// greedy's (never dearer than greedy's); none when neither has one.
std::optional<ProblemChoice> StartingPoint(const ExtractionProblem& p, const ProblemChoice* warm_start) {
  std::optional<ProblemChoice> best;
  if (warm_start != nullptr) {
    ProblemChoice warm = *warm_start;
    if (Acyclic(p, warm)) best = std::move(warm);
  }
  if (auto dag = SolveGreedyDag(p); dag.ok() && Acyclic(p, *dag) && (!best || dag->cost_ms < best->cost_ms)) {
    best = *std::move(dag);
  }
  return best;
}

// Keeps `candidate` as the best choice when it is complete, acyclic and
// cheaper.
void KeepIfBetter(const ExtractionProblem& p, std::vector<int> candidate, std::optional<ProblemChoice>& best) {
  if (!RestrictAcyclic(p, candidate)) return;
  const double cost = PickCost(p, candidate);
  if (!best.has_value() || cost < best->cost_ms) best = ProblemChoice{std::move(candidate), cost, false, false};
}

// The solve loop's state: the best choice, and how the loop ended.
struct SolveState {
  std::optional<ProblemChoice> best;
  bool proved = false, timed_out = false;
  std::string failure;
};

// Tells CBC of the best choice known: as its cutoff or as a MIP start.
void WarmStart(const ExtractionProblem& p, const IlpModel& model, const ProblemChoice& best,
               const IlpSettings& settings, Cbc_Model* m) {
  if (settings.warm_start == IlpSettings::WarmStart::kCutoff) {
    Cbc_setCutoff(m, best.cost_ms * 1000 * (1 + 1e-9));
  } else if (settings.warm_start == IlpSettings::WarmStart::kMipStart) {
    // The e-nodes' values; CBC completes the continuous columns.
    std::vector<int> cols;
    std::vector<double> values;
    for (size_t col = 0; col < model.columns_node.size(); ++col) {
      const int n = model.columns_node[col];
      cols.push_back(static_cast<int>(col));
      values.push_back(best.pick[p.node_class[n]] == n ? 1.0 : 0.0);
    }
    Cbc_setMIPStartI(m, static_cast<int>(cols.size()), cols.data(), values.data());
  }
}

// A solution with cycles: a repaired choice (greedy preferring the e-nodes
// CBC chose, free as if shared) and cuts for its cycles. Returns the number
// of new cuts.
int RepairAndCut(const ExtractionProblem& p, const IlpDomain& domain, const std::vector<int>& pick,
                 std::vector<std::vector<int>> cycles, IlpModel& model, SolveState& state) {
  std::vector<double> hinted(p.node_id.size());
  std::vector<bool> chosen(p.node_id.size(), false);
  for (int n : pick) {
    if (n >= 0) chosen[n] = true;
  }
  for (size_t n = 0; n < p.node_id.size(); ++n) hinted[n] = chosen[n] ? 0.0 : p.node_cost[n];
  KeepIfBetter(p, GreedyPick(p, hinted, domain.alive), state.best);
  int added = 0;
  for (std::vector<int>& cycle : cycles) {
    // One rotation per cycle, starting at its least class.
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    if (model.cut_set.insert(cycle).second) {
      model.cuts.push_back(cycle);
      ++added;
    }
  }
  return added;
}

// Reads one finished CBC run into `state`. Returns whether to solve again
// (the solution had cycles, now cut).
bool ReadSolution(const ExtractionProblem& p, const IlpDomain& domain, const IlpSettings& settings, Cbc_Model* m,
                  bool cutoff, bool out_of_time, IlpModel& model, SolveState& state, IlpStats& st) {
  const bool finished = !out_of_time && Cbc_status(m) == 0;
  const double* solution = Cbc_bestSolution(m);
  if (solution == nullptr) {
    if (out_of_time) {
      state.timed_out = true;
      st.lower_bound_ms = std::max(st.lower_bound_ms, Cbc_getBestPossibleObjValue(m) / 1000);
    } else if (cutoff && finished && Cbc_isProvenInfeasible(m)) {
      state.proved = true;  // nothing is cheaper than the best choice known
      st.lower_bound_ms = state.best->cost_ms;
    } else {
      state.failure = absl::StrCat("CBC found no solution (status ", Cbc_status(m), ", secondary ",
                                   Cbc_secondaryStatus(m), ")");
    }
    return false;
  }
  std::vector<int> pick(p.class_id.size(), -1);
  // Every e-node of a chosen column: collapsed classes share their reader's.
  for (size_t n = 0; n < p.node_id.size(); ++n) {
    if (model.column[n] >= 0 && solution[model.column[n]] > 0.5) pick[p.node_class[n]] = static_cast<int>(n);
  }
  if (absl::Status s = RestrictPick(p, pick); !s.ok()) {
    state.failure = absl::StrCat("CBC's solution is incomplete: ", s.message());
    return false;
  }
  const bool optimal = finished && Cbc_isProvenOptimal(m) != 0;
  std::vector<std::vector<int>> cycles = FindCycles(p, pick);
  if (cycles.empty()) {
    const double cost = PickCost(p, pick);
    if (!state.best.has_value() || cost < state.best->cost_ms) state.best = ProblemChoice{pick, cost, false, false};
    state.proved = optimal;
    state.timed_out = out_of_time;
    st.lower_bound_ms = optimal ? cost : std::max(st.lower_bound_ms, Cbc_getBestPossibleObjValue(m) / 1000);
    return false;
  }
  // Not expected with order variables or a linear order: they forbid cycles.
  if (settings.acyclicity == IlpSettings::Acyclicity::kOrderVariables) state.failure = "CBC's solution is cyclic";
  ++st.cyclic_solutions;
  if (optimal) st.lower_bound_ms = std::max(st.lower_bound_ms, Cbc_getObjValue(m) / 1000);
  const int added = RepairAndCut(p, domain, pick, std::move(cycles), model, state);
  st.cycle_cuts += added;
  if (added == 0 && state.failure.empty()) state.failure = "a cycle came back after its cut";  // not expected
  if (out_of_time) {
    state.timed_out = true;
    return false;
  }
  return state.failure.empty();
}

// Solves the model, and with lazy cuts, forbids the cycles of each solution
// and solves again, until a solution is acyclic, time runs out or CBC fails.
absl::Status SolveLoop(const ExtractionProblem& p, const IlpDomain& domain, const IlpSettings& settings,
                       absl::Time deadline, IlpModel& model, SolveState& state, IlpStats& st) {
  for (bool again = true; again;) {
    const double remaining = absl::ToDoubleSeconds(deadline - absl::Now());
    if (remaining < 0.05) {
      state.timed_out = true;
      break;
    }
    LinearProgram lp = model.base;
    for (size_t k = model.base_cuts; k < model.cuts.size(); ++k) model.AddCut(p, domain, lp, model.cuts[k]);
    st.columns = lp.columns();
    st.rows = lp.rows();
    st.nonzeros = lp.nonzeros();
    std::unique_ptr<Cbc_Model, CbcDeleter> cbc(Cbc_newModel());
    if (cbc == nullptr) return absl::InternalError("CBC could not create a model");
    Cbc_Model* m = cbc.get();
    Cbc_setLogLevel(m, settings.log_level);
    lp.LoadInto(m);
    if (state.best.has_value()) WarmStart(p, model, *state.best, settings, m);
    for (const auto& [name, value] : kCbcParameters) Cbc_setParameter(m, name, value);
    for (const auto& [name, value] : settings.cbc_parameters) Cbc_setParameter(m, name.c_str(), value.c_str());
    Cbc_setMaximumSeconds(m, remaining);
    Cbc_solve(m);
    ++st.solves;
    // CBC's statuses are not to be trusted once it ran out of time (cut
    // short in preprocessing it can call a feasible problem infeasible), so
    // the clock has the last word.
    const bool out_of_time = Cbc_isSecondsLimitReached(m) != 0 || absl::Now() >= deadline;
    const bool cutoff = state.best.has_value() && settings.warm_start == IlpSettings::WarmStart::kCutoff;
    again = ReadSolution(p, domain, settings, m, cutoff, out_of_time, model, state, st);
  }
  return absl::OkStatus();
}

// What a solve starts from: the best choice known, the e-nodes CBC sees and
// the model over them.
struct Prepared {
  std::optional<ProblemChoice> best;
  IlpDomain domain;
  IlpModel model;
};

absl::StatusOr<Prepared> Prepare(const ExtractionProblem& p, const ProblemChoice* warm_start,
                                 const IlpSettings& settings, IlpStats& st) {
  st = IlpStats{};
  st.classes = static_cast<int>(p.class_id.size());
  st.enodes = static_cast<int>(p.node_id.size());
  for (int r : p.roots) {
    if (p.class_nodes[r].empty()) {
      return absl::NotFoundError(absl::StrCat("output class ", p.class_id[r], " has no e-node of known cost"));
    }
  }
  Prepared out;
  out.best = StartingPoint(p, warm_start);
  auto domain = ilp_internal::ChooseDomain(p, out.best.has_value() ? &*out.best : nullptr, settings, st);
  if (!domain.ok()) return domain.status();
  out.domain = *std::move(domain);
  out.model = ilp_internal::BuildIlpModel(p, out.domain, settings, st);
  return out;
}

}  // namespace

absl::StatusOr<ProblemChoice> SolveIlp(const ExtractionProblem& p, absl::Duration time_limit,
                                       const ProblemChoice* warm_start, const IlpSettings& settings,
                                       IlpStats* stats) {
  const absl::Time deadline = absl::Now() + time_limit;
  IlpStats local_stats;
  IlpStats& st = stats != nullptr ? *stats : local_stats;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Under gcc 12's sanitizers a forked child of a threaded process can hang
  // on the sanitizer allocator's lock (seen: 1 run in 5 of eqsat_test under
  // ASan), so sanitizer builds solve in process.
  constexpr bool kCanFork = false;
#else
  constexpr bool kCanFork = true;
#endif
  if (settings.isolate && kCanFork) return ilp_internal::SolveIlpIsolated(p, time_limit, warm_start, settings, st);
  auto prepared = Prepare(p, warm_start, settings, st);
  if (!prepared.ok()) return prepared.status();
  SolveState state;
  state.best = std::move(prepared->best);
  st.prepare_seconds = absl::ToDoubleSeconds(time_limit - (deadline - absl::Now()));
  if (absl::Status s = SolveLoop(p, prepared->domain, settings, deadline, prepared->model, state, st); !s.ok()) {
    return s;
  }

  st.outcome = state.proved      ? "optimal"
               : state.timed_out ? "time limit"
               : state.failure.empty() ? "stopped"
                                       : state.failure;
  if (!state.best.has_value()) {
    if (state.timed_out) return absl::UnavailableError("CBC found no acyclic solution within its time limit");
    return absl::InternalError(state.failure.empty() ? "CBC found no acyclic solution" : state.failure);
  }
  state.best->optimal = state.proved;
  state.best->time_limited = state.timed_out && !state.proved;
  // CBC's bound after a time limit may be none (-infinity) or, cut short in
  // preprocessing, not a bound at all: only [0, incumbent] is believed.
  const double bound = state.proved ? state.best->cost_ms : st.lower_bound_ms;
  state.best->lower_bound_ms = std::isfinite(bound) ? std::clamp(bound, 0.0, state.best->cost_ms) : 0.0;
  return *state.best;
}

absl::StatusOr<std::vector<double>> SolveIlpRelaxation(const ExtractionProblem& p, const IlpSettings& settings,
                                                       IlpStats* stats) {
  IlpStats local_stats;
  IlpStats& st = stats != nullptr ? *stats : local_stats;
  auto prepared = Prepare(p, nullptr, settings, st);
  if (!prepared.ok()) return prepared.status();
  const IlpModel& model = prepared->model;
  std::unique_ptr<Cbc_Model, CbcDeleter> cbc(Cbc_newModel());
  if (cbc == nullptr) return absl::InternalError("CBC could not create a model");
  Cbc_setLogLevel(cbc.get(), settings.log_level);
  model.base.LoadInto(cbc.get(), /*relaxed=*/true);
  Cbc_solve(cbc.get());
  const double* solution = Cbc_getColSolution(cbc.get());
  if (solution == nullptr || Cbc_isProvenOptimal(cbc.get()) == 0) return absl::InternalError("the relaxation was not solved");
  st.lower_bound_ms = Cbc_getObjValue(cbc.get()) / 1000;
  std::vector<double> x(p.node_id.size(), 0.0);
  for (size_t n = 0; n < p.node_id.size(); ++n) {
    if (model.column[n] >= 0) x[n] = solution[model.column[n]];
  }
  return x;
}

}  // namespace taso::optimizer
