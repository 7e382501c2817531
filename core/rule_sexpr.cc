#include "core/rule_sexpr.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph_proto.h"

namespace taso {
namespace {

int TasoActivation(Activation a) {
  switch (a) {
    case Activation::kNone: return 0;
    case Activation::kSigmoid: return 1;
    case Activation::kRelu: return 2;
    case Activation::kTanh: return 3;
  }
  return 0;
}

int TasoPadding(Padding p) { return p == Padding::kSame ? 0 : 1; }

class Writer {
 public:
  explicit Writer(const Graph& g) : g_(g) {}

  std::string Write(TensorRef t) {
    const Node& n = g_.node(t.node);
    const OpParams& p = n.params;
    std::vector<std::string> in;
    for (const TensorRef& r : n.inputs) in.push_back(Write(r));
    auto list = [](const std::string& head, const std::vector<std::string>& items) {
      return absl::StrCat("(", head, items.empty() ? "" : " ", absl::StrJoin(items, " "), ")");
    };
    auto shape = [&] { return absl::StrJoin(p.shape, " "); };
    switch (n.kind) {
      case OpKind::kInput:
      case OpKind::kWeight: return absl::StrCat("?", n.name);
      case OpKind::kMatMul: return list("matmul", {absl::StrCat(TasoActivation(p.activation)), in[0], in[1]});
      case OpKind::kConv2D:
        return list("conv2d", {absl::StrCat(p.stride_h), absl::StrCat(p.stride_w), absl::StrCat(TasoPadding(p.padding)),
                               absl::StrCat(TasoActivation(p.activation)), in[0], in[1]});
      case OpKind::kPoolAvg:
      case OpKind::kPoolMax:
        return list(n.kind == OpKind::kPoolAvg ? "poolavg" : "poolmax",
                    {in[0], absl::StrCat(p.kernel_h), absl::StrCat(p.kernel_w), absl::StrCat(p.stride_h),
                     absl::StrCat(p.stride_w), absl::StrCat(TasoPadding(p.padding)), "0"});
      case OpKind::kConcat: {
        // n-ary concat nests to the left, as its split tree records.
        const std::string ndim = absl::StrCat(g_.type(t).dims.size());
        std::string acc = in[0];
        for (size_t i = 1; i < in.size(); ++i) acc = list("concat", {absl::StrCat(p.axis), ndim, acc, in[i]});
        return acc;
      }
      case OpKind::kSplit:
        return list(absl::StrCat("split_", t.index), {list("split", {absl::StrCat(p.axis), in[0]})});
      case OpKind::kTranspose:
        return list("transpose", {in[0], absl::StrJoin(p.perm, "_"), p.shuffle ? "1" : "0"});
      case OpKind::kEnlarge: return list("enlarge", {absl::StrCat(p.kernel_h), absl::StrCat(p.kernel_w), in[0]});
      case OpKind::kReshape: return list("reshape", {in[0], absl::StrJoin(p.shape, "_")});
      case OpKind::kMergeGConv: return list("merge", {in[0], absl::StrCat(p.count)});
      case OpKind::kConstPool: return absl::StrCat("(Cpool ", shape(), ")");
      case OpKind::kConstIConv: return absl::StrCat("(Iconv ", shape(), ")");
      case OpKind::kConstIMatMul: return absl::StrCat("(Imatmul ", shape(), ")");
      case OpKind::kConstOnes: return absl::StrCat("(Ones ", shape(), ")");
      default: return list(OpKindName(n.kind), in);
    }
  }

 private:
  const Graph& g_;
};

}  // namespace

absl::StatusOr<std::string> RuleToSexpr(const rules::Rule& rule) {
  auto source = GraphFromProto(rule.source());
  if (!source.ok()) return source.status();
  auto target = GraphFromProto(rule.target());
  if (!target.ok()) return target.status();
  std::vector<std::string> left, right;
  Writer ws(*source), wt(*target);
  for (const auto& p : rule.outputs()) {
    if (p.source_output() < 0 || p.source_output() >= static_cast<int>(source->outputs().size()) ||
        p.target_output() < 0 || p.target_output() >= static_cast<int>(target->outputs().size())) {
      return absl::InvalidArgumentError("output pair out of range");
    }
    left.push_back(ws.Write(source->outputs()[p.source_output()].tensor));
    right.push_back(wt.Write(target->outputs()[p.target_output()].tensor));
  }
  if (rule.outputs().empty()) {
    // No mapping (a pair the re-check rejected): each side's outputs in order.
    for (const GraphOutput& o : source->outputs()) left.push_back(ws.Write(o.tensor));
    for (const GraphOutput& o : target->outputs()) right.push_back(wt.Write(o.tensor));
  }
  if (left.empty() || right.empty()) return absl::InvalidArgumentError("rule has no outputs");
  auto side = [](const std::vector<std::string>& s) {
    return s.size() == 1 ? s[0] : absl::StrCat("(", absl::StrJoin(s, " "), ")");
  };
  return absl::StrCat(side(left), "=>", side(right));
}

}  // namespace taso
