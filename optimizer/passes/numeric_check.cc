#include "optimizer/passes/numeric_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "core/hash.h"
#include "core/interpreter.h"
#include "core/random_inputs.h"
#include "core/tensor_type.h"

namespace taso::optimizer {

int64_t CheckFlops(const Graph& g) {
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

namespace {

// A fixed pseudo-random value in [-1, 1) per (salt, position). It depends on
// nothing a rewrite may change, so both graphs see the same one.
double PositionWeight(uint64_t salt, uint64_t position) {
  return static_cast<double>(Mix64(Mix64(salt) + position) >> 11) * 0x1.0p-52 - 1.0;
}

// A deterministic, smooth stand-in for an opaque operator. Element k of
// output o is
//   sin(sum_i c_i(k) * asinh(x_i[k mod n_i]) + m + 0.37 k + o),
//   m = sum_i sum_j w_i(j) * asinh(x_i[j]) / sqrt(n_i),
// with position-dependent weights c in [1, 2] and w in [-1, 1].
// The element-wise term is why: each output element reads the input elements
// at its own position, so a rewrite that permutes, drops or duplicates
// elements feeding the node moves those outputs by about the change itself (a
// global projection alone moves them by a fraction of the tolerance). The
// position-weighted sum makes every output depend on every input element, as
// an operator that reduces would. asinh turns float rounding of large
// activations into a small absolute error without making the function blind
// to scale.
// asinh, with the non-finite values a model feeds on purpose (an attention
// mask's -inf) given finite values of their own, beyond asinh of any float
// (89.4): else one -inf makes every stand-in output NaN and the check compares
// nothing.
double Squash(float x) {
  if (std::isnan(x)) return 100.5;
  if (std::isinf(x)) return x > 0 ? 100 : -100;
  return std::asinh(static_cast<double>(x));
}

absl::StatusOr<std::vector<FloatTensor>> StandIn(const Node& node, const std::vector<const FloatTensor*>& in) {
  std::vector<std::vector<double>> squashed(in.size());
  double m = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const std::vector<float>& d = in[i]->data;
    if (d.empty()) continue;
    squashed[i].resize(d.size());
    double sum = 0;
    for (size_t j = 0; j < d.size(); ++j) {
      squashed[i][j] = Squash(d[j]);
      sum += PositionWeight(2 * i, j) * squashed[i][j];
    }
    m += sum / std::sqrt(static_cast<double>(d.size()));
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
    for (size_t k = 0; k < v.data.size(); ++k) {
      double arg = m + 0.37 * static_cast<double>(k) + static_cast<double>(o);
      for (size_t i = 0; i < squashed.size(); ++i) {
        if (squashed[i].empty()) continue;
        arg += (1.5 + 0.5 * PositionWeight(2 * i + 1, k)) * squashed[i][k % squashed[i].size()];
      }
      v.data[k] = static_cast<float>(std::sin(arg));
    }
    out.push_back(std::move(v));
  }
  return out;
}

absl::StatusOr<std::vector<FloatTensor>> Run(const Graph& g, uint64_t seed, int set) {
  auto order = g.TopologicalOrder();
  if (!order.ok()) return order.status();
  std::vector<std::vector<FloatTensor>> values(g.num_nodes());
  for (int id : *order) {
    const Node& n = g.node(id);
    if (IsInputOrWeight(n.kind)) {
      auto v = CheckInputValue(n, seed, set);
      if (!v.ok()) return v.status();
      values[id] = {std::move(*v)};
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

uint64_t ResolveSeed(uint64_t seed) { return seed == 0 ? kDefaultCheckSeed : seed; }

}  // namespace

int64_t CheckBytes(const Graph& g) {
  int64_t bytes = 0;
  for (int id = 0; id < g.num_nodes(); ++id) {
    for (const TensorType& t : g.node(id).output_types) {
      int64_t elements = 1;
      for (int64_t d : t.dims) elements = SaturatingMul(elements, std::max<int64_t>(d, 1));
      bytes = SaturatingAdd(bytes, SaturatingMul(elements, sizeof(float)));
    }
  }
  return bytes;
}

NumericCheck CompareGraphs(const Graph& original, const Graph& optimized, const NumericCheckOptions& options) {
  NumericCheck check;
  check.seed = ResolveSeed(options.seed);
  const int64_t bytes = std::max(CheckBytes(original), CheckBytes(optimized));
  if (bytes > options.max_bytes) {
    check.reason = absl::StrCat("not run: its tensors would take ", bytes >> 20, " MiB, above the limit of ",
                                options.max_bytes >> 20, " MiB");
    return check;
  }
  const int64_t flops = std::max(CheckFlops(original), CheckFlops(optimized));
  if (flops > options.max_flops) {
    check.reason = absl::StrCat("not run: about ", flops / 1e9, " GFLOP per run is above the limit of ",
                                options.max_flops / 1e9, " (--max_check_gflop)");
    return check;
  }
  if (original.outputs().size() != optimized.outputs().size()) {
    check.ran = true;
    check.reason = "the graphs have different numbers of outputs";
    return check;
  }
  for (int set = 0; set < options.seeds; ++set) {
    auto a = Run(original, check.seed, set);
    if (!a.ok()) {
      check.reason = absl::StrCat("not run: ", a.status().message());
      return check;
    }
    auto b = Run(optimized, check.seed, set);
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

absl::StatusOr<FloatTensor> CheckInputValue(const Node& node, uint64_t seed, int set) {
  if (!IsInputOrWeight(node.kind) || node.output_types.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), " is not an input or a weight"));
  }
  const TensorType& t = node.output_types[0];
  for (int64_t d : t.dims) {
    if (d < 0) return absl::UnimplementedError(absl::StrCat(DescribeNode(node), " has an unknown dimension"));
  }
  // Each set its own stream, and one seed's sets unrelated to another's.
  Hasher h(ResolveSeed(seed));
  h.AddSigned(set);
  FloatTensor v = DeterministicFloatTensor(t.Plain(), node.name, h.Finish().lo);
  v.type = t;
  if (node.data && t.dtype == DType::kFloat32 && node.data->size() == v.data.size() * sizeof(float)) {
    std::memcpy(v.data.data(), node.data->data(), node.data->size());
  }
  return v;
}

}  // namespace taso::optimizer
