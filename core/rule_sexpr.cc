#include "core/rule_sexpr.h"

#include <initializer_list>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/graph_proto.h"
#include "core/sexpr.h"
#include "core/side_conditions.h"

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

// Tensat knows SAME (0) and VALID (1); explicit padding never appears in
// generated rules, and RuleToSexpr refuses it before writing.
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
      case OpKind::kWeight: return absl::StrCat("?", n.name, "@", absl::StrJoin(g_.type(t).dims, "_"));
      case OpKind::kMatMul: return list("matmul", {absl::StrCat(TasoActivation(p.activation)), in[0], in[1]});
      case OpKind::kFusedGemm:
        return list("fused_gemm", {absl::StrCat(TasoActivation(p.activation)), in[0], in[1], in[2]});
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
  for (const Graph* g : {&*source, &*target}) {
    for (const Node& n : g->nodes()) {
      if (n.kind == OpKind::kConv2D && n.inputs.size() > 2) {
        return absl::UnimplementedError(
            absl::StrCat(DescribeNode(n), " has a bias input, which Tensat's syntax cannot express"));
      }
      if (n.params.padding == Padding::kExplicit &&
          (n.kind == OpKind::kConv2D || n.kind == OpKind::kPoolAvg || n.kind == OpKind::kPoolMax)) {
        return absl::UnimplementedError(
            absl::StrCat(DescribeNode(n), " has explicit padding, which Tensat's syntax cannot express"));
      }
    }
  }
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
  std::string text = absl::StrCat(side(left), "=>", side(right));
  // What the proof assumed, as a trailing comment: Tensat's readers skip it,
  // and an import proves the rule again, which records its own.
  if (rule.has_conditions()) {
    auto conditions = RecordedConditions(rule, *source, *target);
    absl::StrAppend(&text, " ;; ",
                    conditions.ok() ? absl::StrCat("if ", DescribeConditions(conditions->source), " => ",
                                                   DescribeConditions(conditions->target))
                                    : absl::StrCat("conditions not trusted: ", conditions.status().message()));
  }
  return text;
}

