#include "core/tensat_rules.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/rule_sexpr.h"
#include "core/sexpr.h"

namespace taso {
namespace {

constexpr int64_t kFreeDim = 4;    // a dimension nothing fixes
constexpr int64_t kKernelDim = 3;  // a kernel dimension nothing fixes
constexpr int kFreeRank = 2;       // a tensor whose rank nothing fixes

// Dimensions as terms over unknowns, unified (union-find): a dimension is
// free, a constant, the sum of two (a concat's axis), or a convolution's or
// pooling's output extent.
class DimSolver {
 public:
  int Free(bool kernel = false) { return Add({Term::kFree, 0, -1, -1, 1, true, kernel}); }
  int Const(int64_t v) { return Add({Term::kConst, v}); }
  int Sum(int a, int b) { return Add({Term::kSum, 0, a, b}); }
  // ceil(in/stride) for SAME padding, (in-kernel)/stride+1 for VALID.
  int Out(int in, int kernel, int stride, bool same) {
    if (stride == 1 && same) return in;
    return Add({Term::kOut, 0, in, kernel, stride, same});
  }

  absl::Status Unify(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return absl::OkStatus();
    const Term x = terms_[a];  // copies: unifying may add terms
    const Term y = terms_[b];
    if (x.kind == Term::kFree || y.kind == Term::kFree) {
      const int var = x.kind == Term::kFree ? a : b;
      const int other = var == a ? b : a;
      if (Occurs(var, other)) return absl::InvalidArgumentError("a dimension would contain itself");
      if (terms_[var].kernel && terms_[other].kind == Term::kFree) terms_[other].kernel = true;
      parent_[var] = other;
      return absl::OkStatus();
    }
    if (x.kind == Term::kSum || y.kind == Term::kSum) return UnifySums(a, b);
    if (x.kind != y.kind) return absl::InvalidArgumentError("two dimensions cannot be equal");
    switch (x.kind) {
      case Term::kConst:
        if (x.value != y.value) {
          return absl::InvalidArgumentError(absl::StrCat("dimensions ", x.value, " and ", y.value, " differ"));
        }
        break;
      case Term::kSum:
      case Term::kOut:
        if (x.kind == Term::kOut && (x.stride != y.stride || x.same != y.same)) {
          return absl::InvalidArgumentError("two convolution outputs of different strides or padding");
        }
        if (absl::Status s = Unify(x.a, y.a); !s.ok()) return s;
        if (absl::Status s = Unify(x.b, y.b); !s.ok()) return s;
        break;
      case Term::kFree: break;
    }
    parent_[a] = b;
    return absl::OkStatus();
  }

  absl::StatusOr<int64_t> Value(int d) const {
    const Term& t = terms_[Find(d)];
    switch (t.kind) {
      case Term::kFree: return t.kernel ? kKernelDim : kFreeDim;
      case Term::kConst: return t.value;
      case Term::kSum: {
        auto a = Value(t.a);
        auto b = Value(t.b);
        if (!a.ok() || !b.ok()) return !a.ok() ? a.status() : b.status();
        return *a + *b;
      }
      case Term::kOut: {
        auto in = Value(t.a);
        auto k = Value(t.b);
        if (!in.ok() || !k.ok()) return !in.ok() ? in.status() : k.status();
        const int64_t out = t.same ? (*in + t.stride - 1) / t.stride : (*in - *k) / t.stride + 1;
        if (out < 1) return absl::InvalidArgumentError("a convolution's window is larger than its input");
        return out;
      }
    }
    return absl::InternalError("bad dimension term");
  }

