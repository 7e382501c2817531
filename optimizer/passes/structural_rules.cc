#include "optimizer/passes/structural_rules.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "optimizer/rewrite/match.h"
#include "optimizer/passes/matmul_rules.h"

namespace taso::optimizer {
namespace {

// act(op_P(x, w[, b])) => op_{P, act}(x, w[, b]), with the variables typed as
// at `producer` (a conv2d may carry a bias as its third input).
std::optional<RewriteRule> Fusion(OpKind kind, const OpParams& params, const std::vector<TensorType>& inputs,
                                  OpKind activation_kind) {
  const Activation act = *ActivationOfKind(activation_kind);
  static const char* const kNames[] = {"x", "w", "b"};
  if (inputs.size() > 3) return std::nullopt;
  Graph lhs, rhs;
  std::vector<TensorRef> lin, rin;
  for (size_t i = 0; i < inputs.size(); ++i) {
    lin.push_back(lhs.AddInput(kNames[i], inputs[i]));
    rin.push_back(rhs.AddInput(kNames[i], inputs[i]));
  }
  auto inner = lhs.AddOp1(kind, params, lin);
  if (!inner.ok()) return std::nullopt;
  auto outer = lhs.AddOp1(activation_kind, OpParams{}, {*inner});
  if (!outer.ok()) return std::nullopt;
  lhs.AddOutput("out0", *outer);
  OpParams fused = params;
  fused.activation = act;
  auto fused_op = rhs.AddOp1(kind, fused, rin);
  if (!fused_op.ok()) return std::nullopt;
  rhs.AddOutput("out0", *fused_op);
  return RewriteFromSides(absl::StrCat("fuse:", OpKindName(kind), inputs.size() > 2 ? "+bias" : "", "+",
                                 OpKindName(activation_kind), "[", CanonicalParams(kind, params), "]"),
                     std::move(lhs), std::move(rhs), {}, /*exact_variable_types=*/false);
}

// The bias input a conv2d with weight `w` takes once its bias add is fused: [M].
TensorType FusedBiasType(const TensorType& w) { return TensorType::RowMajor(w.dtype, {w.dims[0]}); }

// The constant operand of `add` that broadcasts per channel over the output of
// a conv2d without bias or activation (its other operand): [M,1,1] or
// [1,M,1,1]. Returns (conv side, bias side), or nullopt.
std::optional<std::pair<int, int>> BiasAddSides(const Graph& graph, const Node& add) {
  if (add.kind != OpKind::kEwAdd || add.inputs.size() != 2) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const Node& conv = graph.node(add.inputs[side].node);
    if (conv.kind != OpKind::kConv2D || conv.inputs.size() != 2 || conv.params.activation != Activation::kNone) {
      continue;
    }
    const std::vector<int64_t>& out = graph.type(add.inputs[side]).dims;
    const std::vector<int64_t>& c = graph.type(add.inputs[1 - side]).dims;
    if (out.size() != 4 || graph.type(TensorRef{add.id, 0}).dims != out) continue;
    const int64_t m = out[1];
    if (c == std::vector<int64_t>{m, 1, 1} || c == std::vector<int64_t>{1, m, 1, 1}) {
      return std::make_pair(side, 1 - side);
    }
  }
  return std::nullopt;
}

// ewadd(conv_P(x, w), c) => conv_P(x, w, reshape(c -> [M])) for a constant
// per-channel c, operands in the order `add` has them. Backends add a bias in
// the convolution's epilogue instead of a second pass over the output.
std::optional<RewriteRule> BiasFusion(const Graph& graph, const Node& add) {
  auto sides = BiasAddSides(graph, add);
  if (!sides) return std::nullopt;
  const Node& conv = graph.node(add.inputs[sides->first].node);
  const TensorType& x = graph.type(conv.inputs[0]);
  const TensorType& w = graph.type(conv.inputs[1]);
  const TensorType& c = graph.type(add.inputs[sides->second]);
  Graph lhs, rhs;
  TensorRef lx = lhs.AddInput("x", x), lw = lhs.AddInput("w", w), lc = lhs.AddInput("c", c);
  auto lconv = lhs.AddOp1(OpKind::kConv2D, conv.params, {lx, lw});
  if (!lconv.ok()) return std::nullopt;
  std::vector<TensorRef> operands(2);
  operands[sides->first] = *lconv;
  operands[sides->second] = lc;
  auto sum = lhs.AddOp1(OpKind::kEwAdd, OpParams{}, operands);
  if (!sum.ok()) return std::nullopt;
  lhs.AddOutput("out0", *sum);
  TensorRef rx = rhs.AddInput("x", x), rw = rhs.AddInput("w", w), rc = rhs.AddInput("c", c);
  OpParams flat;
  flat.shape = FusedBiasType(w).dims;
  auto bias = rhs.AddOp1(OpKind::kReshape, flat, {rc});
  if (!bias.ok()) return std::nullopt;
  auto fused = rhs.AddOp1(OpKind::kConv2D, conv.params, {rx, rw, *bias});
  if (!fused.ok()) return std::nullopt;
  rhs.AddOutput("out0", *fused);
  return RewriteFromSides(absl::StrCat("fuse:conv2d+bias", sides->first == 0 ? "" : "~", "[",
                                 CanonicalParams(OpKind::kConv2D, conv.params), "]"),
                     std::move(lhs), std::move(rhs), {"c"}, /*exact_variable_types=*/true);
}

// A form a convolution takes in the graph or may take once the search has
// fused its bias add and activation: merges are made for each, since the rule
// list is fixed before the search starts.
struct ConvForm {
  OpParams params;
  TensorType x, w;
  std::optional<TensorType> bias;  // [M]
};

// Where a convolution's windows start along each spatial axis, and its output extent.
struct Windows {
  int64_t first_h, first_w, out_h, out_w;
};
std::optional<Windows> WindowsOf(const ConvForm& c) {
  auto h = ComputeWindow(c.params, 0, c.x.dims[2], c.w.dims[2]);
  auto v = ComputeWindow(c.params, 1, c.x.dims[3], c.w.dims[3]);
  if (!h.ok() || !v.ok()) return std::nullopt;
  return Windows{h->pad_before, v->pad_before, h->out, v->out};
}

// conv_P1(x, w1[, b1]), conv_P2(x, w2[, b2])
//   => split(conv_P2(x, concat0(enlarge(w1), w2)[, concat0(b1, b2)]))
std::optional<RewriteRule> ConvMerge(const ConvForm& a, const ConvForm& b) {
  const TensorType& x = a.x;
  const TensorType& wa = a.w;
  const TensorType& wb = b.w;
  if (a.bias.has_value() != b.bias.has_value()) return std::nullopt;  // both with a bias or neither
  const bool biased = a.bias.has_value();
  if (x.rank() != 4 || wa.dims[1] != x.dims[1] || wb.dims[1] != x.dims[1]) return std::nullopt;  // dense only
  if (a.params.stride_h != b.params.stride_h || a.params.stride_w != b.params.stride_w ||
      a.params.activation != b.params.activation) {
    return std::nullopt;
  }
  const int64_t dh = wb.dims[2] - wa.dims[2], dw = wb.dims[3] - wa.dims[3];
  if (dh < 0 || dw < 0 || dh % 2 != 0 || dw % 2 != 0) return std::nullopt;
  auto fa = WindowsOf(a), fb = WindowsOf(b);
  if (!fa || !fb || fa->out_h != fb->out_h || fa->out_w != fb->out_w) return std::nullopt;
  // The enlarged kernel starts (k2-k1)/2 earlier: it must start where the larger one does.
  if (fb->first_h != fa->first_h + dh / 2 || fb->first_w != fa->first_w + dw / 2) return std::nullopt;

  Graph lhs, rhs;
  TensorRef lx = lhs.AddInput("x", x), la = lhs.AddWeight("w1", wa), lb = lhs.AddWeight("w2", wb);
  std::vector<TensorRef> in_a = {lx, la}, in_b = {lx, lb};
  if (biased) {
    in_a.push_back(lhs.AddWeight("b1", *a.bias));
    in_b.push_back(lhs.AddWeight("b2", *b.bias));
  }
  auto ca = lhs.AddOp1(OpKind::kConv2D, a.params, in_a);
  auto cb = lhs.AddOp1(OpKind::kConv2D, b.params, in_b);
  if (!ca.ok() || !cb.ok()) return std::nullopt;
  lhs.AddOutput("out0", *ca);
  lhs.AddOutput("out1", *cb);
  TensorRef rx = rhs.AddInput("x", x), ra = rhs.AddWeight("w1", wa), rb = rhs.AddWeight("w2", wb);
  if (dh > 0 || dw > 0) {
    OpParams e;
    e.kernel_h = static_cast<int>(wb.dims[2]);
    e.kernel_w = static_cast<int>(wb.dims[3]);
    auto enlarged = rhs.AddOp1(OpKind::kEnlarge, e, {ra});
    if (!enlarged.ok()) return std::nullopt;
    ra = *enlarged;
  }
  OpParams axis0;
  auto weights = rhs.AddOp1(OpKind::kConcat, axis0, {ra, rb});
  if (!weights.ok()) return std::nullopt;
  std::vector<TensorRef> merged_in = {rx, *weights};
  if (biased) {
    auto biases = rhs.AddOp1(OpKind::kConcat, axis0, {rhs.AddWeight("b1", *a.bias), rhs.AddWeight("b2", *b.bias)});
    if (!biases.ok()) return std::nullopt;
    merged_in.push_back(*biases);
  }
  auto merged = rhs.AddOp1(OpKind::kConv2D, b.params, merged_in);
  if (!merged.ok()) return std::nullopt;
  OpParams axis1;
  axis1.axis = 1;
  auto parts = rhs.AddOp(OpKind::kSplit, axis1, {*merged});
  if (!parts.ok()) return std::nullopt;
  rhs.AddOutput("out0", (*parts)[0]);
  rhs.AddOutput("out1", (*parts)[1]);
  std::vector<std::string> weight_variables = {"w1", "w2"};
  if (biased) weight_variables = {"w1", "w2", "b1", "b2"};
  return RewriteFromSides(absl::StrCat("merge:conv", wa.dims[2], "x", wa.dims[3], "+conv", wb.dims[2], "x", wb.dims[3],
                                  biased ? "+bias" : "", "[", CanonicalParams(OpKind::kConv2D, b.params), "]"),
                     std::move(lhs), std::move(rhs), std::move(weight_variables), /*exact_variable_types=*/true);
}

// conv_P(x, w[, b]) with G groups => conv_P(x, merge_gconv(w, G, k)[, b]) with
// G/k groups: the merged weight is block-diagonal, zero between the k groups it
// joins. More arithmetic, but a kernel with fewer, wider groups is often the
// faster one (TASO's merging of grouped convolutions, e.g. for ResNeXt).
std::optional<RewriteRule> GroupMerge(const ConvForm& f, int64_t groups, int count) {
  Graph lhs, rhs;
  std::vector<TensorRef> lin = {lhs.AddInput("x", f.x), lhs.AddWeight("w", f.w)};
  std::vector<TensorRef> rin = {rhs.AddInput("x", f.x), rhs.AddWeight("w", f.w)};
  if (f.bias) {
    lin.push_back(lhs.AddInput("b", *f.bias));
    rin.push_back(rhs.AddInput("b", *f.bias));
  }
  auto conv = lhs.AddOp1(OpKind::kConv2D, f.params, lin);
  if (!conv.ok()) return std::nullopt;
  lhs.AddOutput("out0", *conv);
  OpParams m;
  m.groups = static_cast<int>(groups);
  m.count = count;
  auto merged_w = rhs.AddOp1(OpKind::kMergeGConv, m, {rin[1]});
  if (!merged_w.ok()) return std::nullopt;
  rin[1] = *merged_w;
  auto merged = rhs.AddOp1(OpKind::kConv2D, f.params, rin);
  if (!merged.ok()) return std::nullopt;
  rhs.AddOutput("out0", *merged);
  return RewriteFromSides(absl::StrCat("merge:gconv", groups, "->", groups / count, f.bias ? "+bias" : "", "[",
                                  CanonicalParams(OpKind::kConv2D, f.params), "]"),
                     std::move(lhs), std::move(rhs), {"w"}, /*exact_variable_types=*/true);
}

// The forms of the convolution `conv`: as it is, and with the bias add and
// activation that follow it fused.
std::vector<ConvForm> FormsOf(const Graph& graph, const GraphIndex& index, const Node& conv) {
  ConvForm base{conv.params, graph.type(conv.inputs[0]), graph.type(conv.inputs[1]), std::nullopt};
  if (conv.inputs.size() > 2) base.bias = graph.type(conv.inputs[2]);
  std::vector<ConvForm> forms = {base};
  if (conv.params.activation != Activation::kNone) return forms;
  auto with_activation_of = [&](const ConvForm& f, int node) {
    for (int reader : index.consumers(node)) {
      if (auto act = ActivationOfKind(graph.node(reader).kind)) {
        ConvForm g = f;
        g.params.activation = *act;
        forms.push_back(g);
      }
    }
  };
  with_activation_of(base, conv.id);
  if (base.bias) return forms;
  for (int reader : index.consumers(conv.id)) {
    if (!BiasAddSides(graph, graph.node(reader))) continue;
    ConvForm biased = base;
    biased.bias = FusedBiasType(base.w);
    forms.push_back(biased);
    with_activation_of(biased, reader);
  }
  return forms;
}

}  // namespace

