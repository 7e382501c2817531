#include "verifier/precheck.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/graph_proto.h"
#include "core/proof_signature.h"
#include "core/interpreter.h"
#include "core/random_inputs.h"
#include "core/side_conditions.h"
#include "verifier/candidate.h"

namespace taso::verifier {
namespace {

constexpr uint64_t kSeeds[] = {0x5eed1001, 0x5eed1002};

// Feeds for the union of both sides' variables, so a shared name gets one value.
template <typename T, typename Make>
std::map<std::string, Tensor<T>> Feeds(const Graph& a, const Graph& b, uint64_t seed, Make make) {
  std::map<std::string, Tensor<T>> feeds;
  for (const Graph* g : {&a, &b}) {
    for (const Node& n : g->nodes()) {
      if ((n.kind == OpKind::kInput || n.kind == OpKind::kWeight) && !feeds.count(n.name)) {
        feeds[n.name] = make(n.output_types[0], n.name, seed);
      }
    }
  }
  return feeds;
}

}  // namespace

absl::Status NumericPrecheck(const Graph& source, const Graph& target, const std::vector<std::pair<int, int>>& outputs,
                             double tolerance) {
  for (uint64_t seed : kSeeds) {
    auto ifeeds = Feeds<int32_t>(source, target, seed, DeterministicIntTensor);
    auto is = EvaluateInt(source, ifeeds);
    auto it = EvaluateInt(target, ifeeds);
    const bool int_semantics = is.ok() && it.ok();
    if (!int_semantics && is.status().code() != absl::StatusCode::kUnimplemented &&
        it.status().code() != absl::StatusCode::kUnimplemented) {
      return absl::InvalidArgumentError(
          absl::StrCat("does not evaluate: ", (!is.ok() ? is.status() : it.status()).message()));
    }
    auto ffeeds = Feeds<float>(source, target, seed, DeterministicFloatTensor);
    auto fs = EvaluateFloat(source, ffeeds);
    if (!fs.ok()) return absl::InvalidArgumentError(absl::StrCat("source does not evaluate: ", fs.status().message()));
    auto ft = EvaluateFloat(target, ffeeds);
    if (!ft.ok()) return absl::InvalidArgumentError(absl::StrCat("target does not evaluate: ", ft.status().message()));
    std::optional<std::vector<FloatTensor>> abs_source, abs_target;
    for (const auto& [s, t] : outputs) {
      if ((*fs)[s].type.dims != (*ft)[t].type.dims) {
        return absl::FailedPreconditionError(absl::StrCat("output ", s, " has shape ", (*fs)[s].type.ToString(),
                                                          " on the source and ", (*ft)[t].type.ToString(),
                                                          " on the target"));
      }
      if (int_semantics) {
        const auto& a = (*is)[s].data;
        const auto& b = (*it)[t].data;
        for (size_t e = 0; e < a.size(); ++e) {
          if (a[e] != b[e]) {
            return absl::FailedPreconditionError(absl::StrCat("output ", s, " element ", e, " differs in int32: ",
                                                              a[e], " vs ", b[e], " (seed ", seed, ")"));
          }
        }
      }
      const auto& a = (*fs)[s].data;
      const auto& b = (*ft)[t].data;
      for (size_t e = 0; e < a.size(); ++e) {
        const double x = a[e], y = b[e];
        if (FloatsAgree(x, y, tolerance)) continue;
        // Outside the plain bound: measure against the partial sums each
        // side rounded, as the rule fuzzer does (a size-4 chain of products
        // cancels to values far below its terms).
        if (!abs_source) {
          const auto abs_feeds = AbsoluteFeeds(ffeeds);
          auto as = EvaluateFloat(source, abs_feeds);
          auto at = EvaluateFloat(target, abs_feeds);
          abs_source = as.ok() ? *std::move(as) : std::vector<FloatTensor>{};
          abs_target = at.ok() ? *std::move(at) : std::vector<FloatTensor>{};
        }
        const double scale = abs_source->empty() || abs_target->empty()
                                 ? 0.0
                                 : std::max(std::fabs((*abs_source)[s].data[e]), std::fabs((*abs_target)[t].data[e]));
        if (!FloatsAgree(x, y, tolerance, scale)) {
          return absl::FailedPreconditionError(absl::StrCat("output ", s, " element ", e, " differs in float: ", x,
                                                            " vs ", y, " (partial sums up to ", scale, "; seed ", seed,
                                                            ")"));
        }
      }
    }
  }
  return absl::OkStatus();
}

namespace {

// The facts a rule's recorded conditions leave open: concat halves, convolution
// groups, both, or none. A fact variable elsewhere counts as both: the
// conditions derived with them open will not have it, and differ.
OpenFacts ClaimedOpenFacts(const rules::SideConditions& conditions) {
  bool halves = false, groups = false;
  for (const auto* side : {&conditions.source(), &conditions.target()}) {
    for (const rules::NodeCondition& node : *side) {
      for (const rules::ProofSignature& sig : node.signatures()) {
        for (int k = 0; k < sig.params_size(); ++k) {
          if (!IsFactVariable(sig.params(k))) continue;
          const bool is_halves = k == OpenFactIndex(sig.function(), OpenFacts::kConcatHalves);
          const bool is_groups = k == OpenFactIndex(sig.function(), OpenFacts::kConvGroups);
          halves = halves || is_halves || !is_groups;
          groups = groups || is_groups || !is_halves;
        }
      }
    }
  }
  if (halves && groups) return OpenFacts::kAll;
  return halves ? OpenFacts::kConcatHalves : groups ? OpenFacts::kConvGroups : OpenFacts::kNone;
}

// Whether the concats a claim left open are exactly those `which` opens on the
// rule's own shapes (`own`, ConditionsOf its sides).
bool OpensExactlyTheClaimedConcats(OpenFacts which, const rules::SideConditions& claimed, const RuleConditions& own) {
  for (int side = 0; side < 2; ++side) {
    const auto& nodes = side == 0 ? claimed.source() : claimed.target();
    const GraphConditions& graph = side == 0 ? own.source : own.target;
    for (const rules::NodeCondition& node : nodes) {
      for (int i = 0; i < node.signatures_size(); ++i) {
        const rules::ProofSignature& sig = node.signatures(i);
        const int k = OpenFactIndex(sig.function(), OpenFacts::kConcatHalves);
        if (k < 0) continue;
        if (node.node() < 0 || node.node() >= static_cast<int>(graph.size()) ||
            i >= static_cast<int>(graph[node.node()].size())) {
          return false;
        }
        if (IsFactVariable(sig.params(k)) != OpensFact(which, graph[node.node()][i])) return false;
      }
    }
  }
  return true;
}

// A claim with concat halves open opened every concat, or (where that fails,
// Prover::Prove) only those whose halves differ, or only those equal: the
// rule's own shapes tell which.
OpenFacts ClaimedConcatFacts(const rules::SideConditions& claimed, const Graph& source, const Graph& target) {
  bool some_closed = false;  // else every concat is open: no need for the own shapes
  for (const auto* side : {&claimed.source(), &claimed.target()}) {
    for (const rules::NodeCondition& node : *side) {
      for (const rules::ProofSignature& sig : node.signatures()) {
        const int k = OpenFactIndex(sig.function(), OpenFacts::kConcatHalves);
        some_closed = some_closed || (k >= 0 && !IsFactVariable(sig.params(k)));
      }
    }
  }
  if (!some_closed) return OpenFacts::kConcatHalves;
  auto own_source = ConditionsOf(source);
  auto own_target = ConditionsOf(target);
  if (!own_source.ok() || !own_target.ok()) return OpenFacts::kConcatHalves;
  const RuleConditions own{std::move(*own_source), std::move(*own_target)};
  for (OpenFacts which : {OpenFacts::kConcatUnequalHalves, OpenFacts::kConcatEqualHalves}) {
    if (OpensExactlyTheClaimedConcats(which, claimed, own)) return which;
  }
  return OpenFacts::kConcatHalves;
}

}  // namespace

absl::Status VerifyClaim(Prover& prover, const std::string& solver, rules::Rule& rule) {
  if (rule.status() == rules::RULE_STATUS_PROVED && rule.proof().axioms_used_size() > 0) {
    auto source = GraphFromProto(rule.source());
    auto target = GraphFromProto(rule.target());
    std::vector<std::pair<int, int>> outputs;
    for (const auto& p : rule.outputs()) outputs.emplace_back(p.source_output(), p.target_output());
    if (source.ok() && target.ok() && NumericPrecheck(*source, *target, outputs).ok()) {
      const std::vector<std::string> axioms(rule.proof().axioms_used().begin(), rule.proof().axioms_used().end());
      OpenFacts open = ClaimedOpenFacts(rule.conditions());
      if (open == OpenFacts::kConcatHalves) open = ClaimedConcatFacts(rule.conditions(), *source, *target);
      auto checked = prover.CheckClaim(*source, *target, outputs, open, axioms);
      if (checked.ok() && checked->outcome == ProofOutcome::kProved) {
        ApplyProofResult(*checked, solver, prover.axiom_set_version(), rule);
        return absl::OkStatus();
      }
    }
  }
  // No claim to check, or one that does not go through as claimed: prove it here.
  rules::Rule fresh = rule;
  fresh.set_status(rules::RULE_STATUS_CANDIDATE);
  fresh.clear_status_detail();
  fresh.clear_proof();
  fresh.clear_conditions();
  if (absl::Status s = VerifyStandalone(prover, solver, fresh); !s.ok()) return s;
  rule = std::move(fresh);
  return absl::OkStatus();
}

absl::Status VerifyStandalone(Prover& prover, const std::string& solver, rules::Rule& rule) {
  auto source = GraphFromProto(rule.source());
  if (!source.ok()) return absl::InvalidArgumentError(absl::StrCat("source: ", source.status().message()));
  auto target = GraphFromProto(rule.target());
  if (!target.ok()) return absl::InvalidArgumentError(absl::StrCat("target: ", target.status().message()));
  std::vector<std::pair<int, int>> outputs;
  for (const auto& p : rule.outputs()) outputs.emplace_back(p.source_output(), p.target_output());
  for (const auto& [s, t] : outputs) {
    if (s < 0 || s >= static_cast<int>(source->outputs().size()) || t < 0 ||
        t >= static_cast<int>(target->outputs().size())) {
      return absl::InvalidArgumentError("an output pair is out of range");
    }
  }
  absl::Status numeric = NumericPrecheck(*source, *target, outputs);
  if (!numeric.ok()) {
    rule.set_status(rules::RULE_STATUS_REJECTED_PRECHECK);
    rule.set_status_detail(std::string(numeric.message()));
    rule.mutable_proof()->set_counterexample(std::string(numeric.message()));
    return absl::OkStatus();
  }
  auto result = prover.Prove(*source, *target, outputs);
  if (!result.ok()) {
    rule.set_status(rules::RULE_STATUS_UNKNOWN);
    rule.set_status_detail(absl::StrCat("not modelled: ", result.status().message()));
    return absl::OkStatus();
  }
  ApplyProofResult(*result, solver, prover.axiom_set_version(), rule);
  return absl::OkStatus();
}

}  // namespace taso::verifier
