#include "core/rule_sexpr.h"

#include <cctype>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/graph_proto.h"
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

// An S-expression: an atom or a list.
struct Sexpr {
  std::string atom;
  std::vector<Sexpr> items;
  bool is_list = false;
};

class SexprReader {
 public:
  explicit SexprReader(std::string_view text) : text_(text) {}

  absl::StatusOr<Sexpr> Read() {
    Skip();
    if (pos_ >= text_.size()) return Error("unexpected end");
    if (text_[pos_] == ')') return Error("unexpected ')'");
    if (text_[pos_] == '(') {
      ++pos_;
      Sexpr list;
      list.is_list = true;
      while (true) {
        Skip();
        if (pos_ >= text_.size()) return Error("missing ')'");
        if (text_[pos_] == ')') {
          ++pos_;
          return list;
        }
        auto item = Read();
        if (!item.ok()) return item.status();
        list.items.push_back(std::move(*item));
      }
    }
    const size_t start = pos_;
    while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_])) && text_[pos_] != '(' &&
           text_[pos_] != ')') {
      ++pos_;
    }
    return Sexpr{std::string(text_.substr(start, pos_ - start)), {}, false};
  }
  bool AtEnd() {
    Skip();
    return pos_ >= text_.size();
  }

 private:
  void Skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("column ", pos_ + 1, ": ", what));
  }
  std::string_view text_;
  size_t pos_ = 0;
};

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
    const std::string& op = e.items[0].atom;
    std::vector<const Sexpr*> args;
    for (size_t i = 1; i < e.items.size(); ++i) args.push_back(&e.items[i]);
    auto num = [&](size_t i) -> absl::StatusOr<int64_t> {
      int64_t v = 0;
      if (i >= args.size() || args[i]->is_list || !absl::SimpleAtoi(args[i]->atom, &v)) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": argument ", i + 1, " must be a number"));
      }
      return v;
    };
    auto tensor = [&](size_t i) -> absl::StatusOr<TensorRef> {
      if (i >= args.size()) return absl::InvalidArgumentError(absl::StrCat(op, ": missing argument ", i + 1));
      return Build(*args[i]);
    };
    auto arity = [&](size_t n) -> absl::Status {
      if (args.size() != n) {
        return absl::InvalidArgumentError(absl::StrCat(op, " takes ", n, " arguments, got ", args.size()));
      }
      return absl::OkStatus();
    };
    auto act = [&](int64_t v) -> absl::StatusOr<Activation> {
      switch (v) {
        case 0: return Activation::kNone;
        case 1: return Activation::kSigmoid;
        case 2: return Activation::kRelu;
        case 3: return Activation::kTanh;
      }
      return absl::InvalidArgumentError(absl::StrCat(op, ": activation ", v, " is not 0..3"));
    };
    OpParams p;
    std::vector<TensorRef> in;
    OpKind kind;
    int output = 0;