 private:
  struct Term {
    enum Kind { kFree, kConst, kSum, kOut } kind;
    int64_t value = 0;
    int a = -1, b = -1;  // sum: the two; out: input extent and kernel extent
    int stride = 1;
    bool same = true;
    bool kernel = false;  // free: a kernel extent (defaults to 3)
  };
  int Add(Term t) {
    terms_.push_back(t);
    parent_.push_back(static_cast<int>(parent_.size()));
    return parent_.back();
  }
  int Find(int d) const {
    while (parent_[d] != d) d = parent_[d] = parent_[parent_[d]];
    return d;
  }
  // The terms a sum adds up, nested sums flattened (concats nest either way).
  void Flatten(int d, std::vector<int>& out) const {
    d = Find(d);
    if (terms_[d].kind != Term::kSum) {
      out.push_back(d);
      return;
    }
    Flatten(terms_[d].a, out);
    Flatten(terms_[d].b, out);
  }
  // Two sums (or a sum and a term) as multisets of terms: what both have
  // cancels; one free term left on a side takes the other side's rest;
  // otherwise the rests are equated term by term, in order.
  absl::Status UnifySums(int a, int b) {
    std::vector<int> left, right;
    Flatten(a, left);
    Flatten(b, right);
    for (auto it = left.begin(); it != left.end();) {
      auto same = std::find(right.begin(), right.end(), *it);
      if (same == right.end()) {
        ++it;
        continue;
      }
      right.erase(same);
      it = left.erase(it);
    }
    if (left.empty() != right.empty()) {
      return absl::InvalidArgumentError("a dimension would equal a sum of it and more");
    }
    if (!left.empty()) {
      auto sum_of = [&](const std::vector<int>& terms) {
        int acc = terms[0];
        for (size_t i = 1; i < terms.size(); ++i) acc = Sum(acc, terms[i]);
        return acc;
      };
      const bool free_left = left.size() == 1 && terms_[left[0]].kind == Term::kFree;
      const bool free_right = right.size() == 1 && terms_[right[0]].kind == Term::kFree;
      if (free_left || free_right) {
        if (absl::Status s = Unify(free_left ? left[0] : right[0], free_left ? sum_of(right) : sum_of(left)); !s.ok()) {
          return s;
        }
      } else if (left.size() == right.size()) {
        for (size_t i = 0; i < left.size(); ++i) {
          if (absl::Status s = Unify(left[i], right[i]); !s.ok()) return s;
        }
      } else {
        return absl::InvalidArgumentError("two sums of dimensions cannot be matched up");
      }
    }
    const int ra = Find(a), rb = Find(b);
    if (ra != rb) parent_[ra] = rb;
    return absl::OkStatus();
  }
  bool Occurs(int var, int term) const {
    term = Find(term);
    if (term == var) return true;
    const Term& t = terms_[term];
    if (t.kind != Term::kSum && t.kind != Term::kOut) return false;
    return Occurs(var, t.a) || Occurs(var, t.b);
  }
  std::vector<Term> terms_;
  mutable std::vector<int> parent_;
};

// Tensor shapes: unknown until an operator fixes their rank, then a list of
// dimensions; unified like the dimensions.
class ShapeSolver {
 public:
  DimSolver dims;