std::vector<RewriteRule> FusionRewrites(const Graph& graph) {
  std::vector<RewriteRule> out;
  std::set<std::string> made;
  auto add_fusion = [&](OpKind kind, const OpParams& params, const std::vector<TensorType>& in, OpKind act) {
    std::string key = absl::StrCat(OpLabel(kind, params), OpKindName(act), in.size());
    if (!made.insert(key).second) return;
    if (auto r = Fusion(kind, params, in, act)) out.push_back(std::move(*r));
  };
  for (const Node& n : graph.nodes()) {
    if (auto sides = BiasAddSides(graph, n)) {
      const Node& conv = graph.node(n.inputs[sides->first].node);
      std::string key = absl::StrCat("bias", sides->first, graph.type(conv.inputs[0]).ToString(),
                                     graph.type(conv.inputs[1]).ToString(),
                                     graph.type(n.inputs[sides->second]).ToString(),
                                     CanonicalParams(OpKind::kConv2D, conv.params));
      if (made.insert(key).second) {
        if (auto r = BiasFusion(graph, n)) out.push_back(std::move(*r));
      }
    }
    if (!ActivationOfKind(n.kind) || n.inputs.empty()) continue;
    const Node& producer = graph.node(n.inputs[0].node);
    std::vector<TensorType> in;
    for (const TensorRef& r : producer.inputs) in.push_back(graph.type(r));
    if ((producer.kind == OpKind::kConv2D || producer.kind == OpKind::kMatMul) &&
        producer.params.activation == Activation::kNone) {
      add_fusion(producer.kind, producer.params, in, n.kind);
    } else if (auto sides = BiasAddSides(graph, producer)) {
      // conv -> bias add -> activation: the activation fuses once the bias has.
      const Node& conv = graph.node(producer.inputs[sides->first].node);
      add_fusion(OpKind::kConv2D, conv.params,
                 {graph.type(conv.inputs[0]), graph.type(conv.inputs[1]), FusedBiasType(graph.type(conv.inputs[1]))},
                 n.kind);
    }
  }
  return out;
}

