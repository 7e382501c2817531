#include "optimizer/structural_rules.h"

#include <set>

#include "absl/strings/str_cat.h"

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
  return out;
}

}  // namespace taso::optimizer