  int Unknown() {
    parent_.push_back(static_cast<int>(parent_.size()));
    shape_.emplace_back();
    return parent_.back();
  }
  int Of(std::vector<int> d) {
    const int s = Unknown();
    shape_[s] = std::move(d);
    return s;
  }
  std::optional<int> Rank(int s) const {
    const auto& d = shape_[Find(s)];
    return d ? std::optional<int>(static_cast<int>(d->size())) : std::nullopt;
  }
  // The dimensions of `s`, which has `rank` dimensions (given them if it had none).
  absl::StatusOr<std::vector<int>> Ranked(int s, int rank) {
    s = Find(s);
    if (!shape_[s]) {
      std::vector<int> d;
      for (int i = 0; i < rank; ++i) d.push_back(dims.Free());
      shape_[s] = std::move(d);
    }
    if (static_cast<int>(shape_[s]->size()) != rank) {
      return absl::InvalidArgumentError(absl::StrCat("a ", shape_[s]->size(), "-D tensor is used as ", rank, "-D"));
    }
    return *shape_[s];
  }
  absl::Status Unify(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return absl::OkStatus();
    if (shape_[a] && shape_[b]) {
      if (shape_[a]->size() != shape_[b]->size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("a ", shape_[a]->size(), "-D and a ", shape_[b]->size(), "-D tensor would be equal"));
      }
      for (size_t i = 0; i < shape_[a]->size(); ++i) {
        if (absl::Status s = dims.Unify((*shape_[a])[i], (*shape_[b])[i]); !s.ok()) return s;
      }
    } else if (shape_[a]) {
      shape_[b] = shape_[a];
    }
    parent_[a] = b;
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<int64_t>> Concrete(int s) {
    auto d = Ranked(s, Rank(s).value_or(kFreeRank));
    if (!d.ok()) return d.status();
    std::vector<int64_t> out;
    for (int dim : *d) {
      auto v = dims.Value(dim);
      if (!v.ok()) return v.status();
      out.push_back(*v);
    }
    return out;
  }

 private:
  int Find(int s) const {
    while (parent_[s] != s) s = parent_[s] = parent_[parent_[s]];
    return s;
  }
  mutable std::vector<int> parent_;
  std::vector<std::optional<std::vector<int>>> shape_;
};

// Why an operator Tensat writes has no counterpart in our rules.
std::optional<std::string> Unwritable(const std::string& op) {
  static const auto* reasons = new std::map<std::string, std::string>{
      {"noop", "noop joins several outputs into one root; our rules list their outputs instead"},
      {"dropout", "our operator set has no dropout (the identity at inference)"},
      {"batchnorm", "batch norms are folded into convolutions before any search; no rule reads one"},
      {"input", "input names a model tensor; a rule's variables are ?names"},
      {"weight", "weight names a model tensor; a rule's variables are ?names"},
      {"merge", "our rule reader does not read merge (merge_gconv)"},
      {"reshape", "our rule reader does not read reshape"},
      {"split", "a split's outputs are read as (split_0 (split AXIS X)) and (split_1 ...)"},
  };
  auto it = reasons->find(op);
  if (it == reasons->end()) return std::nullopt;
  return it->second;
}

bool IsVariable(const Sexpr& e) { return !e.is_list && !e.atom.empty() && e.atom[0] == '?'; }

// One line: shapes inferred over both sides, then written in our syntax.
class LineConverter {
 public:
  // The shape of each side's outputs (a side may list several).
  absl::Status Infer(const Sexpr& lhs, const Sexpr& rhs) {
    auto left = Roots(lhs);
    auto right = Roots(rhs);
    if (left.size() != right.size()) {
      return absl::InvalidArgumentError(absl::StrCat("the sides have ", left.size(), " and ", right.size(), " outputs"));
    }
    for (size_t i = 0; i < left.size(); ++i) {
      auto a = Shape(*left[i], false);
      if (!a.ok()) return a.status();
      auto b = Shape(*right[i], false);
      if (!b.ok()) return b.status();
      if (absl::Status s = solver_.Unify(*a, *b); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("the sides' output ", i, " cannot have one shape: ", s.message()));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Write(const Sexpr& side) {
    auto roots = Roots(side);
    std::vector<std::string> parts;
    for (const Sexpr* r : roots) {
      auto text = WriteExpr(*r);
      if (!text.ok()) return text.status();
      parts.push_back(*text);
    }
    return parts.size() == 1 ? parts[0] : absl::StrCat("(", absl::StrJoin(parts, " "), ")");
  }

 private:
  static std::vector<const Sexpr*> Roots(const Sexpr& side) {
    std::vector<const Sexpr*> roots;
    if (side.is_list && !side.items.empty() && side.items[0].is_list) {
      for (const Sexpr& s : side.items) roots.push_back(&s);
    } else {
      roots.push_back(&side);
    }
    return roots;
  }

  struct Var {
    int shape = -1;
    bool given = false;  // written with a shape: keeps its name and shape
    bool weight = false;
  };

  absl::StatusOr<int64_t> Number(const Sexpr& e, const std::string& op) const {
    int64_t v = 0;
    if (e.is_list || !absl::SimpleAtoi(e.atom, &v)) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": '", WriteSexpr(e), "' is not a number"));
    }
    return v;
  }

