#include "costs/graph_cost_model.h"

#include <algorithm>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/hash.h"

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

int64_t WeightWorkingSetBytes(const Graph& graph) {
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return 0;  // not a DAG: no graph to run (Validate says why)
  // A folded value is named by what computes it, not by its node: a search
  // that merges each step of an RNN cell in turn leaves one concatenation of
  // the same weights per step, which CSE (and every runtime's constant
  // folding) makes one tensor.
  const std::vector<bool> at_load = ComputedAtLoad(graph, *order);
  std::vector<Hash128> folded(graph.num_nodes());  // of the nodes computed at load
  std::set<Hash128> read;
  std::vector<TensorType> types;
  for (int id : *order) {
    const Node& node = graph.node(id);
    if (at_load[id]) {
      Hasher h(node.kind == OpKind::kWeight ? 1 : 2);
      if (node.kind == OpKind::kWeight) {
        h.AddSigned(id);  // distinct weights are distinct tensors, whatever their values
      } else {
        h.Add(static_cast<uint64_t>(node.kind));
        HashParams(node.kind, node.params, h);
        for (const TensorRef& in : node.inputs) {
          h.Add(folded[in.node]);
          h.AddSigned(in.index);
        }
      }
      folded[id] = h.Finish();
      continue;
    }
    for (const TensorRef& in : node.inputs) {
      if (!at_load[in.node]) continue;
      Hasher value(3);
      value.Add(folded[in.node]);
      value.AddSigned(in.index);
      if (read.insert(value.Finish()).second) types.push_back(graph.type(in));
    }
  }
  return TensorBytes(types);
}

bool HasWeightTerm(const GraphCostModel& model) {
  return model.weight_cache_bytes() > 0 && model.weight_stream_mb_ms() > 0 &&
         std::min(model.weight_spill_fraction_size(), model.weight_spill_paid_size()) > 0;
}

double WeightStreamMs(const GraphCostModel& model, int64_t weight_bytes) {
  if (!HasWeightTerm(model) || weight_bytes <= 0) return 0;
  const int points = std::min(model.weight_spill_fraction_size(), model.weight_spill_paid_size());
  const double fraction = static_cast<double>(weight_bytes) / static_cast<double>(model.weight_cache_bytes());
  double paid = model.weight_spill_paid(points - 1);
  if (fraction <= model.weight_spill_fraction(0)) {
    paid = model.weight_spill_paid(0);
  } else {
    for (int i = 1; i < points; ++i) {
      const double x0 = model.weight_spill_fraction(i - 1), x1 = model.weight_spill_fraction(i);
      if (fraction > x1) continue;
      const double t = x1 > x0 ? (fraction - x0) / (x1 - x0) : 1;
      paid = model.weight_spill_paid(i - 1) + t * (model.weight_spill_paid(i) - model.weight_spill_paid(i - 1));
      break;
    }
  }
  return model.weight_stream_mb_ms() * static_cast<double>(weight_bytes) / 1e6 * std::clamp(paid, 0.0, 1.0);
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
  if (HasWeightTerm(model)) {
    absl::StrAppend(&text, absl::StrFormat(" + up to %.4f ms/MB of weights streamed past %.2f of a %.1f MiB cache",
                                           model.weight_stream_mb_ms(), model.weight_spill_fraction(0),
                                           static_cast<double>(model.weight_cache_bytes()) / (1 << 20)));
  }
  if (!model.calibration_id().empty()) absl::StrAppend(&text, " (calibration ", model.calibration_id(), ")");
  return text;
}

}  // namespace taso::profiler
