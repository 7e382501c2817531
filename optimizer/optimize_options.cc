#include "optimizer/optimize_options.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace taso::optimizer {

absl::StatusOr<int64_t> MaxCheckFlopsFromGflop(double gflop, absl::string_view flag) {
  if (!(gflop > 0 && gflop < 1e9)) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " must be above 0 (GFLOP per model run in the check)"));
  }
  return static_cast<int64_t>(gflop * 1e9);
}

absl::StatusOr<OptimizerOptions> ResolveOptimizeOptions(const OptimizeOptions& request,
                                                        const OptionDefaults& defaults) {
  if (request.time_limit_s() < 0 || request.alpha() < 0 || request.budget() < 0 || request.eqsat_match_limit() < 0 ||
      request.eqsat_ban_length() < 0 || request.eqsat_node_limit() < 0) {
    return absl::InvalidArgumentError(
        "time_limit_s, alpha, budget, eqsat_match_limit, eqsat_ban_length and eqsat_node_limit must not be negative");
  }
  if (request.has_min_gain() && !(request.min_gain() >= 0 && request.min_gain() < 1)) {
    return absl::InvalidArgumentError("min_gain must be in [0, 1) (a fraction: 0.01 is 1 %)");
  }
  // Zero values mean "unset" (proto/optimizer.proto), so merging the request
  // over the defaults leaves a default wherever the request chose nothing.
  OptimizeOptions in = defaults.options;
  in.MergeFrom(request);

  OptimizerOptions out;
  out.search = in.search() == SEARCH_EQSAT ? SearchKind::kEqsat : SearchKind::kBacktrack;
  const absl::Duration asked = in.time_limit_s() > 0 ? absl::Seconds(in.time_limit_s()) : out.time_limit;
  out.time_limit = std::min(asked, defaults.max_time_limit);
  if (in.alpha() > 0) out.backtrack.alpha = in.alpha();
  if (in.budget() > 0) out.backtrack.budget = static_cast<int>(std::min<int64_t>(in.budget(), 1 << 30));
  if (in.eqsat_backoff() != EQSAT_BACKOFF_UNSPECIFIED) {
    out.eqsat.backoff_scheduler = in.eqsat_backoff() == EQSAT_BACKOFF_ON;
  }
  if (in.eqsat_match_limit() > 0) out.eqsat.max_matches_per_rule = in.eqsat_match_limit();
  if (in.eqsat_ban_length() > 0) out.eqsat.backoff_ban_length = in.eqsat_ban_length();
  if (in.eqsat_node_limit() > 0) out.eqsat.node_limit = in.eqsat_node_limit();
  out.eqsat.ilp_memory_mb = defaults.ilp_memory_mb;
  out.backend = in.cost_backend();
  if (in.threads() < 0) return absl::InvalidArgumentError("threads must not be negative (0: the profiler's own count)");
  out.threads = in.threads();
  out.check.seed = in.seed();
  out.check.max_bytes = defaults.max_check_bytes;
  out.check.max_flops = defaults.max_check_flops;
  out.measure = defaults.measure && !in.skip_measure();
  out.measure_tolerance = defaults.measure_tolerance;
  out.measure_backend = in.measure_backend();
  if (in.has_min_gain()) out.min_gain = in.min_gain();
  out.export_baseline = in.export_baseline();
  out.dialect = in.target() == EXPORT_TARGET_ORT ? OnnxDialect::kOnnxRuntime : OnnxDialect::kStandard;
  out.import.max_model_bytes = defaults.max_model_bytes;
  auto input_shapes = ParseInputShapes({in.input_shapes().begin(), in.input_shapes().end()});
  if (!input_shapes.ok()) return input_shapes.status();
  out.import.input_shapes = *std::move(input_shapes);
  return out;
}

}  // namespace taso::optimizer