  absl::StatusOr<int> Variable(const Sexpr& e, bool weight) {
    const std::string spec = e.atom.substr(1);
    const size_t at = spec.find('@');
    const std::string name = spec.substr(0, at);
    if (name.empty()) return absl::InvalidArgumentError("a variable without a name");
    auto [it, fresh] = vars_.try_emplace(name);
    Var& v = it->second;
    if (fresh) {
      v.shape = solver_.Unknown();
      if (at != std::string::npos) {
        v.given = true;
        std::vector<int> dims;
        for (absl::string_view d : absl::StrSplit(spec.substr(at + 1), '_', absl::SkipEmpty())) {
          int64_t value = 0;
          if (!absl::SimpleAtoi(d, &value) || value < 1) {
            return absl::InvalidArgumentError(absl::StrCat("variable ?", spec, ": bad dimension '", d, "'"));
          }
          dims.push_back(solver_.dims.Const(value));
        }
        v.shape = solver_.Of(std::move(dims));
      }
    }
    v.weight = v.weight || weight;
    return v.shape;
  }

  // One operator application being shaped: `e` is (op arg...), read where
  // TASO only put weights when `weight` is set.
  struct OpCall {
    const Sexpr& e;
    const std::string& op;
    bool weight;

    size_t n() const { return e.items.size() - 1; }
    const Sexpr& arg(size_t i) const { return e.items[i + 1]; }
    absl::Status Arity(size_t want) const {
      if (n() == want) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat(op, " takes ", want, " arguments, got ", n()));
    }
  };
  using Shaper = absl::StatusOr<int> (LineConverter::*)(const OpCall&);

  // The shaper of each operator we read; a table keeps Shape() a dispatch
  // and puts each operator family's rules in one place.
  static const Shaper* ShaperOf(const std::string& op) {
    static const auto* shapers = new std::map<std::string, Shaper>{
        {"ewadd", &LineConverter::ShapeElementwise},
        {"ewmul", &LineConverter::ShapeElementwise},
        {"smul", &LineConverter::ShapeScalarMul},
        {"relu", &LineConverter::ShapeActivation},
        {"tanh", &LineConverter::ShapeActivation},
        {"sigmoid", &LineConverter::ShapeActivation},
        {"matmul", &LineConverter::ShapeMatmul},
        {"conv2d", &LineConverter::ShapeConv2d},
        {"poolavg", &LineConverter::ShapePool},
        {"poolmax", &LineConverter::ShapePool},
        {"concat", &LineConverter::ShapeConcat},
        {"concat3", &LineConverter::ShapeConcat},
        {"concat4", &LineConverter::ShapeConcat},
        {"concat5", &LineConverter::ShapeConcat},
        {"split_0", &LineConverter::ShapeSplitOutput},
        {"split_1", &LineConverter::ShapeSplitOutput},
        {"transpose", &LineConverter::ShapeTranspose},
        {"enlarge", &LineConverter::ShapeEnlarge},
        {"Cpool", &LineConverter::ShapeConstant},
        {"Iconv", &LineConverter::ShapeConstant},
        {"Imatmul", &LineConverter::ShapeConstant},
        {"Ones", &LineConverter::ShapeConstant},
    };
    auto it = shapers->find(op);
    return it == shapers->end() ? nullptr : &it->second;
  }

