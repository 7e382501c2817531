#include "optimizer/structural_rules.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"

namespace taso::optimizer {
namespace {

std::optional<Activation> ActivationOf(OpKind kind) {
  switch (kind) {
    case OpKind::kRelu: return Activation::kRelu;
    case OpKind::kSigmoid: return Activation::kSigmoid;
    case OpKind::kTanh: return Activation::kTanh;
    default: return std::nullopt;
  }
}

// act(op_P(x, w)) => op_{P, act}(x, w), with x and w typed as at `producer`.
std::optional<RewriteRule> Fusion(const Graph& graph, const Node& producer, OpKind activation_kind) {
  const Activation act = *ActivationOf(activation_kind);
  Graph lhs, rhs;
  const TensorType& x = graph.type(producer.inputs[0]);
  const TensorType& w = graph.type(producer.inputs[1]);
  TensorRef lx = lhs.AddInput("x", x), lw = lhs.AddInput("w", w);
  auto inner = lhs.AddOp1(producer.kind, producer.params, {lx, lw});
  if (!inner.ok()) return std::nullopt;
  auto outer = lhs.AddOp1(activation_kind, OpParams{}, {*inner});
  if (!outer.ok()) return std::nullopt;
  lhs.AddOutput("out0", *outer);
  OpParams fused = producer.params;
  fused.activation = act;
  TensorRef rx = rhs.AddInput("x", x), rw = rhs.AddInput("w", w);
  auto fused_op = rhs.AddOp1(producer.kind, fused, {rx, rw});
  if (!fused_op.ok()) return std::nullopt;
  rhs.AddOutput("out0", *fused_op);
  RewriteRule r;
  r.name = absl::StrCat("fuse:", OpKindName(producer.kind), "+", OpKindName(activation_kind), "[",
                        CanonicalParams(producer.kind, producer.params), "]");
  r.lhs = std::move(lhs);
  r.rhs = std::move(rhs);
  r.lhs_ops = 2;
  r.rhs_ops = 1;
  return r;
}

// Where a convolution's windows start along each spatial axis.
std::optional<std::pair<int64_t, int64_t>> FirstWindow(const Graph& g, const Node& conv) {
  const TensorType& x = g.type(conv.inputs[0]);
  const TensorType& w = g.type(conv.inputs[1]);
  auto h = ComputeWindow(conv.params, 0, x.dims[2], w.dims[2]);
  auto v = ComputeWindow(conv.params, 1, x.dims[3], w.dims[3]);
  if (!h.ok() || !v.ok()) return std::nullopt;
  return std::make_pair(h->pad_before, v->pad_before);
}

// conv_P1(x, w1), conv_P2(x, w2) => split(conv_P2(x, concat0(enlarge(w1), w2)))
std::optional<RewriteRule> ConvMerge(const Graph& graph, const Node& a, const Node& b) {
  const TensorType& x = graph.type(a.inputs[0]);
  const TensorType& wa = graph.type(a.inputs[1]);
  const TensorType& wb = graph.type(b.inputs[1]);
  if (x.rank() != 4 || wa.dims[1] != x.dims[1] || wb.dims[1] != x.dims[1]) return std::nullopt;  // dense only
  if (a.params.stride_h != b.params.stride_h || a.params.stride_w != b.params.stride_w ||
      a.params.activation != b.params.activation) {
    return std::nullopt;
  }
  const int64_t dh = wb.dims[2] - wa.dims[2], dw = wb.dims[3] - wa.dims[3];
  if (dh < 0 || dw < 0 || dh % 2 != 0 || dw % 2 != 0) return std::nullopt;
  if (graph.type(TensorRef{a.id, 0}).dims[2] != graph.type(TensorRef{b.id, 0}).dims[2] ||
      graph.type(TensorRef{a.id, 0}).dims[3] != graph.type(TensorRef{b.id, 0}).dims[3]) {
    return std::nullopt;
  }
  auto fa = FirstWindow(graph, a), fb = FirstWindow(graph, b);
  // The enlarged kernel starts (k2-k1)/2 earlier: it must start where the larger one does.
  if (!fa || !fb || fb->first != fa->first + dh / 2 || fb->second != fa->second + dw / 2) return std::nullopt;

  Graph lhs, rhs;
  TensorRef lx = lhs.AddInput("x", x), la = lhs.AddWeight("w1", wa), lb = lhs.AddWeight("w2", wb);
  auto ca = lhs.AddOp1(OpKind::kConv2D, a.params, {lx, la});
  auto cb = lhs.AddOp1(OpKind::kConv2D, b.params, {lx, lb});
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
  auto merged = rhs.AddOp1(OpKind::kConv2D, b.params, {rx, *weights});
  if (!merged.ok()) return std::nullopt;
  OpParams axis1;
  axis1.axis = 1;
  auto parts = rhs.AddOp(OpKind::kSplit, axis1, {*merged});
  if (!parts.ok()) return std::nullopt;
  rhs.AddOutput("out0", (*parts)[0]);
  rhs.AddOutput("out1", (*parts)[1]);
  RewriteRule r;
  r.name = absl::StrCat("merge:conv", wa.dims[2], "x", wa.dims[3], "+conv", wb.dims[2], "x", wb.dims[3], "[",
                        CanonicalParams(OpKind::kConv2D, b.params), "]");
  r.lhs = std::move(lhs);
  r.rhs = std::move(rhs);
  r.weight_variables = {"w1", "w2"};
  r.lhs_ops = 2;
  r.rhs_ops = dh > 0 || dw > 0 ? 4 : 3;
  r.exact_variable_types = true;
  return r;
}

}  // namespace

std::vector<RewriteRule> StructuralRewrites(const Graph& graph) {
  std::vector<RewriteRule> out;
  std::set<std::string> made;
  for (const Node& n : graph.nodes()) {
    if (!ActivationOf(n.kind) || n.inputs.empty()) continue;
    const Node& producer = graph.node(n.inputs[0].node);
    if ((producer.kind != OpKind::kConv2D && producer.kind != OpKind::kMatMul) ||
        producer.params.activation != Activation::kNone) {
      continue;
    }
    const std::string key = absl::StrCat(OpLabel(producer.kind, producer.params), OpKindName(n.kind));
    if (!made.insert(key).second) continue;
    if (auto r = Fusion(graph, producer, n.kind)) out.push_back(std::move(*r));
  }
  // Pairs of convolutions reading the same tensor.
  std::map<std::pair<int, int>, std::vector<int>> readers;
  for (const Node& n : graph.nodes()) {
    if (n.kind == OpKind::kConv2D) readers[{n.inputs[0].node, n.inputs[0].index}].push_back(n.id);
  }
  for (const auto& [tensor, convs] : readers) {
    for (int i : convs) {
      for (int j : convs) {
        if (i == j) continue;
        auto r = ConvMerge(graph, graph.node(i), graph.node(j));
        if (r && made.insert(r->name + absl::StrCat(graph.type(graph.node(i).inputs[0]).ToString(),
                                                    graph.type(graph.node(i).inputs[1]).ToString(),
                                                    graph.type(graph.node(j).inputs[1]).ToString()))
                     .second) {
          out.push_back(std::move(*r));
        }
      }
    }
  }
  return out;
}

}  // namespace taso::optimizer