namespace {

// Returns the error of a StatusOr expression, or declares `var` with its value.
#define TASO_ASSIGN_OR_RETURN(var, expr)        \
  auto var##_or = (expr);                       \
  if (!var##_or.ok()) return var##_or.status(); \
  auto var = *var##_or

// The node one operator list denotes, and which of its outputs.
struct OperatorNode {
  OpKind kind = OpKind::kInput;
  OpParams params;
  std::vector<TensorRef> inputs;
  int output = 0;
};

// Tensat writes SAME as 0 and VALID as anything else.
Padding TensatPadding(int64_t v) { return v == 0 ? Padding::kSame : Padding::kValid; }

class Builder {
 public:
  absl::StatusOr<TensorRef> Build(const Sexpr& e) {
    if (!e.is_list) {
      if (e.atom.empty() || e.atom[0] != '?') {
        return absl::InvalidArgumentError(absl::StrCat("'", e.atom, "' is not a variable (?name@dims) or a list"));
      }
      return Variable(e.atom.substr(1));
    }
    if (e.items.empty() || e.items[0].is_list) return absl::InvalidArgumentError("an operator list starts with its name");
    OperatorNode node;
    if (absl::Status s = ParseOperator(Args(*this, e), node); !s.ok()) return s;
    return AddOnce(node);
  }

  Graph graph;

 private:
  // An operator list's arguments (after its name), read with the operator's
  // name in every error. Reading a tensor argument builds its subexpression.
  class Args {
   public:
    Args(Builder& builder, const Sexpr& list) : builder_(builder), op_(list.items[0].atom) {
      for (size_t i = 1; i < list.items.size(); ++i) args_.push_back(&list.items[i]);
    }
    const std::string& op() const { return op_; }
    const Sexpr& at(size_t i) const { return *args_[i]; }
    size_t size() const { return args_.size(); }

    absl::Status Arity(size_t n) const {
      if (args_.size() != n) {
        return absl::InvalidArgumentError(absl::StrCat(op_, " takes ", n, " arguments, got ", args_.size()));
      }
      return absl::OkStatus();
    }
    absl::StatusOr<int64_t> Number(size_t i) const {
      int64_t v = 0;
      if (i >= args_.size() || args_[i]->is_list || !absl::SimpleAtoi(args_[i]->atom, &v)) {
        return absl::InvalidArgumentError(absl::StrCat(op_, ": argument ", i + 1, " must be a number"));
      }
      return v;
    }
    absl::StatusOr<TensorRef> Tensor(size_t i) const {
      if (i >= args_.size()) return absl::InvalidArgumentError(absl::StrCat(op_, ": missing argument ", i + 1));
      return builder_.Build(*args_[i]);
    }
    // Tensat's activation codes: 0 none, 1 sigmoid, 2 relu, 3 tanh.
    absl::StatusOr<Activation> ActivationAt(size_t i) const {
      TASO_ASSIGN_OR_RETURN(v, Number(i));
      switch (v) {
        case 0: return Activation::kNone;
        case 1: return Activation::kSigmoid;
        case 2: return Activation::kRelu;
        case 3: return Activation::kTanh;
      }
      return absl::InvalidArgumentError(absl::StrCat(op_, ": activation ", v, " is not 0..3"));
    }
    // Appends the tensor arguments at `indices`, in that order, to `node`.
    absl::Status AppendTensors(std::initializer_list<size_t> indices, OperatorNode& node) const {
      for (size_t i : indices) {
        TASO_ASSIGN_OR_RETURN(t, Tensor(i));
        node.inputs.push_back(t);
      }
      return absl::OkStatus();
    }

   private:
    Builder& builder_;
    const std::string& op_;
    std::vector<const Sexpr*> args_;
  };

  // Each parser reads its arguments in the order they are written, so the
  // first bad argument is the one reported.
  absl::Status ParseOperator(const Args& args, OperatorNode& node) {
    const std::string& op = args.op();
    if (op == "ewadd" || op == "ewmul" || op == "smul") return ParseBinary(args, node);
    if (op == "relu" || op == "tanh" || op == "sigmoid") return ParseUnary(args, node);
    if (op == "matmul") return ParseMatMul(args, node);
    if (op == "fused_gemm") return ParseFusedGemm(args, node);
    if (op == "conv2d") return ParseConv2D(args, node);
    if (op == "poolavg" || op == "poolmax") return ParsePool(args, node);
    if (op == "concat") return ParseConcat(args, node);
    if (op == "split_0" || op == "split_1") return ParseSplitOutput(args, node);
    if (op == "transpose") return ParseTranspose(args, node);
    if (op == "enlarge") return ParseEnlarge(args, node);
    if (op == "Cpool" || op == "Iconv" || op == "Imatmul" || op == "Ones") return ParseConstant(args, node);
    return absl::InvalidArgumentError(absl::StrCat("unknown operator '", op, "'"));
  }

  static absl::Status ParseBinary(const Args& args, OperatorNode& node) {
    if (auto s = args.Arity(2); !s.ok()) return s;
    const std::string& op = args.op();
    node.kind = op == "ewadd" ? OpKind::kEwAdd : op == "ewmul" ? OpKind::kEwMul : OpKind::kScalarMul;
    return args.AppendTensors({0, 1}, node);
  }

  static absl::Status ParseUnary(const Args& args, OperatorNode& node) {
    if (auto s = args.Arity(1); !s.ok()) return s;
    const std::string& op = args.op();
    node.kind = op == "relu" ? OpKind::kRelu : op == "tanh" ? OpKind::kTanh : OpKind::kSigmoid;
    return args.AppendTensors({0}, node);
  }

  // (matmul ACT A B)
  static absl::Status ParseMatMul(const Args& args, OperatorNode& node) {
    if (auto s = args.Arity(3); !s.ok()) return s;
    node.kind = OpKind::kMatMul;
    TASO_ASSIGN_OR_RETURN(activation, args.ActivationAt(0));
    node.params.activation = activation;
    return args.AppendTensors({1, 2}, node);
  }

  // (fused_gemm ACT A B C): act(A·B + C), ours (Tensat has no fused operators)
  static absl::Status ParseFusedGemm(const Args& args, OperatorNode& node) {
    if (auto s = args.Arity(4); !s.ok()) return s;
    node.kind = OpKind::kFusedGemm;
    TASO_ASSIGN_OR_RETURN(activation, args.ActivationAt(0));
    node.params.activation = activation;
    return args.AppendTensors({1, 2, 3}, node);
  }

  // (conv2d STRIDE_H STRIDE_W PADDING ACT X W)
  static absl::Status ParseConv2D(const Args& args, OperatorNode& node) {
    if (auto s = args.Arity(6); !s.ok()) return s;
    node.kind = OpKind::kConv2D;
    TASO_ASSIGN_OR_RETURN(sh, args.Number(0));
    TASO_ASSIGN_OR_RETURN(sw, args.Number(1));
    TASO_ASSIGN_OR_RETURN(pad, args.Number(2));
    TASO_ASSIGN_OR_RETURN(activation, args.ActivationAt(3));
    node.params.stride_h = static_cast<int>(sh);
    node.params.stride_w = static_cast<int>(sw);
    node.params.padding = TensatPadding(pad);
    node.params.activation = activation;
    return args.AppendTensors({4, 5}, node);
  }

  // (poolavg X KERNEL_H KERNEL_W STRIDE_H STRIDE_W PADDING ACT), likewise poolmax.
  static absl::Status ParsePool(const Args& args, OperatorNode& node) {
    if (auto s = args.Arity(7); !s.ok()) return s;
    node.kind = args.op() == "poolavg" ? OpKind::kPoolAvg : OpKind::kPoolMax;
    if (auto s = args.AppendTensors({0}, node); !s.ok()) return s;
    TASO_ASSIGN_OR_RETURN(kh, args.Number(1));
    TASO_ASSIGN_OR_RETURN(kw, args.Number(2));
    TASO_ASSIGN_OR_RETURN(sh, args.Number(3));
    TASO_ASSIGN_OR_RETURN(sw, args.Number(4));
    TASO_ASSIGN_OR_RETURN(pad, args.Number(5));
    node.params.kernel_h = static_cast<int>(kh);
    node.params.kernel_w = static_cast<int>(kw);
    node.params.stride_h = static_cast<int>(sh);
    node.params.stride_w = static_cast<int>(sw);
    node.params.padding = TensatPadding(pad);
    return absl::OkStatus();
  }

  // (concat AXIS NDIM A B)
  static absl::Status ParseConcat(const Args& args, OperatorNode& node) {
    if (auto s = args.Arity(4); !s.ok()) return s;
    node.kind = OpKind::kConcat;
    TASO_ASSIGN_OR_RETURN(axis, args.Number(0));
    node.params.axis = static_cast<int>(axis);
    return args.AppendTensors({2, 3}, node);
  }

  // (split_0 (split AXIS X)) or split_1: one output of the split.
  absl::Status ParseSplitOutput(const Args& args, OperatorNode& node) {
    if (auto s = args.Arity(1); !s.ok()) return s;
    const std::string& op = args.op();
    const Sexpr& inner = args.at(0);
    if (!inner.is_list || inner.items.size() != 3 || inner.items[0].atom != "split") {
      return absl::InvalidArgumentError(absl::StrCat(op, " takes (split AXIS X)"));
    }
    int64_t axis = 0;
    if (!absl::SimpleAtoi(inner.items[1].atom, &axis)) return absl::InvalidArgumentError("split: AXIS must be a number");
    TASO_ASSIGN_OR_RETURN(a, Build(inner.items[2]));
    node.kind = OpKind::kSplit;
    node.params.axis = static_cast<int>(axis);
    node.inputs = {a};
    node.output = op == "split_1";
    return absl::OkStatus();
  }

  // (transpose X PERM SHUFFLE), PERM like 1_0.
  static absl::Status ParseTranspose(const Args& args, OperatorNode& node) {
    if (auto s = args.Arity(3); !s.ok()) return s;
    node.kind = OpKind::kTranspose;
    if (auto s = args.AppendTensors({0}, node); !s.ok()) return s;
    for (absl::string_view d : absl::StrSplit(args.at(1).atom, '_')) {
      int v = 0;
      if (!absl::SimpleAtoi(d, &v)) return absl::InvalidArgumentError("transpose: perm is like 1_0");
      node.params.perm.push_back(v);
    }
    TASO_ASSIGN_OR_RETURN(shuffle, args.Number(2));
    node.params.shuffle = shuffle != 0;
    return absl::OkStatus();
  }

  // (enlarge KERNEL_H KERNEL_W X)
  static absl::Status ParseEnlarge(const Args& args, OperatorNode& node) {
    if (auto s = args.Arity(3); !s.ok()) return s;
    node.kind = OpKind::kEnlarge;
    TASO_ASSIGN_OR_RETURN(kh, args.Number(0));
    TASO_ASSIGN_OR_RETURN(kw, args.Number(1));
    node.params.kernel_h = static_cast<int>(kh);
    node.params.kernel_w = static_cast<int>(kw);
    return args.AppendTensors({2}, node);
  }

  // (Cpool DIMS...), (Iconv DIMS...), (Imatmul DIMS...), (Ones DIMS...)
  static absl::Status ParseConstant(const Args& args, OperatorNode& node) {
    const std::string& op = args.op();
    node.kind = op == "Cpool"     ? OpKind::kConstPool
                : op == "Iconv"   ? OpKind::kConstIConv
                : op == "Imatmul" ? OpKind::kConstIMatMul
                                  : OpKind::kConstOnes;
    for (size_t i = 0; i < args.size(); ++i) {
      TASO_ASSIGN_OR_RETURN(d, args.Number(i));
      node.params.shape.push_back(d);
    }
    return absl::OkStatus();
  }

  // A subexpression written twice (the split under split_0 and split_1,
  // or a shared operator in a multi-output side) is one node.
  absl::StatusOr<TensorRef> AddOnce(const OperatorNode& node) {
    std::string key = OpLabel(node.kind, node.params);
    for (const TensorRef& t : node.inputs) absl::StrAppend(&key, " ", t.node, ":", t.index);
    auto known = built_.find(key);
    if (known != built_.end()) return known->second[node.output];
    auto outs = graph.AddOp(node.kind, node.params, node.inputs);
    if (!outs.ok()) return outs.status();
    built_[key] = *outs;
    return (*outs)[node.output];
  }

  std::map<std::string, std::vector<TensorRef>> built_;
  absl::StatusOr<TensorRef> Variable(const std::string& spec) {
    const size_t at = spec.find('@');
    if (at == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("variable ?", spec, " has no shape: write ?", spec, "@2_4"));
    }
    const std::string name = spec.substr(0, at);
    std::vector<int64_t> dims;
    for (absl::string_view d : absl::StrSplit(spec.substr(at + 1), '_', absl::SkipEmpty())) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(d, &v) || v < 1) {
        return absl::InvalidArgumentError(absl::StrCat("variable ?", spec, ": bad dimension '", d, "'"));
      }
      dims.push_back(v);
    }
    auto it = vars_.find(name);
    if (it != vars_.end()) {
      if (graph.type(it->second).dims != dims) {
        return absl::InvalidArgumentError(absl::StrCat("variable ?", name, " is used with two shapes"));
      }
      return it->second;
    }
    const TensorType type = TensorType::RowMajor(DType::kFloat32, dims);
    TensorRef t = name[0] == 'w' ? graph.AddWeight(name, type) : graph.AddInput(name, type);
    vars_[name] = t;
    return t;
  }
  std::map<std::string, TensorRef> vars_;
};