  // The shape of `e`; `weight`: e is read where TASO only put weights.
  absl::StatusOr<int> Shape(const Sexpr& e, bool weight) {
    if (IsVariable(e)) return Variable(e, weight);
    if (!e.is_list || e.items.empty() || e.items[0].is_list) {
      return absl::InvalidArgumentError(absl::StrCat("'", WriteSexpr(e), "' is neither a ?variable nor an operator"));
    }
    const std::string& op = e.items[0].atom;
    if (auto why = Unwritable(op)) return absl::UnimplementedError(*why);
    const Shaper* shaper = ShaperOf(op);
    if (shaper == nullptr) return absl::UnimplementedError(absl::StrCat("unknown operator '", op, "'"));
    return (this->*(*shaper))(OpCall{e, op, weight});
  }

  // The shape of argument `i`, a weight position if the call is in one or `w`.
  absl::StatusOr<int> Tensor(const OpCall& c, size_t i, bool w = false) { return Shape(c.arg(i), c.weight || w); }

// Early returns for the shapers below: bind `var` to the value of a
// StatusOr, or return a failed Status.
#define TASO_TRY(var, expr)                     \
  auto var##_or = (expr);                       \
  if (!var##_or.ok()) return var##_or.status(); \
  auto var = *var##_or
#define TASO_TRY_STATUS(expr) \
  if (absl::Status s_ = (expr); !s_.ok()) return s_

  // ewadd, ewmul: both operands and the result have one shape.
  absl::StatusOr<int> ShapeElementwise(const OpCall& c) {
    TASO_TRY_STATUS(c.Arity(2));
    TASO_TRY(a, Tensor(c, 0));
    TASO_TRY(b, Tensor(c, 1));
    TASO_TRY_STATUS(solver_.Unify(a, b));
    return a;
  }

  // smul: a tensor times a scalar (a 0-D tensor).
  absl::StatusOr<int> ShapeScalarMul(const OpCall& c) {
    TASO_TRY_STATUS(c.Arity(2));
    TASO_TRY(a, Tensor(c, 0));
    TASO_TRY(s, Tensor(c, 1));
    TASO_TRY_STATUS(solver_.Ranked(s, 0).status());
    return a;
  }

  // relu, tanh, sigmoid: the operand's shape.
  absl::StatusOr<int> ShapeActivation(const OpCall& c) {
    TASO_TRY_STATUS(c.Arity(1));
    return Tensor(c, 0);
  }

  // (matmul ACTIVATION A B): batch dimensions agree, A's last meets B's
  // second-to-last; B is where TASO puts weights.
  absl::StatusOr<int> ShapeMatmul(const OpCall& c) {
    TASO_TRY_STATUS(c.Arity(3));
    TASO_TRY_STATUS(Number(c.arg(0), c.op).status());
    TASO_TRY(a, Tensor(c, 1));
    TASO_TRY(b, Tensor(c, 2, true));
    const int rank = solver_.Rank(a).value_or(solver_.Rank(b).value_or(2));
    if (rank < 2) return absl::InvalidArgumentError("matmul of a tensor below 2-D");
    TASO_TRY(da, solver_.Ranked(a, rank));
    TASO_TRY(db, solver_.Ranked(b, rank));
    for (int i = 0; i < rank - 2; ++i) TASO_TRY_STATUS(solver_.dims.Unify(da[i], db[i]));
    TASO_TRY_STATUS(solver_.dims.Unify(da[rank - 1], db[rank - 2]));
    std::vector<int> out(da.begin(), da.end() - 1);
    out.push_back(db[rank - 1]);
    return solver_.Of(out);
  }

  // (conv2d SH SW PAD ACTIVATION X W), NCHW input and OIHW kernel of one group.
  absl::StatusOr<int> ShapeConv2d(const OpCall& c) {
    TASO_TRY_STATUS(c.Arity(6));
    TASO_TRY(sh, Number(c.arg(0), c.op));
    TASO_TRY(sw, Number(c.arg(1), c.op));
    TASO_TRY(pad, Number(c.arg(2), c.op));
    TASO_TRY_STATUS(Number(c.arg(3), c.op).status());
    if (sh < 1 || sw < 1) return absl::InvalidArgumentError("conv2d: strides must be positive");
    TASO_TRY(x, Tensor(c, 4));
    TASO_TRY(w, Tensor(c, 5, true));
    TASO_TRY(dx, solver_.Ranked(x, 4));
    const bool fresh_kernel = !solver_.Rank(w).has_value();
    TASO_TRY(dw, solver_.Ranked(w, 4));
    if (fresh_kernel) {
      // Kernel extents nothing else fixes default to 3.
      for (int i : {2, 3}) TASO_TRY_STATUS(solver_.dims.Unify(dw[i], solver_.dims.Free(/*kernel=*/true)));
    }
    TASO_TRY_STATUS(solver_.dims.Unify(dx[1], dw[1]));  // one group
    return solver_.Of({dx[0], dw[0], solver_.dims.Out(dx[2], dw[2], static_cast<int>(sh), pad == 0),
                       solver_.dims.Out(dx[3], dw[3], static_cast<int>(sw), pad == 0)});
  }

  // (poolavg|poolmax X KH KW SH SW PAD ACTIVATION) over an NCHW input.
  absl::StatusOr<int> ShapePool(const OpCall& c) {
    TASO_TRY_STATUS(c.Arity(7));
    TASO_TRY(x, Tensor(c, 0));
    std::vector<int64_t> p;
    for (size_t i = 1; i <= 5; ++i) {
      TASO_TRY(v, Number(c.arg(i), c.op));
      p.push_back(v);
    }
    if (p[2] < 1 || p[3] < 1) return absl::InvalidArgumentError(absl::StrCat(c.op, ": strides must be positive"));
    TASO_TRY(dx, solver_.Ranked(x, 4));
    return solver_.Of({dx[0], dx[1],
                       solver_.dims.Out(dx[2], solver_.dims.Const(p[0]), static_cast<int>(p[2]), p[4] == 0),
                       solver_.dims.Out(dx[3], solver_.dims.Const(p[1]), static_cast<int>(p[3]), p[4] == 0)});
  }

  // (concat AXIS NDIM A B), concatN with N inputs: the inputs agree off the
  // axis, and the axis is their sum.
  absl::StatusOr<int> ShapeConcat(const OpCall& c) {
    const size_t inputs = c.op == "concat" ? 2 : static_cast<size_t>(c.op.back() - '0');
    TASO_TRY_STATUS(c.Arity(2 + inputs));
    TASO_TRY(axis, Number(c.arg(0), c.op));
    TASO_TRY(ndim, Number(c.arg(1), c.op));
    if (ndim < 1 || ndim > 8 || axis < 0 || axis >= ndim) {
      return absl::InvalidArgumentError(absl::StrCat(c.op, ": axis ", axis, " of a ", ndim, "-D concat"));
    }
    std::vector<int> acc;
    for (size_t i = 0; i < inputs; ++i) {
      TASO_TRY(t, Tensor(c, 2 + i));
      TASO_TRY(d, solver_.Ranked(t, static_cast<int>(ndim)));
      if (i == 0) {
        acc = d;
        continue;
      }
      for (int k = 0; k < ndim; ++k) {
        if (k != axis) TASO_TRY_STATUS(solver_.dims.Unify(acc[k], d[k]));
      }
      acc[axis] = solver_.dims.Sum(acc[axis], d[axis]);
    }
    return solver_.Of(acc);
  }

  // (split_0|split_1 (split AXIS X)): one of two parts whose sum is X's axis.
  absl::StatusOr<int> ShapeSplitOutput(const OpCall& c) {
    TASO_TRY_STATUS(c.Arity(1));
    const Sexpr& inner = c.arg(0);
    if (!inner.is_list || inner.items.size() != 3 || inner.items[0].atom != "split") {
      return absl::InvalidArgumentError(absl::StrCat(c.op, " takes (split AXIS X)"));
    }
    TASO_TRY(axis, Number(inner.items[1], "split"));
    TASO_TRY(x, Shape(inner.items[2], c.weight));
    const int rank = solver_.Rank(x).value_or(std::max<int>(kFreeRank, static_cast<int>(axis) + 1));
    if (axis < 0 || axis >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("split: axis ", axis, " of ", rank, "-D"));
    }
    TASO_TRY(dx, solver_.Ranked(x, rank));
    const int first = solver_.dims.Free();
    const int second = solver_.dims.Free();
    TASO_TRY_STATUS(solver_.dims.Unify(dx[axis], solver_.dims.Sum(first, second)));
    dx[axis] = c.op == "split_0" ? first : second;
    return solver_.Of(dx);
  }

