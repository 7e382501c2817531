#include "verifier/prover.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "verifier/axioms.h"
#include "verifier/symbols.h"
#include "z3++.h"
#include "z3_version.h"

// tcmalloc's (third_party:tcmalloc) call that hands freed memory back to the
// system; weak, so a build without it (the sanitizers') links too.
extern "C" void MallocExtension_ReleaseFreeMemory(void) __attribute__((weak));

namespace taso::verifier {

const char* ProofOutcomeName(ProofOutcome outcome) {
  switch (outcome) {
    case ProofOutcome::kProved: return "proved";
    case ProofOutcome::kRefuted: return "refuted";
    case ProofOutcome::kTimeout: return "timeout";
    case ProofOutcome::kUnknown: return "unknown";
  }
  return "?";
}

const char* SolverName() { return "z3 " Z3_FULL_VERSION; }

namespace {

// Whether Z3 stopped at SetSolverMemoryLimitMib's cap: the exception it
// throws, or a solver's reason for giving up.
bool IsMemout(z3::context& ctx, const z3::exception& e) {
  return Z3_get_error_code(ctx) == Z3_MEMOUT_FAIL || std::string(e.msg()).find("out of memory") != std::string::npos;
}
bool IsMemout(const std::string& reason_unknown) {
  return reason_unknown.find("memout") != std::string::npos ||
         reason_unknown.find("out of memory") != std::string::npos;
}

// A Z3 context made through the C API, which returns null where z3++'s
// constructor would go on with a null context (and crash): Z3 cannot start
// one when the memory cap (SetSolverMemoryLimitMib) leaves it no room.
class OwnedContext {
 public:
  explicit OwnedContext(Z3_context c) : scoped_(c) {}
  ~OwnedContext() { Z3_del_context(scoped_()); }  // scoped_ then lets go without deleting
  OwnedContext(const OwnedContext&) = delete;
  OwnedContext& operator=(const OwnedContext&) = delete;
  z3::context& get() { return scoped_(); }

 private:
  z3::scoped_context scoped_;
};

}  // namespace

struct Prover::Impl {
  explicit Impl(Z3_context c) : owned(c) {}
  ProverOptions options;
  OwnedContext owned;  // before everything made in it, so it goes last
  z3::context& ctx = owned.get();
  Symbols symbols{ctx};
  std::vector<BuiltAxiom> axioms;
  std::vector<z3::expr> guards;  // guards[i] guards axioms[i]
  std::string version;

  struct Attempt {
    z3::check_result result = z3::unknown;
    std::string reason;
    std::vector<std::string> core;
    bool out_of_memory = false;  // the context is not to be used again
  };

  // One solver per limit for the prover's life: the guarded axioms are
  // asserted once, each query is a push/pop scope, and the assumptions pick
  // the axioms. Per limit, because setting a solver's parameters updates
  // every module it holds (once per query, that was most of a small proof's
  // time); Z3 applies a solver's rlimit and timeout at each check.
  std::map<uint64_t, std::unique_ptr<z3::solver>> solvers;

  z3::solver& SolverFor(uint64_t rlimit) {
    std::unique_ptr<z3::solver>& solver = solvers[rlimit];
    if (!solver) {
      solver = std::make_unique<z3::solver>(ctx);
      for (size_t i = 0; i < axioms.size(); ++i) solver->add(z3::implies(guards[i], axioms[i].formula));
      z3::params params(ctx);
      if (rlimit > 0) params.set("rlimit", static_cast<unsigned>(std::min<uint64_t>(rlimit, UINT32_MAX)));
      params.set("mbqi", options.mbqi);
      if (options.timeout_ms > 0) params.set("timeout", options.timeout_ms);
      solver->set(params);
    }
    return *solver;
  }

