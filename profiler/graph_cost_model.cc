#include "profiler/graph_cost_model.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace taso::profiler {

double OperatorGraphMs(const GraphCostModel& model, double kernel_ms, int64_t output_bytes) {
  if (!(kernel_ms > 0)) return kernel_ms;  // nothing runs: nothing dispatched or written
  return kernel_ms + model.per_node_ms() + model.per_mb_ms() * static_cast<double>(output_bytes) / 1e6;
}

double OperatorGraphMs(const GraphCostModel& model, OpKind kind, double kernel_ms, int64_t output_bytes) {
  const bool view = !(kernel_ms > 0) && (kind == OpKind::kSplit || kind == OpKind::kTranspose);
  if (!view || model.materialized_view_mb_ms() == 0) return OperatorGraphMs(model, kernel_ms, output_bytes);
  return model.per_node_ms() + model.materialized_view_mb_ms() * static_cast<double>(output_bytes) / 1e6;
}

int64_t TensorBytes(const std::vector<TensorType>& types) {
  // 4 bytes an element, as SignatureBytes: the backends measure float32 and
  // int32. Summed in double so that dimensions a request made up cannot
  // overflow, and capped where a sum of a few such figures still fits.
  constexpr double kCap = static_cast<double>(std::numeric_limits<int64_t>::max() / 4);
  double bytes = 0;
  for (const TensorType& t : types) {
    double elements = 1;
    for (int64_t d : t.dims) elements *= static_cast<double>(d);
    bytes += elements * 4;
  }
  return bytes >= kCap ? static_cast<int64_t>(kCap) : static_cast<int64_t>(bytes);
}

std::string DescribeGraphCostModel(const GraphCostModel& model) {
  std::string text = model.per_node_ms() == 0 && model.per_mb_ms() == 0
                         ? "sum of kernel times"
                         : absl::StrFormat("kernels + %.4f ms/node + %.4f ms/MB", model.per_node_ms(),
                                           model.per_mb_ms());
  if (model.materialized_view_mb_ms() > 0) {
    absl::StrAppend(&text, absl::StrFormat(" + %.4f ms/MB per split or transpose copied", model.materialized_view_mb_ms()));
  }
  if (!model.calibration_id().empty()) absl::StrAppend(&text, " (calibration ", model.calibration_id(), ")");
  return text;
}

}  // namespace taso::profiler