  // (transpose X PERM SHUFFLE), PERM written like 1_0.
  absl::StatusOr<int> ShapeTranspose(const OpCall& c) {
    TASO_TRY_STATUS(c.Arity(3));
    TASO_TRY(x, Tensor(c, 0));
    std::vector<int> perm;
    for (absl::string_view p : absl::StrSplit(c.arg(1).atom, '_')) {
      int v = 0;
      if (!absl::SimpleAtoi(p, &v)) return absl::InvalidArgumentError("transpose: perm is like 1_0");
      perm.push_back(v);
    }
    TASO_TRY_STATUS(Number(c.arg(2), c.op).status());
    TASO_TRY(dx, solver_.Ranked(x, static_cast<int>(perm.size())));
    std::vector<int> out;
    for (int p : perm) {
      if (p < 0 || p >= static_cast<int>(dx.size())) return absl::InvalidArgumentError("transpose: bad perm");
      out.push_back(dx[p]);
    }
    return solver_.Of(out);
  }

  // Ours, (enlarge KH KW X), or Tensat's, (enlarge X REFERENCE): a kernel
  // grown to KHxKW or to the reference kernel's extents.
  absl::StatusOr<int> ShapeEnlarge(const OpCall& c) {
    if (c.n() == 3) {
      TASO_TRY(kh, Number(c.arg(0), c.op));
      TASO_TRY(kw, Number(c.arg(1), c.op));
      TASO_TRY(x, Tensor(c, 2, true));
      TASO_TRY(dx, solver_.Ranked(x, 4));
      return solver_.Of({dx[0], dx[1], solver_.dims.Const(kh), solver_.dims.Const(kw)});
    }
    TASO_TRY_STATUS(c.Arity(2));
    TASO_TRY(x, Tensor(c, 0, true));
    TASO_TRY(ref, Tensor(c, 1, true));
    TASO_TRY(dx, solver_.Ranked(x, 4));
    TASO_TRY(dr, solver_.Ranked(ref, 4));
    reference_[&c.e] = ref;  // written out as ours once the reference's shape is known
    return solver_.Of({dx[0], dx[1], dr[2], dr[3]});
  }