std::vector<RewriteRule> StructuralRewrites(const Graph& graph) {
  std::vector<RewriteRule> out = FusionRewrites(graph);
  for (RewriteRule& r : MatMulRewrites(graph)) out.push_back(std::move(r));
  std::set<std::string> made;
  // Pairs of convolutions reading the same tensor, in each form they may take.
  const GraphIndex index(graph);
  std::map<std::pair<int, int>, std::vector<int>> readers;
  for (const Node& n : graph.nodes()) {
    if (n.kind == OpKind::kConv2D) readers[{n.inputs[0].node, n.inputs[0].index}].push_back(n.id);
  }
  // Grouped convolutions with fewer, wider groups (powers-of-two factors).
  for (const Node& n : graph.nodes()) {
    if (n.kind != OpKind::kConv2D) continue;
    const int64_t groups = graph.type(n.inputs[0]).dims[1] / graph.type(n.inputs[1]).dims[1];
    if (groups < 2) continue;
    for (const ConvForm& f : FormsOf(graph, index, n)) {
      for (int count = 2; count <= groups; count *= 2) {
        if (groups % count != 0) break;
        auto r = GroupMerge(f, groups, count);
        if (r && made.insert(absl::StrCat(r->name, f.x.ToString(), f.w.ToString())).second) {
          out.push_back(std::move(*r));
        }
      }
    }
  }
  for (const auto& [tensor, convs] : readers) {
    for (int i : convs) {
      for (int j : convs) {
        if (i == j) continue;
        for (const ConvForm& a : FormsOf(graph, index, graph.node(i))) {
          for (const ConvForm& b : FormsOf(graph, index, graph.node(j))) {
            auto r = ConvMerge(a, b);
            if (r && made.insert(absl::StrCat(r->name, a.x.ToString(), a.w.ToString(), b.w.ToString())).second) {
              out.push_back(std::move(*r));
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace taso::optimizer
