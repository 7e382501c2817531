#include "verifier/precheck.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/graph_proto.h"
#include "core/interpreter.h"
#include "core/random_inputs.h"
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
        if (!(std::fabs(x - y) <= tolerance * std::max({1.0, std::fabs(x), std::fabs(y)}))) {
          return absl::FailedPreconditionError(
              absl::StrCat("output ", s, " element ", e, " differs in float: ", x, " vs ", y, " (seed ", seed, ")"));
        }
      }
    }
  }
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