#define TRY(var, expr)                      \
  auto var##_or = (expr);                   \
  if (!var##_or.ok()) return var##_or.status(); \
  auto var = *var##_or
    if (op == "ewadd" || op == "ewmul" || op == "smul") {
      if (auto s = arity(2); !s.ok()) return s;
      kind = op == "ewadd" ? OpKind::kEwAdd : op == "ewmul" ? OpKind::kEwMul : OpKind::kScalarMul;
      TRY(a, tensor(0));
      TRY(b, tensor(1));
      in = {a, b};
    } else if (op == "relu" || op == "tanh" || op == "sigmoid") {
      if (auto s = arity(1); !s.ok()) return s;
      kind = op == "relu" ? OpKind::kRelu : op == "tanh" ? OpKind::kTanh : OpKind::kSigmoid;
      TRY(a, tensor(0));
      in = {a};
    } else if (op == "matmul") {
      if (auto s = arity(3); !s.ok()) return s;
      kind = OpKind::kMatMul;
      TRY(a0, num(0));
      TRY(x, act(a0));
      p.activation = x;
      TRY(a, tensor(1));
      TRY(b, tensor(2));
      in = {a, b};
    } else if (op == "conv2d") {
      if (auto s = arity(6); !s.ok()) return s;
      kind = OpKind::kConv2D;
      TRY(sh, num(0));
      TRY(sw, num(1));
      TRY(pad, num(2));
      TRY(a3, num(3));
      TRY(x, act(a3));
      p.stride_h = static_cast<int>(sh);
      p.stride_w = static_cast<int>(sw);
      p.padding = pad == 0 ? Padding::kSame : Padding::kValid;
      p.activation = x;
      TRY(a, tensor(4));
      TRY(b, tensor(5));
      in = {a, b};
    } else if (op == "poolavg" || op == "poolmax") {
      if (auto s = arity(7); !s.ok()) return s;
      kind = op == "poolavg" ? OpKind::kPoolAvg : OpKind::kPoolMax;
      TRY(a, tensor(0));
      TRY(kh, num(1));
      TRY(kw, num(2));
      TRY(sh, num(3));
      TRY(sw, num(4));
      TRY(pad, num(5));
      p.kernel_h = static_cast<int>(kh);
      p.kernel_w = static_cast<int>(kw);
      p.stride_h = static_cast<int>(sh);
      p.stride_w = static_cast<int>(sw);
      p.padding = pad == 0 ? Padding::kSame : Padding::kValid;
      in = {a};
    } else if (op == "concat") {
      if (auto s = arity(4); !s.ok()) return s;
      kind = OpKind::kConcat;
      TRY(axis, num(0));
      p.axis = static_cast<int>(axis);
      TRY(a, tensor(2));
      TRY(b, tensor(3));
      in = {a, b};
    } else if (op == "split_0" || op == "split_1") {
      if (auto s = arity(1); !s.ok()) return s;
      const Sexpr& inner = *args[0];
      if (!inner.is_list || inner.items.size() != 3 || inner.items[0].atom != "split") {
        return absl::InvalidArgumentError(absl::StrCat(op, " takes (split AXIS X)"));
      }
      int64_t axis = 0;
      if (!absl::SimpleAtoi(inner.items[1].atom, &axis)) return absl::InvalidArgumentError("split: AXIS must be a number");
      TRY(a, Build(inner.items[2]));
      kind = OpKind::kSplit;
      p.axis = static_cast<int>(axis);
      in = {a};
      output = op == "split_1";
    } else if (op == "transpose") {
      if (auto s = arity(3); !s.ok()) return s;
      kind = OpKind::kTranspose;
      TRY(a, tensor(0));
      for (absl::string_view d : absl::StrSplit(args[1]->atom, '_')) {
        int v = 0;
        if (!absl::SimpleAtoi(d, &v)) return absl::InvalidArgumentError("transpose: perm is like 1_0");
        p.perm.push_back(v);
      }
      TRY(shuffle, num(2));
      p.shuffle = shuffle != 0;
      in = {a};
    } else if (op == "enlarge") {
      if (auto s = arity(3); !s.ok()) return s;
      kind = OpKind::kEnlarge;
      TRY(kh, num(0));
      TRY(kw, num(1));
      p.kernel_h = static_cast<int>(kh);
      p.kernel_w = static_cast<int>(kw);
      TRY(a, tensor(2));
      in = {a};
    } else if (op == "Cpool" || op == "Iconv" || op == "Imatmul" || op == "Ones") {
      kind = op == "Cpool" ? OpKind::kConstPool : op == "Iconv" ? OpKind::kConstIConv
           : op == "Imatmul" ? OpKind::kConstIMatMul : OpKind::kConstOnes;
      for (size_t i = 0; i < args.size(); ++i) {
        TRY(d, num(i));
        p.shape.push_back(d);
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown operator '", op, "'"));
    }
#undef TRY
    // A subexpression written twice (the split under split_0 and split_1,
    // or a shared operator in a multi-output side) is one node.
    std::string key = OpLabel(kind, p);
    for (const TensorRef& t : in) absl::StrAppend(&key, " ", t.node, ":", t.index);
    auto known = built_.find(key);
    if (known != built_.end()) return known->second[output];
    auto outs = graph.AddOp(kind, p, in);
    if (!outs.ok()) return outs.status();
    built_[key] = *outs;
    return (*outs)[output];
  }

  Graph graph;

 private:
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
