#include "optimizer/rewrite/test_util.h"

#include <cmath>

#include "core/graph_proto.h"
#include "core/side_conditions.h"
#include "core/interpreter.h"
#include "core/random_inputs.h"
#include "gtest/gtest.h"
#include "profiler/open_client.h"

namespace taso::optimizer::testing {


rules::Rule MakeRule(const std::string& id, const Graph& source, const Graph& target, OpenFacts open) {
  rules::Rule r;
  r.set_id(id);
  r.set_status(rules::RULE_STATUS_PROVED);
  *r.mutable_source() = GraphToProto(source);
  *r.mutable_target() = GraphToProto(target);
  for (size_t i = 0; i < source.outputs().size(); ++i) {
    auto* pair = r.add_outputs();
    pair->set_source_output(static_cast<int>(i));
    pair->set_target_output(static_cast<int>(i));
  }
  // As a verifier records them: the facts the sides' own shapes give.
  auto s = ConditionsOf(source);
  auto t = ConditionsOf(target);
  EXPECT_TRUE(s.ok() && t.ok()) << "rule " << id << " has an operator the axioms do not model";
  if (s.ok() && t.ok()) {
    FactVariables vars;
    for (GraphConditions* side : {&*s, &*t}) {
      for (auto& node : *side) {
        for (ProofSignature& sig : node) OpenFact(open, vars, sig);
      }
    }
    *r.mutable_conditions() = ConditionsToProto({*s, *t});
  }
  for (const Node& n : source.nodes()) {
    if (n.kind != OpKind::kInput && n.kind != OpKind::kWeight) continue;
    auto* v = r.add_variables();
    v->set_name(n.name);
    v->set_kind(static_cast<ir::OpKind>(n.kind));
    *v->mutable_type() = TensorTypeToProto(n.output_types[0]);
  }
  return r;
}

std::vector<RewriteRule> BothWays(const rules::Rule& rule) {
  auto rewrites = RewritesFromRule(rule);
  EXPECT_TRUE(rewrites.ok()) << rewrites.status();
  return rewrites.ok() ? *rewrites : std::vector<RewriteRule>{};
}

RewriteRule Forward(const rules::Rule& rule) {
  std::vector<RewriteRule> rewrites = BothWays(rule);
  return rewrites.empty() ? RewriteRule{} : rewrites.front();
}

rules::Rule SharedInputMatMuls() {
  Graph s, t;
  TensorRef x = s.AddInput("x", F32({2, 4}));
  TensorRef w1 = s.AddWeight("w1", F32({4, 3})), w2 = s.AddWeight("w2", F32({4, 3}));
  s.AddOutput("a", *s.AddOp1(OpKind::kMatMul, {}, {x, w1}));
  s.AddOutput("b", *s.AddOp1(OpKind::kMatMul, {}, {x, w2}));
  TensorRef tx = t.AddInput("x", F32({2, 4}));
  TensorRef tw1 = t.AddWeight("w1", F32({4, 3})), tw2 = t.AddWeight("w2", F32({4, 3}));
  OpParams axis1;
  axis1.axis = 1;
  TensorRef cat = *t.AddOp1(OpKind::kConcat, axis1, {tw1, tw2});
  TensorRef mm = *t.AddOp1(OpKind::kMatMul, {}, {tx, cat});
  auto parts = t.AddOp(OpKind::kSplit, axis1, {mm});
  t.AddOutput("a", (*parts)[0]);
  t.AddOutput("b", (*parts)[1]);
  return MakeRule("mm2", s, t, OpenFacts::kConcatHalves);
}

void ExpectEquivalent(const Graph& a, const Graph& b) {
  ASSERT_TRUE(b.Validate().ok()) << b.Validate();
  auto feeds = DeterministicFloatFeeds(a, 3);
  auto out_a = EvaluateFloat(a, feeds);
  auto out_b = EvaluateFloat(b, feeds);
  ASSERT_TRUE(out_a.ok()) << out_a.status();
  ASSERT_TRUE(out_b.ok()) << out_b.status();
  ASSERT_EQ(out_a->size(), out_b->size());
  for (size_t o = 0; o < out_a->size(); ++o) {
    ASSERT_EQ((*out_a)[o].data.size(), (*out_b)[o].data.size());
    for (size_t i = 0; i < (*out_a)[o].data.size(); ++i) {
      ASSERT_NEAR((*out_a)[o].data[i], (*out_b)[o].data[i], 1e-4 * (1 + std::abs((*out_a)[o].data[i])))
          << "output " << o << " element " << i;
    }
  }
}

rules::Rule RowsMatMuls() {
  Graph s, t;
  TensorRef x = s.AddInput("x", F32({2, 4})), z = s.AddInput("z", F32({2, 4}));
  TensorRef w = s.AddWeight("w", F32({4, 4}));
  s.AddOutput("a", *s.AddOp1(OpKind::kMatMul, {}, {x, w}));
  s.AddOutput("b", *s.AddOp1(OpKind::kMatMul, {}, {z, w}));
  TensorRef tx = t.AddInput("x", F32({2, 4})), tz = t.AddInput("z", F32({2, 4}));
  TensorRef tw = t.AddWeight("w", F32({4, 4}));
  const OpParams axis0;
  TensorRef cat = *t.AddOp1(OpKind::kConcat, axis0, {tx, tz});
  auto parts = t.AddOp(OpKind::kSplit, axis0, {*t.AddOp1(OpKind::kMatMul, {}, {cat, tw})});
  t.AddOutput("a", (*parts)[0]);
  t.AddOutput("b", (*parts)[1]);
  return MakeRule("rows", s, t);
}

Graph RowsMatMulCycleHost() {
  Graph host;
  TensorRef x = host.AddInput("x", F32({2, 4}));
  TensorRef w = host.AddWeight("w", F32({4, 4}));
  TensorRef a = *host.AddOp1(OpKind::kMatMul, {}, {x, w});
  host.AddOutput("b", *host.AddOp1(OpKind::kMatMul, {}, {*host.AddOp1(OpKind::kRelu, {}, {a}), w}));
  return host;
}

Graph SharedInputMatMulHost() {
  Graph host;
  TensorRef x = host.AddInput("x", F32({64, 256}));
  TensorRef w1 = host.AddWeight("p", F32({256, 256})), w2 = host.AddWeight("q", F32({256, 256}));
  host.AddOutput("a", *host.AddOp1(OpKind::kMatMul, {}, {x, w1}));
  host.AddOutput("b", *host.AddOp1(OpKind::kMatMul, {}, {x, w2}));
  return host;
}

Graph ConvRelu(bool conv_is_output) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 4, 8, 8}));
  TensorRef w = g.AddWeight("w", F32({6, 4, 3, 3}));
  OpParams p;
  p.padding = Padding::kExplicit;
  p.pads = {1, 1, 1, 1};
  p.stride_h = p.stride_w = 2;
  TensorRef c = *g.AddOp1(OpKind::kConv2D, p, {x, w});
  g.AddOutput("y", *g.AddOp1(OpKind::kRelu, {}, {c}));
  if (conv_is_output) g.AddOutput("conv", c);
  return g;
}

std::unique_ptr<profiler::ProfilerClient> AnalyticProfiler() {
  profiler::ProfilerOptions options;
  options.enable_cuda = false;
  options.default_backend = profiler::BACKEND_ANALYTIC;
  options.analytic_device = "h100";
  auto p = profiler::CostProfiler::Create(options);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? profiler::InProcessClient(std::move(*p)) : nullptr;
}

}  // namespace taso::optimizer::testing
