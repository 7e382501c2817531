#include "optimizer/numeric_check.h"

#include <cmath>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "core/interpreter.h"
#include "core/random_inputs.h"

namespace taso::optimizer {
namespace {

int64_t ApproxFlops(const Graph& g) {
  int64_t flops = 0;
  for (const Node& n : g.nodes()) {
    if (n.output_types.empty()) continue;
    int64_t out = 1;
    for (int64_t d : n.output_types[0].dims) out *= std::max<int64_t>(d, 1);
    if (n.kind == OpKind::kConv2D) {
      const auto& w = g.type(n.inputs[1]).dims;
      flops += 2 * out * w[1] * w[2] * w[3];
    } else if (n.kind == OpKind::kMatMul) {
      const TensorType& x = g.type(n.inputs[0]);
      flops += 2 * out * x.dims.back();
    } else {
      flops += out;
    }
  }
  return flops;
}

// A deterministic, smooth stand-in for an opaque operator: each output
// element mixes a random projection of every input with its own phase.
absl::StatusOr<std::vector<FloatTensor>> StandIn(const Node& node, const std::vector<const FloatTensor*>& in) {
  double mix = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const auto& d = in[i]->data;
    for (size_t j = 0; j < d.size(); ++j) mix += d[j] * std::sin(0.7 * j + 1.3 * i + 0.1);
  }
  std::vector<FloatTensor> out;
  for (size_t o = 0; o < node.output_types.size(); ++o) {
    const TensorType& t = node.output_types[o];
    for (int64_t d : t.dims) {
      if (d < 0) {
        return absl::UnimplementedError(
            absl::StrCat(DescribeNode(node), " (", node.params.opaque.op_type, ") has an output of unknown shape"));
      }
    }
    FloatTensor v;
    v.type = t;
    v.data.resize(t.num_elements());
    for (size_t k = 0; k < v.data.size(); ++k) v.data[k] = static_cast<float>(std::sin(mix * 0.01 + 0.37 * k + o));
    out.push_back(std::move(v));
  }
  return out;
}

absl::StatusOr<std::vector<FloatTensor>> Run(const Graph& g, uint64_t seed) {
  auto order = g.TopologicalOrder();
  if (!order.ok()) return order.status();
  std::vector<std::vector<FloatTensor>> values(g.num_nodes());
  for (int id : *order) {
    const Node& n = g.node(id);
    if (IsInputOrWeight(n.kind)) {
      const TensorType& t = n.output_types[0];
      for (int64_t d : t.dims) {
        if (d < 0) return absl::UnimplementedError(absl::StrCat(DescribeNode(n), " has an unknown dimension"));
      }
      FloatTensor v = DeterministicFloatTensor(t.Plain(), n.name, seed);
      v.type = t;
      if (n.data && t.dtype == DType::kFloat32 && n.data->size() == v.data.size() * sizeof(float)) {
        std::memcpy(v.data.data(), n.data->data(), n.data->size());
      }
      values[id] = {std::move(v)};
      continue;
    }
    std::vector<const FloatTensor*> in;
    for (const TensorRef& r : n.inputs) in.push_back(&values[r.node][r.index]);
    auto out = n.kind == OpKind::kOpaque ? StandIn(n, in) : EvalOpFloat(n.kind, n.params, in);
    if (!out.ok()) return out.status();
    values[id] = std::move(*out);
  }
  std::vector<FloatTensor> outputs;
  for (const GraphOutput& o : g.outputs()) outputs.push_back(values[o.tensor.node][o.tensor.index]);
  return outputs;
}

}  // namespace

NumericCheck CompareGraphs(const Graph& original, const Graph& optimized, const NumericCheckOptions& options) {
  NumericCheck check;
  const int64_t flops = std::max(ApproxFlops(original), ApproxFlops(optimized));
  if (flops > options.max_flops) {
    check.reason = absl::StrCat("not run: about ", flops / 1e9, " GFLOP per run is above the limit of ",
                                options.max_flops / 1e9);
    return check;
  }
  if (original.outputs().size() != optimized.outputs().size()) {
    check.ran = true;
    check.reason = "the graphs have different numbers of outputs";
    return check;
  }
  for (int seed = 1; seed <= options.seeds; ++seed) {
    auto a = Run(original, seed);
    if (!a.ok()) {
      check.reason = absl::StrCat("not run: ", a.status().message());
      return check;
    }
    auto b = Run(optimized, seed);
    if (!b.ok()) {
      check.ran = true;  // the original runs, the optimized one does not: that is a failure
      check.reason = absl::StrCat("the optimized graph does not run: ", b.status().message());
      return check;
    }
    check.ran = true;
    for (size_t o = 0; o < a->size(); ++o) {
      const FloatTensor& x = (*a)[o];
      const FloatTensor& y = (*b)[o];
      if (x.type.dims != y.type.dims || x.data.size() != y.data.size()) {
        check.reason = absl::StrCat("output ", original.outputs()[o].name, " changed shape from ",
                                    x.type.ToString(), " to ", y.type.ToString());
        return check;
      }
      for (size_t i = 0; i < x.data.size(); ++i) {
        const double diff = std::abs(static_cast<double>(x.data[i]) - y.data[i]);
        check.max_abs_diff = std::max(check.max_abs_diff, diff);
        if (!(diff <= options.tolerance * (1 + std::abs(x.data[i])))) {
          check.reason = absl::StrCat("output ", original.outputs()[o].name, " element ", i, ": ", x.data[i],
                                      " (original) vs ", y.data[i], " (optimized)");
          return check;
        }
      }
    }
  }
  check.equal = true;
  check.reason = absl::StrCat("equal on ", options.seeds, " random input sets (max |diff| ", check.max_abs_diff, ")");
  return check;
}

}  // namespace taso::optimizer