  // Cpool, Iconv, Imatmul, Ones: constants whose arguments are their dimensions.
  absl::StatusOr<int> ShapeConstant(const OpCall& c) {
    std::vector<int> dims;
    for (size_t i = 0; i < c.n(); ++i) {
      TASO_TRY(v, Number(c.arg(i), c.op));
      dims.push_back(solver_.dims.Const(v));
    }
    return solver_.Of(dims);
  }
#undef TASO_TRY
#undef TASO_TRY_STATUS

  std::string NameOf(const std::string& name, const Var& v) const {
    if (v.given) return name;
    if (v.weight) return name[0] == 'w' ? name : "w_" + name;
    return name[0] == 'w' ? "x_" + name : name;
  }

  absl::StatusOr<std::string> WriteExpr(const Sexpr& e) {
    if (IsVariable(e)) {
      const std::string spec = e.atom.substr(1);
      const std::string name = spec.substr(0, spec.find('@'));
      const Var& v = vars_.at(name);
      auto dims = solver_.Concrete(v.shape);
      if (!dims.ok()) return dims.status();
      return absl::StrCat("?", NameOf(name, v), "@", absl::StrJoin(*dims, "_"));
    }
    if (!e.is_list) return e.atom;
    const std::string& op = e.items.empty() ? "" : e.items[0].atom;
    std::vector<std::string> items;
    for (size_t i = 1; i < e.items.size(); ++i) {
      auto t = WriteExpr(e.items[i]);
      if (!t.ok()) return t.status();
      items.push_back(*t);
    }
    if (op == "concat3" || op == "concat4" || op == "concat5") {
      // (concatN AXIS NDIM A B C ...) -> (concat AXIS NDIM (concat AXIS NDIM A B) C) ...
      std::string acc = items[2];
      for (size_t i = 3; i < items.size(); ++i) {
        acc = absl::StrCat("(concat ", items[0], " ", items[1], " ", acc, " ", items[i], ")");
      }
      return acc;
    }
    if (auto ref = reference_.find(&e); ref != reference_.end()) {
      auto dims = solver_.Concrete(ref->second);
      if (!dims.ok()) return dims.status();
      return absl::StrCat("(enlarge ", (*dims)[2], " ", (*dims)[3], " ", items[0], ")");
    }
    return absl::StrCat("(", op, items.empty() ? "" : " ", absl::StrJoin(items, " "), ")");
  }

