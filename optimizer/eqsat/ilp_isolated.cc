// The extraction ILP in a child process (IlpSettings::isolate): CBC calls
// exit() when an allocation fails, and a solver's crash must not end the
// service whose search asked for it. The child solves with a cap on how far
// its address space may grow and writes the choice and the stats back as
// text; any failure of the child is an error the caller answers with the
// greedy choice.
#include <sys/resource.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/isolated_call.h"
#include "core/proc_status.h"
#include "optimizer/eqsat/ilp_internal.h"

namespace taso::optimizer::ilp_internal {
namespace {

// Caps this process's address space at what it has plus `extra_mb`. Mapped
// memory the child shares with its parent counts, so the cap is relative.
void CapMemory(int64_t extra_mb) {
  const int64_t now_kib = ProcStatusKib(0, "VmSize");
  if (extra_mb <= 0 || now_kib <= 0) return;
  const uint64_t cap = (static_cast<uint64_t>(now_kib) << 10) + (static_cast<uint64_t>(extra_mb) << 20);
  rlimit limit{cap, cap};
  setrlimit(RLIMIT_AS, &limit);
}

std::string Double(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", v);
  return buffer;
}

// One line of ints, doubles and bools each, the outcome, then the pick.
std::string Encode(const ProblemChoice& c, const IlpStats& s) {
  std::string out;
  for (int v : {s.classes, s.enodes, s.model_classes, s.model_enodes, s.pruned_by_bound, s.pruned_by_dominance,
                s.must_classes, s.needed_rows, s.collapsed_classes, s.acyclic_child_rows, s.ordered_components,
                s.upfront_cycles, s.columns, s.rows, s.nonzeros, s.solves, s.cycle_cuts, s.cyclic_solutions}) {
    absl::StrAppend(&out, v, " ");
  }
  absl::StrAppend(&out, "\n", Double(s.prepare_seconds), " ", Double(s.lower_bound_ms), " ", Double(c.cost_ms), " ",
                  Double(c.lower_bound_ms), "\n", s.all_cycles_upfront, " ", c.optimal, " ", c.time_limited, " ",
                  c.kept_earlier, "\n", s.outcome, "\n", c.pick.size());
  for (int v : c.pick) absl::StrAppend(&out, " ", v);
  return out;
}

absl::Status Decode(const std::string& text, ProblemChoice& c, IlpStats& s) {
  std::istringstream in(text);
  for (int* v : {&s.classes, &s.enodes, &s.model_classes, &s.model_enodes, &s.pruned_by_bound, &s.pruned_by_dominance,
                 &s.must_classes, &s.needed_rows, &s.collapsed_classes, &s.acyclic_child_rows, &s.ordered_components,
                 &s.upfront_cycles, &s.columns, &s.rows, &s.nonzeros, &s.solves, &s.cycle_cuts, &s.cyclic_solutions}) {
    in >> *v;
  }
  in >> s.prepare_seconds >> s.lower_bound_ms >> c.cost_ms >> c.lower_bound_ms >> s.all_cycles_upfront >> c.optimal >>
      c.time_limited >> c.kept_earlier;
  in.ignore(1, '\n');
  std::getline(in, s.outcome);
  size_t n = 0;
  in >> n;
  c.pick.resize(n);
  for (int& v : c.pick) in >> v;
  if (!in) return absl::InternalError("the ILP child's result could not be read");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ProblemChoice> SolveIlpIsolated(const ExtractionProblem& p, absl::Duration time_limit,
                                               const ProblemChoice* warm_start, const IlpSettings& settings,
                                               IlpStats& stats) {
  IlpSettings in_child = settings;
  in_child.isolate = false;
  // CBC may overrun its limit a little; past this the child is stuck.
  const absl::Duration timeout = time_limit + absl::Seconds(30) + time_limit / 4;
  auto text = RunIsolated(
      [&]() -> absl::StatusOr<std::string> {
        CapMemory(settings.child_memory_mb);
        IlpStats child_stats;
        auto choice = SolveIlp(p, time_limit, warm_start, in_child, &child_stats);
        if (!choice.ok()) return choice.status();
        return Encode(*choice, child_stats);
      },
      timeout, "the extraction ILP (CBC, in a child process)");
  if (!text.ok()) {
    stats.outcome = std::string(text.status().message());
    // A child that ran out of memory, or ended without a result or by a
    // signal under a memory cap, most likely hit the cap (CBC exits when an
    // allocation fails).
    const absl::StatusCode code = text.status().code();
    if (settings.child_memory_mb > 0 && (code == absl::StatusCode::kResourceExhausted ||
                                         code == absl::StatusCode::kInternal || code == absl::StatusCode::kAborted)) {
      return absl::ResourceExhaustedError(absl::StrCat(text.status().message(), "; its memory cap was ",
                                                       settings.child_memory_mb, " MB"));
    }
    return text.status();
  }
  ProblemChoice choice;
  if (absl::Status s = Decode(*text, choice, stats); !s.ok()) return s;
  return choice;
}

}  // namespace taso::optimizer::ilp_internal