#undef TASO_ASSIGN_OR_RETURN

absl::StatusOr<Graph> BuildSide(const Sexpr& side) {
  Builder b;
  std::vector<const Sexpr*> roots;
  if (side.is_list && !side.items.empty() && side.items[0].is_list) {
    for (const Sexpr& s : side.items) roots.push_back(&s);
  } else {
    roots.push_back(&side);
  }
  for (size_t i = 0; i < roots.size(); ++i) {
    auto t = b.Build(*roots[i]);
    if (!t.ok()) return t.status();
    b.graph.AddOutput(absl::StrCat("out", i), *t);
  }
  return std::move(b.graph);
}

}  // namespace

absl::StatusOr<std::vector<rules::Rule>> RulesFromSexpr(const std::string& text) {
  std::vector<rules::Rule> out;
  int line_number = 0;
  for (absl::string_view piece : absl::StrSplit(text, '\n')) {
    ++line_number;
    const std::string text_line(piece);
    std::string_view line(text_line);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == ';' || line[first] == '#') continue;
    line = line.substr(0, line.find(";;"));  // a trailing comment: the conditions an export wrote
    auto fail = [&](const absl::Status& s) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": ", s.message()));
    };
    const size_t arrow = line.find("=>");
    if (arrow == std::string_view::npos) return fail(absl::InvalidArgumentError("a rule is LHS=>RHS"));
    Graph sides[2];
    for (int k = 0; k < 2; ++k) {
      SexprReader reader(k == 0 ? line.substr(0, arrow) : line.substr(arrow + 2));
      auto e = reader.Read();
      if (!e.ok()) return fail(e.status());
      if (!reader.AtEnd()) return fail(absl::InvalidArgumentError("text after the expression"));
      auto g = BuildSide(*e);
      if (!g.ok()) return fail(g.status());
      sides[k] = std::move(*g);
    }
    if (sides[0].outputs().size() != sides[1].outputs().size()) {
      return fail(absl::InvalidArgumentError(absl::StrCat("the sides have ", sides[0].outputs().size(), " and ",
                                                          sides[1].outputs().size(), " outputs")));
    }
    rules::Rule rule;
    std::map<std::string, const Node*> variables;
    for (const Graph& g : sides) {
      for (const Node& n : g.nodes()) {
        if (n.kind != OpKind::kInput && n.kind != OpKind::kWeight) continue;
        auto [it, inserted] = variables.emplace(n.name, &n);
        if (!inserted && it->second->output_types[0].dims != n.output_types[0].dims) {
          return fail(absl::InvalidArgumentError(absl::StrCat("variable ?", n.name, " has two shapes")));
        }
      }
    }
    for (const auto& [name, node] : variables) {
      rules::Variable* v = rule.add_variables();
      v->set_name(name);
      *v->mutable_type() = TensorTypeToProto(node->output_types[0]);
      v->set_kind(node->kind == OpKind::kWeight ? ir::OP_WEIGHT : ir::OP_INPUT);
    }
    *rule.mutable_source() = GraphToProto(sides[0]);
    *rule.mutable_target() = GraphToProto(sides[1]);
    for (size_t i = 0; i < sides[0].outputs().size(); ++i) {
      auto* p = rule.add_outputs();
      p->set_source_output(static_cast<int>(i));
      p->set_target_output(static_cast<int>(i));
    }
    rule.set_status(rules::RULE_STATUS_CANDIDATE);
    out.push_back(std::move(rule));
  }
  return out;
}

}  // namespace taso