  ShapeSolver solver_;
  std::map<std::string, Var> vars_;
  std::map<const Sexpr*, int> reference_;  // Tensat enlarges: the reference kernel's shape
};

}  // namespace

absl::StatusOr<std::vector<TensatRule>> ReadTensatRules(const std::string& text) {
  std::vector<TensatRule> out;
  int line_number = 0;
  for (absl::string_view piece : absl::StrSplit(text, '\n')) {
    ++line_number;
    std::string line(piece);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == ';' || line[first] == '#') continue;
    line = line.substr(0, line.find(";;"));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    auto fail = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": ", what));
    };
    const size_t arrow = line.find("=>");
    if (arrow == std::string::npos) return fail("a rule is LHS=>RHS");
    Sexpr sides[2];
    for (int k = 0; k < 2; ++k) {
      SexprReader reader(k == 0 ? std::string_view(line).substr(0, arrow) : std::string_view(line).substr(arrow + 2));
      auto e = reader.Read();
      if (!e.ok()) return fail(e.status().message());
      if (!reader.AtEnd()) return fail("text after the expression");
      sides[k] = std::move(*e);
    }
    TensatRule rule;
    rule.line = line_number;
    rule.text = line.substr(first);
    LineConverter converter;
    absl::Status inferred = converter.Infer(sides[0], sides[1]);
    if (inferred.ok()) {
      auto lhs = converter.Write(sides[0]);
      auto rhs = converter.Write(sides[1]);
      if (lhs.ok() && rhs.ok()) {
        rule.sexpr = absl::StrCat(*lhs, "=>", *rhs);
      } else {
        inferred = !lhs.ok() ? lhs.status() : rhs.status();
      }
    }
    if (inferred.ok()) {
      auto parsed = RulesFromSexpr(rule.sexpr);
      if (parsed.ok() && parsed->size() == 1) {
        rule.rule = std::move((*parsed)[0]);
      } else {
        inferred = parsed.ok() ? absl::InternalError("not one rule") : parsed.status();
        // Our reader's message names "line 1", the converted text's own line.
        std::string message(inferred.message());
        if (message.rfind("line 1: ", 0) == 0) inferred = absl::InvalidArgumentError(message.substr(8));
        rule.sexpr.clear();
      }
    }
    if (!inferred.ok()) rule.not_expressible = std::string(inferred.message());
    out.push_back(std::move(rule));
  }
  return out;
}

}  // namespace taso