  Attempt Check(const std::vector<size_t>& chosen, const z3::expr& goal_negated, uint64_t rlimit) {
    z3::solver& solver = SolverFor(rlimit);
    z3::expr_vector assumptions(ctx);
    for (size_t i : chosen) assumptions.push_back(guards[i]);
    solver.push();
    struct Pop {
      z3::solver& s;
      bool skip = false;
      ~Pop() {
        if (skip) return;
        try {
          s.pop();
        } catch (const z3::exception&) {
          // Only when unwinding from a memout: the context is dropped anyway.
        }
      }
    } pop{solver};
    solver.add(goal_negated);
    Attempt attempt;
    try {
      attempt.result = solver.check(assumptions);
    } catch (const z3::exception& e) {
      if (!IsMemout(ctx, e)) throw;
      // Past SetSolverMemoryLimitMib's cap. The context is dropped, not
      // popped: popping can allocate, and so throw again.
      pop.skip = true;
      attempt.result = z3::unknown;
      attempt.reason = "memout: past the Z3 memory cap";
      attempt.out_of_memory = true;
      return attempt;
    }
    if (attempt.result == z3::unsat) {
      z3::expr_vector core = solver.unsat_core();
      for (unsigned k = 0; k < core.size(); ++k) {
        for (size_t i : chosen) {
          if (z3::eq(core[k], guards[i])) attempt.core.push_back(axioms[i].info.name);
        }
      }
      std::sort(attempt.core.begin(), attempt.core.end());
    } else if (attempt.result == z3::unknown) {
      attempt.reason = solver.reason_unknown();
      // Should a solver absorb the cap's exception and give up instead.
      attempt.out_of_memory = IsMemout(attempt.reason);
    }
    return attempt;
  }
};

Prover::Prover(std::unique_ptr<Impl> impl)
    : options_(impl->options), version_(impl->version), impl_(std::move(impl)) {}
Prover::~Prover() = default;

const std::string& Prover::axiom_set_version() const { return version_; }

double Prover::SecondsInQuery() const {
  const int64_t started = query_started_ns_;
  if (started == 0) return 0;
  const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  return std::chrono::duration<double>(std::chrono::steady_clock::duration(now - started)).count();
}

namespace {

// Freed memory back to the system: tcmalloc's call when the binary links it,
// else glibc's trim.
void ReleaseFreeMemory() {
  if (MallocExtension_ReleaseFreeMemory != nullptr) {
    MallocExtension_ReleaseFreeMemory();
  } else {
    malloc_trim(0);
  }
}

}  // namespace

double SolverMemoryMib() { return static_cast<double>(Z3_get_estimated_alloc_size()) / (1 << 20); }

namespace {

std::atomic<uint64_t> memory_cap_mib{0};
// What the first context made in this process took, in KiB (0: none made
// yet): a context is tried only where it fits, because one that fails part
// way leaves what it had allocated behind in Z3.
std::atomic<int64_t> context_kib{0};

bool RoomForAContext() {
  const uint64_t cap = memory_cap_mib.load();
  const int64_t need_kib = context_kib.load();
  return cap == 0 || need_kib == 0 || SolverMemoryMib() + static_cast<double>(need_kib) / 1024 < static_cast<double>(cap);
}

}  // namespace

double SolverContextMib() { return static_cast<double>(context_kib.load()) / 1024; }

void SetSolverMemoryLimitMib(uint64_t mib) {
  Z3_global_param_set("memory_max_size", absl::StrCat(mib).c_str());
  memory_cap_mib = mib;
}

absl::StatusOr<std::unique_ptr<Prover>> Prover::Create(const ProverOptions& options) {
  auto impl = CreateImpl(options);
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<Prover>(new Prover(std::move(*impl)));
}

void Prover::RenewIfLarge() {
  const uint64_t bound = options_.renew_above_mib;
  const bool large = bound > 0 && SolverMemoryMib() > static_cast<double>(bound);
  if (impl_ != nullptr && !large && !out_of_memory_) return;
  impl_.reset();  // first, so the old context's memory is free for the new one
  out_of_memory_ = false;
  // Z3 freed the context's memory; hand the freed pages back to the system.
  ReleaseFreeMemory();
  // When Z3 has no room for a new context (other threads' contexts fill the
  // cap), the next query tries again.
  auto impl = CreateImpl(options_);
  if (!impl.ok()) {
    no_context_ = impl.status();
    return;
  }
  impl_ = std::move(*impl);
  ++renewals_;
}

absl::StatusOr<std::unique_ptr<Prover::Impl>> Prover::CreateImpl(const ProverOptions& options) {
  auto no_room = [] {
    return absl::ResourceExhaustedError(absl::StrCat(
        "memout: Z3 has no room for a new context under its memory cap (Z3 holds ",
        static_cast<int64_t>(SolverMemoryMib()), " MiB in this process; taso_verifier --z3_memory_mib)"));
  };
  if (!RoomForAContext()) return no_room();
  const double before_mib = SolverMemoryMib();
  Z3_context c = nullptr;
  try {
    z3::config config;
    c = Z3_mk_context_rc(config);
  } catch (...) {  // Z3's own out-of-memory error, thrown where no context handles it
    c = nullptr;
  }
  if (c == nullptr) return no_room();
  std::unique_ptr<Impl> impl;
  try {
    impl = std::make_unique<Impl>(c);
  } catch (const z3::exception&) {
    return no_room();  // the context went with the half-made Impl
  }
  impl->options = options;
  try {
    auto axioms = BuildAxioms(impl->symbols, {}, options.skip_axioms);
    if (axioms.status().code() == absl::StatusCode::kResourceExhausted) return no_room();
    if (!axioms.ok()) return axioms.status();
    impl->axioms = std::move(*axioms);
    impl->version = AxiomSetVersion();
    for (size_t k = 0; k < options.extra_axioms_smt2.size(); ++k) {
      z3::expr_vector parsed(impl->ctx);
      try {
        parsed = impl->symbols.ParseSmt2(options.extra_axioms_smt2[k]);
      } catch (const z3::exception& e) {
        if (IsMemout(impl->ctx, e)) throw;
        return absl::InvalidArgumentError(absl::StrCat("extra axiom: ", e.msg()));
      }
      for (unsigned j = 0; j < parsed.size(); ++j) {
        impl->axioms.push_back(BuiltAxiom{AxiomInfo{absl::StrCat("extra", k), options.extra_axioms_smt2[k]},
                                          parsed[j], {}});
      }
    }
    if (!options.extra_axioms_smt2.empty()) {
      impl->version += absl::StrCat("+", options.extra_axioms_smt2.size(), "extra");
    }
    for (size_t i = 0; i < impl->axioms.size(); ++i) {
      impl->guards.push_back(impl->ctx.bool_const(absl::StrCat("axiom!", i).c_str()));
    }
  } catch (const z3::exception& e) {
    if (IsMemout(impl->ctx, e)) return no_room();
    return absl::InternalError(absl::StrCat("z3, building the axioms: ", e.msg()));
  }
  int64_t unknown = 0;  // other threads' allocations blur later measures: the first one stands
  context_kib.compare_exchange_strong(
      unknown, std::max<int64_t>(1024, static_cast<int64_t>((SolverMemoryMib() - before_mib) * 1024)));
  return impl;
}

absl::StatusOr<ProofResult> Prover::ProveWith(const Graph& source, const Graph& target,
                                              const std::vector<std::pair<int, int>>& outputs, OpenFacts open,
                                              const std::vector<std::string>* only) {
  const auto start = std::chrono::steady_clock::now();
  if (outputs.empty()) return absl::InvalidArgumentError("no output pairs to prove");
  if (out_of_memory_ || impl_ == nullptr) RenewIfLarge();
  if (impl_ == nullptr) return no_context_;  // still no room
  Impl& m = *impl_;
  std::set<std::string> functions;
  ProofResult result;
  OpenFactScope scope{open, m.symbols.FreshPrefix("fact"), {}};
  OpenFactScope* opened = open == OpenFacts::kNone ? nullptr : &scope;
  // Z3 may pass the memory cap anywhere: building terms, asserting, checking.
  auto out_of_memory = [&](const z3::exception& e) -> absl::StatusOr<ProofResult> {
    if (!IsMemout(m.ctx, e)) return absl::InternalError(absl::StrCat("z3: ", e.msg()));
    out_of_memory_ = true;
    ProofResult memout;
    memout.outcome = ProofOutcome::kTimeout;
    memout.detail = "memout: past the Z3 memory cap";
    memout.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return memout;
  };
  absl::StatusOr<std::vector<z3::expr>> src = absl::UnknownError(""), tgt = absl::UnknownError("");
  try {
    src = GraphTerms(m.symbols, source, &functions, &result.conditions.source, opened);
    if (src.ok()) tgt = GraphTerms(m.symbols, target, &functions, &result.conditions.target, opened);
  } catch (const z3::exception& e) {
    return out_of_memory(e);
  }
  if (!src.ok()) return absl::Status(src.status().code(), absl::StrCat("source: ", src.status().message()));
  if (!tgt.ok()) return absl::Status(tgt.status().code(), absl::StrCat("target: ", tgt.status().message()));
  try {
    z3::expr_vector differ(m.ctx);
    for (const auto& [s, t] : outputs) {
      if (s < 0 || s >= static_cast<int>(src->size()) || t < 0 || t >= static_cast<int>(tgt->size())) {
        return absl::InvalidArgumentError(absl::StrCat("output pair (", s, ", ", t, ") is out of range: the source has ",
                                                       src->size(), " outputs, the target ", tgt->size()));
      }
      differ.push_back((*src)[s] != (*tgt)[t]);
    }
    const z3::expr goal_negated = z3::mk_or(differ);

    std::vector<std::vector<size_t>> stages;
    std::vector<size_t> all(m.axioms.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    if (only != nullptr) {
      std::vector<size_t> named;
      for (const std::string& name : *only) {
        auto it = std::find_if(m.axioms.begin(), m.axioms.end(),
                               [&](const BuiltAxiom& a) { return a.info.name == name; });
        if (it == m.axioms.end()) {
          result.outcome = ProofOutcome::kUnknown;
          result.detail = absl::StrCat("the claimed proof names axiom ", name, ", which this prover does not have");
          return result;
        }
        named.push_back(static_cast<size_t>(it - m.axioms.begin()));
      }
      stages.push_back(std::move(named));
    } else if (m.options.relevance_filter) {
      std::vector<size_t> relevant;
      for (size_t i = 0; i < m.axioms.size(); ++i) {
        const auto& f = m.axioms[i].functions;
        if (std::all_of(f.begin(), f.end(), [&](const std::string& n) { return functions.count(n) > 0; })) {
          relevant.push_back(i);
        }
      }
      if (relevant.size() < all.size()) stages.push_back(std::move(relevant));
    }
    if (only == nullptr) stages.push_back(all);

    std::vector<std::string> attempts;
    for (const auto& chosen : stages) {
      const bool everything = chosen.size() == all.size();
      ++queries_;
      query_started_ns_ = std::chrono::steady_clock::now().time_since_epoch().count();
      struct QueryEnd {
        std::atomic<int64_t>& started;
        ~QueryEnd() { started = 0; }  // a Z3 exception too
      } query_end{query_started_ns_};
      Impl::Attempt a = m.Check(chosen, goal_negated, everything ? m.options.rlimit : m.options.relevant_rlimit);
      const std::string label = everything ? "all axioms"
                                : absl::StrCat(chosen.size(), only != nullptr ? " claimed axioms" : " relevant axioms");
      if (a.result == z3::unsat) {
        result.outcome = ProofOutcome::kProved;
        result.axioms_used = std::move(a.core);
        attempts.clear();
        break;
      }
      if (a.result == z3::sat) {
        result.outcome = ProofOutcome::kRefuted;
        attempts.push_back(absl::StrCat(label, ": Z3 found a model of the axioms in which the outputs differ"));
      } else {
        const bool out_of_budget = a.out_of_memory || a.reason.find("resource") != std::string::npos ||
                                   a.reason.find("timeout") != std::string::npos ||
                                   a.reason.find("canceled") != std::string::npos;
        result.outcome = out_of_budget ? ProofOutcome::kTimeout : ProofOutcome::kUnknown;
        attempts.push_back(absl::StrCat(label, ": ", a.reason));
      }
      if (a.out_of_memory) {
        out_of_memory_ = true;  // no further stage on this context
        break;
      }
    }
    result.detail = absl::StrJoin(attempts, "; ");
  } catch (const z3::exception& e) {
    return out_of_memory(e);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

namespace {

// Whether `open` opens some fact of the rule's conditions.
bool HasOpenableFact(const RuleConditions& conditions, OpenFacts open) {
  for (const GraphConditions* side : {&conditions.source, &conditions.target}) {
    for (const auto& node : *side) {
      for (const ProofSignature& sig : node) {
        if (OpensFact(open, sig)) return true;
      }
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<ProofResult> Prover::CheckClaim(const Graph& source, const Graph& target,
                                               const std::vector<std::pair<int, int>>& outputs, OpenFacts open,
                                               const std::vector<std::string>& axioms) {
  auto result = ProveWith(source, target, outputs, open, &axioms);
  RenewIfLarge();
  return result;
}

absl::StatusOr<ProofResult> Prover::Prove(const Graph& source, const Graph& target,
                                          const std::vector<std::pair<int, int>>& outputs) {
  auto proof = ProveGeneral(source, target, outputs);
  RenewIfLarge();
  return proof;
}

absl::StatusOr<ProofResult> Prover::ProveGeneral(const Graph& source, const Graph& target,
                                                 const std::vector<std::pair<int, int>>& outputs) {
  auto proof = ProveWith(source, target, outputs, OpenFacts::kNone);
  if (!proof.ok() || proof->outcome != ProofOutcome::kProved) return proof;
  // The rule holds at its own shapes. Record the most general conditions a
  // proof also holds under, so it applies wherever that proof does: every
  // open fact first, then each kind alone. With one kind of fact, opening
  // every fact is opening that kind: tried once (these attempts are over half
  // of a verifier's Z3 time, the failed ones the dearest).
  const bool halves = HasOpenableFact(proof->conditions, OpenFacts::kConcatHalves);
  const bool groups = HasOpenableFact(proof->conditions, OpenFacts::kConvGroups);
  std::vector<OpenFacts> attempts;
  if (halves && groups) attempts = {OpenFacts::kAll, OpenFacts::kConcatHalves, OpenFacts::kConvGroups};
  if (halves != groups) attempts = {halves ? OpenFacts::kConcatHalves : OpenFacts::kConvGroups};
  // Concats with equal and with unequal halves together: a law stated for
  // equal halves (the concat interchange) may need those closed while the
  // others stay open. Tried last, and only where opening every concat failed.
  if (halves && !groups && HasOpenableFact(proof->conditions, OpenFacts::kConcatUnequalHalves) &&
      HasOpenableFact(proof->conditions, OpenFacts::kConcatEqualHalves)) {
    attempts.push_back(OpenFacts::kConcatUnequalHalves);
    attempts.push_back(OpenFacts::kConcatEqualHalves);
  }
  for (OpenFacts open : attempts) {
    // Out of memory: the proof stands with its conditions as they are.
    if (out_of_memory_) break;
    auto general = ProveWith(source, target, outputs, open);
    if (!general.ok()) return general.status();
    proof->seconds += general->seconds;
    if (general->outcome == ProofOutcome::kProved) {
      proof->conditions = std::move(general->conditions);
      proof->axioms_used = std::move(general->axioms_used);
      break;
    }
  }
  return proof;
}

}  // namespace taso::verifier
