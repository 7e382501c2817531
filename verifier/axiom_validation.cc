#include "verifier/axiom_validation.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/proof_signature.h"
#include "verifier/axiom_instances.h"
#include "verifier/axioms.h"

namespace taso::verifier {
namespace {

using internal::AxiomInstanceChecker;
using internal::AxiomSource;
using internal::StratumOutcome;

std::vector<int64_t> Range(int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t v = lo; v <= hi; ++v) out.push_back(v);
  return out;
}

// Every assignment of `params` over their domains, the first parameter
// varying slowest.
std::vector<std::vector<int64_t>> Assignments(const std::vector<std::string>& params, int max_dim) {
  std::vector<std::vector<int64_t>> out = {{}};
  for (const std::string& p : params) {
    std::vector<std::vector<int64_t>> next;
    for (const auto& prefix : out) {
      for (int64_t v : IntDomain(p, max_dim)) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    }
    out = std::move(next);
  }
  return out;
}

// One axiom's strata and what they found, in stratum order.
struct AxiomWork {
  AxiomSource source;
  std::vector<std::string> params;
  std::vector<std::vector<int64_t>> strata;
  std::vector<StratumOutcome> outcomes;
  size_t remaining = 0;
  AxiomValidation result;  // filled when the axiom cannot be built, else by Summarize
};

void Summarize(AxiomWork& w) {
  AxiomValidation& r = w.result;
  r.name = w.source.name;
  r.strata = static_cast<int64_t>(w.strata.size());
  for (size_t s = 0; s < w.strata.size(); ++s) {
    const StratumOutcome& o = w.outcomes[s];
    r.instances += o.instances;
    r.held += o.held;
    r.failed += o.failed;
    r.unknown += o.unknown;
    r.ill_typed += o.ill_typed;
    r.triggered += o.triggered;
    r.one_sided += o.one_sided;
    r.capped_strata += o.capped ? 1 : 0;
    r.seconds += o.seconds;
    if (r.counterexample.empty()) r.counterexample = o.counterexample;
    Stratum named;
    for (size_t i = 0; i < w.params.size(); ++i) {
      named.emplace_back(w.params[i], w.strata[s][i]);
      r.by_param[w.params[i]][w.strata[s][i]] += o.instances;
    }
    if (o.instances == 0) r.empty_strata.push_back(std::move(named));
  }
}

std::string ProgressLine(const AxiomValidation& r) {
  return absl::StrCat(r.name, ": ", r.instances, " instances, ", r.held, " held, ", r.failed, " failed, ", r.unknown,
                      " unknown, ", r.ill_typed, " ill-typed, ", r.one_sided, " one-sided of ", r.triggered,
                      " triggered, ", r.strata, " strata (", r.empty_strata.size(),
                      " empty) (", static_cast<int>(r.seconds * 1000), " ms)");
}

}  // namespace

std::string StratumToString(const Stratum& s) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : s) parts.push_back(absl::StrCat(name, "=", value));
  return parts.empty() ? "(no parameters)" : absl::StrJoin(parts, " ");
}

std::vector<int64_t> IntDomain(const std::string& name, int max_dim) {
  // Sizes follow the tensors' dimensions: a group count or channel count
  // above max_dim has no instance, and one below it would go unchecked.
  const std::vector<int64_t> sizes = Range(1, max_dim);
  if (name == "sh" || name == "sw") return {1, 2};
  if (name == "pad") return {kPadSame, kPadValid};
  if (name == "act") return {kActNone, kActRelu};  // the activations proof signatures model
  if (name == "kh" || name == "kw") return {1, 3};
  if (name == "a") return {0, 1, 2, 3};  // every axis of the ranks tried
  if (name == "p") return {20002};       // the 2-D transpose
  if (name == "include_pad") return {0, 1};
  if (name == "groups" || name == "channels" || name == "n") return sizes;
  if (name == "d0" || name == "d1" || name == "d2" || name == "d3") return sizes;
  if (absl::StartsWith(name, "even")) return {0, 1};  // a concat's equal-halves flag
  return {0, 1, 2};
}

absl::StatusOr<std::vector<AxiomValidation>> ValidateAxioms(const ValidationOptions& options) {
  for (const std::string& name : options.only) {
    if (std::none_of(AxiomList().begin(), AxiomList().end(), [&](const AxiomInfo& a) { return a.name == name; })) {
      return absl::InvalidArgumentError(absl::StrCat("no axiom named '", name, "'"));
    }
  }
  if (options.max_instances_per_stratum < 0) {
    return absl::InvalidArgumentError("the per-stratum budget must be 0 (all) or positive");
  }
  const int max_dim = std::clamp(options.max_dim, 1, 4);
  std::vector<AxiomWork> work;
  for (const AxiomInfo& a : AxiomList()) {
    if (options.only.empty() || options.only.count(a.name)) work.push_back({{a.name, ""}});
  }
  for (size_t k = 0; k < options.extra_axioms_smt2.size(); ++k) {
    work.push_back({{absl::StrCat("extra", k), options.extra_axioms_smt2[k]}});
  }
  const auto shapes = internal::CandidateShapes(max_dim);
  // Strata come from the axiom itself: build each once to read its parameters.
  struct Item {
    size_t axiom, stratum;
  };
  std::vector<Item> items;
  for (size_t i = 0; i < work.size(); ++i) {
    AxiomWork& w = work[i];
    auto checker = AxiomInstanceChecker::Create(w.source, shapes, options.rlimit);
    if (!checker.ok()) {
      w.result.name = w.source.name;
      w.result.failed = 1;
      w.result.counterexample = std::string(checker.status().message());
      if (options.progress) options.progress(ProgressLine(w.result));
      continue;
    }
    w.params = (*checker)->IntParams();
    w.strata = Assignments(w.params, max_dim);
    w.outcomes.resize(w.strata.size());
    w.remaining = w.strata.size();
    for (size_t s = 0; s < w.strata.size(); ++s) items.push_back({i, s});
  }

  // Strata are the unit of work, so one slow axiom spreads over the threads;
  // a thread keeps its checker while consecutive strata share an axiom.
  std::atomic<size_t> next{0};
  std::mutex mu;
  auto worker = [&] {
    std::unique_ptr<AxiomInstanceChecker> checker;
    size_t checker_axiom = work.size();
    for (size_t k; (k = next.fetch_add(1)) < items.size();) {
      const Item item = items[k];
      AxiomWork& w = work[item.axiom];
      StratumOutcome outcome;
      if (checker_axiom != item.axiom) {
        auto created = AxiomInstanceChecker::Create(w.source, shapes, options.rlimit);
        checker_axiom = item.axiom;
        checker = created.ok() ? std::move(*created) : nullptr;
        if (!created.ok()) {
          outcome.failed = 1;
          outcome.counterexample = std::string(created.status().message());
        }
      }
      if (checker) outcome = checker->Run(w.strata[item.stratum], options.max_instances_per_stratum);
      std::lock_guard<std::mutex> lock(mu);
      w.outcomes[item.stratum] = std::move(outcome);
      if (--w.remaining == 0) {
        Summarize(w);
        if (options.progress) options.progress(ProgressLine(w.result));
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, options.threads); ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  std::vector<AxiomValidation> results;
  for (AxiomWork& w : work) results.push_back(std::move(w.result));
  return results;
}

}  // namespace taso::verifier
