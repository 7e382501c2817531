#include "verifier/axiom_instances.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/evaluator.h"
#include "core/op_registry.h"
#include "core/proof_signature.h"
#include "core/tensor_type.h"
#include "verifier/axioms.h"
#include "verifier/symbols.h"
#include "z3++.h"

namespace taso::verifier::internal {
namespace {

// ---- The symbolic value domain for the reference interpreter ----

thread_local z3::context* symbolic_context = nullptr;

// A real-valued term; empty means "no value yet" (max pooling's start).
struct Sym {
  std::optional<z3::expr> e;
};

struct SymbolicDomain {
  using T = Sym;
  const z3::func_decl* relu = nullptr;

  static T Add(const T& a, const T& b) { return Sym{*a.e + *b.e}; }
  static T Mul(const T& a, const T& b) { return Sym{*a.e * *b.e}; }
  static T Zero() { return Sym{symbolic_context->real_val(0)}; }
  static T One() { return Sym{symbolic_context->real_val(1)}; }
  static T Max(const T& a, const T& b) {
    if (!a.e) return b;
    if (!b.e) return a;
    return Sym{z3::ite(*a.e >= *b.e, *a.e, *b.e)};
  }
  static T Lowest() { return Sym{}; }
  static const char* Name() { return "symbolic"; }
  absl::Status Supports(Activation a) const {
    if (a == Activation::kNone || a == Activation::kRelu) return absl::OkStatus();
    return absl::UnimplementedError(absl::StrCat(ActivationName(a), " is not modelled symbolically"));
  }
  T Activate(Activation a, const T& x) const { return a == Activation::kNone ? x : Sym{(*relu)(*x.e)}; }
  static T AvgFinish(const T& sum, int64_t divisor, int64_t) {
    return Sym{*sum.e / symbolic_context->real_val(divisor)};
  }
  static T PoolConstant(int64_t kh, int64_t kw) {
    return Sym{symbolic_context->real_val(1) / symbolic_context->real_val(kh * kw)};
  }
};

using SymTensor = Tensor<Sym>;

// ---- From the axioms' function symbols back to IR operators ----

struct Application {
  OpKind kind;
  OpParams params;
  int output = 0;
};

// The IR operator a function symbol stands for, or nullopt when the integer
// parameters name none (an out-of-range padding, say).
std::optional<Application> Decode(const std::string& name, const std::vector<int64_t>& p) {
  Application a;
  auto act = [](int64_t v) -> std::optional<Activation> {
    if (v == kActNone) return Activation::kNone;
    if (v == kActRelu) return Activation::kRelu;
    return std::nullopt;
  };
  auto pad = [](int64_t v) -> std::optional<Padding> {
    if (v == kPadSame) return Padding::kSame;
    if (v == kPadValid) return Padding::kValid;
    return std::nullopt;
  };
  auto need = [&](size_t n) { return p.size() == n; };
  if (name == "ewadd" || name == "ewadd_bcast") return Application{OpKind::kEwAdd, {}, 0};
  if (name == "ewmul" || name == "ewmul_bcast") return Application{OpKind::kEwMul, {}, 0};
  if (name == "smul") return Application{OpKind::kScalarMul, {}, 0};
  if (name == "relu") return Application{OpKind::kRelu, {}, 0};
  if (name == "transpose" && need(1)) {
    const int64_t rank = p[0] / 10000;
    int64_t digits = p[0] % 10000;
    if (rank < 1 || rank > 4) return std::nullopt;
    a.kind = OpKind::kTranspose;
    a.params.perm.assign(rank, 0);
    for (int64_t i = rank - 1; i >= 0; --i) {
      a.params.perm[i] = static_cast<int>(digits % rank);
      digits /= rank;
    }
    return a;
  }
  if ((name == "matmul" || absl::StartsWith(name, "matmul_r")) && need(1)) {
    auto x = act(p[0]);
    if (!x) return std::nullopt;
    a.kind = OpKind::kMatMul;
    a.params.activation = *x;
    return a;
  }
  if (name == "conv2d" && need(5)) {
    auto x = act(p[3]);
    auto y = pad(p[2]);
    if (!x || !y || p[0] < 1 || p[1] < 1) return std::nullopt;
    a.kind = OpKind::kConv2D;
    a.params.stride_h = static_cast<int>(p[0]);
    a.params.stride_w = static_cast<int>(p[1]);
    a.params.padding = *y;
    a.params.activation = *x;
    return a;
  }
  if ((name == "pool_avg" && need(6)) || (name == "pool_max" && need(5))) {
    auto y = pad(p[4]);
    if (!y || p[0] < 1 || p[1] < 1 || p[2] < 1 || p[3] < 1) return std::nullopt;
    a.kind = name == "pool_avg" ? OpKind::kPoolAvg : OpKind::kPoolMax;
    a.params.kernel_h = static_cast<int>(p[0]);
    a.params.kernel_w = static_cast<int>(p[1]);
    a.params.stride_h = static_cast<int>(p[2]);
    a.params.stride_w = static_cast<int>(p[3]);
    a.params.padding = *y;
    if (name == "pool_avg") {
      if (p[5] != 0 && p[5] != 1) return std::nullopt;
      a.params.count_include_pad = p[5] == 1;
    }
    return a;
  }
  if (name == "concat" && need(2)) {
    if (p[1] != 0 && p[1] != 1) return std::nullopt;
    a.kind = OpKind::kConcat;
    a.params.axis = static_cast<int>(p[0]);
    return a;
  }
  if ((name == "split_0" || name == "split_1") && need(1)) {
    a.kind = OpKind::kSplit;
    a.params.axis = static_cast<int>(p[0]);
    a.output = name == "split_1";
    return a;
  }
  if (name == "enlarge" && need(2)) {
    a.kind = OpKind::kEnlarge;
    a.params.kernel_h = static_cast<int>(p[0]);
    a.params.kernel_w = static_cast<int>(p[1]);
    return a;
  }
  if (name == "const_pool" || name == "const_iconv" || absl::StartsWith(name, "const_ones_r")) {
    a.kind = name == "const_pool" ? OpKind::kConstPool : name == "const_iconv" ? OpKind::kConstIConv : OpKind::kConstOnes;
    a.params.shape.assign(p.begin(), p.end());
    return a;
  }
  if (name == "const_imatmul" && need(1)) {
    a.kind = OpKind::kConstIMatMul;
    a.params.shape = {p[0], p[0]};
    return a;
  }
  return std::nullopt;
}

// ---- Instances ----

struct Instantiated {
  std::vector<z3::expr> tensors;  // bound tensor variables, in order
  std::vector<z3::expr> ints;     // bound integer variables
  z3::expr lhs, rhs;
  std::vector<z3::expr> triggers;  // the quantifier's single-term patterns, over the variables above
};

// Opens a quantified equation `forall vars. lhs = rhs`.
absl::StatusOr<Instantiated> Open(z3::context& ctx, const z3::expr& formula) {
  z3::expr body = formula;
  if (formula.is_quantifier()) {
    const unsigned n = Z3_get_quantifier_num_bound(ctx, formula);
    std::vector<z3::expr> bound;
    for (unsigned i = 0; i < n; ++i) {
      z3::symbol name(ctx, Z3_get_quantifier_bound_name(ctx, formula, i));
      z3::sort sort(ctx, Z3_get_quantifier_bound_sort(ctx, formula, i));
      bound.push_back(ctx.constant(name.str().c_str(), sort));
    }
    std::vector<Z3_ast> to;
    for (unsigned i = 0; i < n; ++i) to.push_back(bound[n - 1 - i]);  // de Bruijn order
    body = z3::expr(ctx, Z3_substitute_vars(ctx, formula.body(), n, to.data()));
    Instantiated out{{}, {}, body, body, {}};
    for (const z3::expr& b : bound) (b.get_sort().is_int() ? out.ints : out.tensors).push_back(b);
    if (!body.is_app() || body.decl().decl_kind() != Z3_OP_EQ) {
      return absl::InvalidArgumentError("an axiom must be a quantified equation");
    }
    out.lhs = body.arg(0);
    out.rhs = body.arg(1);
    for (unsigned i = 0; i < Z3_get_quantifier_num_patterns(ctx, formula); ++i) {
      Z3_pattern pattern = Z3_get_quantifier_pattern_ast(ctx, formula, i);
      if (Z3_get_pattern_num_terms(ctx, pattern) != 1) {
        return absl::InvalidArgumentError("axiom validation checks single-term patterns only");
      }
      z3::expr term(ctx, Z3_get_pattern(ctx, pattern, 0));
      out.triggers.push_back(z3::expr(ctx, Z3_substitute_vars(ctx, term, n, to.data())));
    }
    // Without patterns Z3 picks its own; the smallest terms binding every
    // variable are what it starts from.
    if (out.triggers.empty()) {
      std::vector<z3::expr> vars(out.tensors);
      vars.insert(vars.end(), out.ints.begin(), out.ints.end());
      out.triggers = MinimalTriggers(vars, out.lhs, out.rhs);
    }
    return out;
  }
  if (!body.is_app() || body.decl().decl_kind() != Z3_OP_EQ) {
    return absl::InvalidArgumentError("an axiom must be a quantified equation");
  }
  return Instantiated{{}, {}, body.arg(0), body.arg(1), {}};
}

class Checker final : public AxiomInstanceChecker {
 public:
  Checker(const std::vector<std::vector<int64_t>>& shapes, uint64_t rlimit) : shapes_(shapes) {
    // Type ids 0..shapes-1 are the candidate shapes, in order.
    for (const auto& shape : shapes_) Intern(TensorType::RowMajor(DType::kFloat32, shape));
    z3::params params(ctx_);
    params.set("rlimit", static_cast<unsigned>(std::min<uint64_t>(rlimit, UINT32_MAX)));  // 0: none
    solver_.set(params);
    solver_.add(relu_(ctx_.real_val(0)) == ctx_.real_val(0));
  }

  absl::Status Build(const AxiomSource& source) {
    symbolic_context = &ctx_;
    auto all = BuildAxioms(symbols_);  // declares every function symbol, for extra axioms too
    if (!all.ok()) return all.status();
    std::optional<z3::expr> formula;
    if (source.smt2.empty()) {
      for (const BuiltAxiom& a : *all) {
        if (a.info.name == source.name) formula = a.formula;
      }
      if (!formula) return absl::NotFoundError(absl::StrCat("no axiom named '", source.name, "'"));
    } else {
      z3::expr_vector parsed = symbols_.ParseSmt2(source.smt2);
      if (parsed.size() != 1) return absl::InvalidArgumentError("give one assertion per extra axiom");
      formula = parsed[0];
    }
    auto opened = Open(ctx_, *formula);
    if (!opened.ok()) return opened.status();
    inst_.emplace(std::move(*opened));
    for (const z3::expr& v : inst_->ints) int_params_.push_back(v.decl().name().str());
    if (inst_->tensors.size() > 63) return absl::InvalidArgumentError("an axiom may bind at most 63 tensors");
    return absl::OkStatus();
  }

  const std::vector<std::string>& IntParams() const override { return int_params_; }

  StratumOutcome Run(const std::vector<int64_t>& values, int64_t budget) override {
    const auto start = std::chrono::steady_clock::now();
    symbolic_context = &ctx_;
    out_ = StratumOutcome{};
    budget_ = budget;
    values_ = values;
    try {
      z3::expr_vector from(ctx_), to(ctx_);
      for (size_t i = 0; i < inst_->ints.size(); ++i) {
        from.push_back(inst_->ints[i]);
        to.push_back(ctx_.int_val(static_cast<int64_t>(values[i])));
      }
      lhs_ = inst_->lhs.substitute(from, to);
      rhs_ = inst_->rhs.substitute(from, to);
      CollectTerms();
      const size_t n = inst_->tensors.size();
      shapes_of_.assign(n, nullptr);
      var_types_.assign(n, -1);
      // completions_[k]: the full assignments one rejected choice at step k rules out.
      completions_.assign(n + 1, 1);
      for (size_t k = n; k-- > 0;) {
        completions_[k] = SaturatingMul(completions_[k + 1], static_cast<int64_t>(shapes_.size()));
      }
      pass_ = Pass::kBothSides;
      PlanChecks(std::vector<bool>(terms_.size(), true));
      // Terms over no tensor variable (constants) are typed once per stratum.
      if (TypeChecksAt(-1)) {
        Assign(0);
      } else {
        out_.ill_typed = completions_[0];
      }
      pass_ = Pass::kTrigger;
      for (z3::expr trigger : inst_->triggers) {
        auto it = term_of_id_.find(trigger.substitute(from, to).id());
        if (it == term_of_id_.end()) {
          Fail(absl::StrCat("the pattern ", trigger.to_string(), " is not a term of either side"));
          continue;
        }
        trigger_ = it->second;
        PlanChecks(Subterms(trigger_));
        if (TypeChecksAt(-1)) Assign(0);
      }
    } catch (const z3::exception& e) {
      Fail(absl::StrCat(Describe(), ": z3: ", e.msg()));
    }
    out_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out_;
  }

 private:
  // The stratum's plan (PlanChecks): subterms and when each is typed.
  struct Operand {
    int var = -1;   // a tensor variable
    int term = -1;  // or an earlier entry of terms_
  };
  struct PlannedTerm {
    std::string name;
    std::vector<int64_t> params;
    std::optional<Application> app;  // nullopt: no IR operator, never well-typed
    std::vector<Operand> operands;
    int op = 0;                      // the operator with its parameters, an id in op_ids_
    uint64_t vars = 0;               // bit i: reads tensor variable i
    int type = -1;                   // under the current shapes, once checked (an id in types_)
  };

  // Typing alone costs no solver call, so the trigger pass has no budget.
  bool Full() const { return pass_ == Pass::kBothSides && budget_ > 0 && out_.instances >= budget_; }

  int VarIndex(const z3::expr& e) const {
    for (size_t i = 0; i < inst_->tensors.size(); ++i) {
      if (z3::eq(inst_->tensors[i], e)) return static_cast<int>(i);
    }
    return -1;
  }

  // Every application subterm once, operands first, decoded once per stratum
  // so the enumeration below never touches Z3 terms.
  Operand Collect(const z3::expr& e) {
    const int v = VarIndex(e);
    if (v >= 0) return Operand{v, -1};
    if (auto it = term_of_id_.find(e.id()); it != term_of_id_.end()) return Operand{-1, it->second};
    PlannedTerm t;
    std::vector<z3::expr> args;
    if (SplitArgs(e, t.params, args).ok()) t.app = Decode(e.decl().name().str(), t.params);
    t.name = e.decl().name().str();
    const std::string op = absl::StrCat(t.name, "(", absl::StrJoin(t.params, ","), ")");
    t.op = op_ids_.try_emplace(op, static_cast<int>(op_ids_.size())).first->second;
    for (const z3::expr& a : args) {
      const Operand o = Collect(a);
      t.vars |= o.var >= 0 ? uint64_t{1} << o.var : terms_[o.term].vars;
      t.operands.push_back(o);
    }
    terms_.push_back(std::move(t));
    term_of_id_[e.id()] = static_cast<int>(terms_.size()) - 1;
    return Operand{-1, static_cast<int>(terms_.size()) - 1};
  }

  void CollectTerms() {
    terms_.clear();
    term_of_id_.clear();
    lhs_root_ = Collect(lhs_);
    rhs_root_ = Collect(rhs_);
  }

  // Term `root` and the terms it reads, as a mask over terms_.
  std::vector<bool> Subterms(int root) const {
    std::vector<bool> in(terms_.size(), false);
    in[root] = true;
    for (int i = root; i >= 0; --i) {  // operands come before the terms reading them
      if (!in[i]) continue;
      for (const Operand& o : terms_[i].operands) {
        if (o.term >= 0) in[o.term] = true;
      }
    }
    return in;
  }

  // Chooses the order in which variables get shapes and when each subterm is
  // type-checked: as soon as its last variable has a shape. Greedily, the next
  // variable is the one that completes the most subterms, so an ill-typed
  // choice is cut off before the variables after it are enumerated
  // (sm(x,w) in conv(sm(x,w),y) is checked before y is tried).
  void PlanChecks(const std::vector<bool>& planned) {
    planned_ = planned;
    const size_t n = inst_->tensors.size();
    order_.clear();
    uint64_t assigned = 0;
    while (order_.size() < n) {
      int best = -1, best_completed = -1;
      for (size_t v = 0; v < n; ++v) {
        const uint64_t bit = uint64_t{1} << v;
        if (assigned & bit) continue;
        int completed = 0;
        for (size_t i = 0; i < terms_.size(); ++i) {
          const uint64_t vars = planned[i] ? terms_[i].vars : 0;
          completed += (vars & bit) && (vars & ~(assigned | bit)) == 0;
        }
        if (completed > best_completed) best = static_cast<int>(v), best_completed = completed;
      }
      order_.push_back(static_cast<size_t>(best));
      assigned |= uint64_t{1} << best;
    }
    checks_at_.assign(n + 1, {});
    for (size_t i = 0; i < terms_.size(); ++i) {
      if (!planned[i]) continue;
      int step = -1;
      for (size_t k = 0; k < n; ++k) {
        if (terms_[i].vars & (uint64_t{1} << order_[k])) step = static_cast<int>(k);
      }
      checks_at_[step + 1].push_back(static_cast<int>(i));
    }
  }

  // An application's integer parameters (numerals once the stratum is
  // substituted) and its tensor operands.
  absl::Status SplitArgs(const z3::expr& e, std::vector<int64_t>& params, std::vector<z3::expr>& tensors) const {
    for (unsigned i = 0; i < e.num_args(); ++i) {
      const z3::expr a = e.arg(i);
      if (!a.get_sort().is_int()) {
        tensors.push_back(a);
        continue;
      }
      int64_t value = 0;
      if (!a.is_numeral_i64(value)) return absl::InvalidArgumentError("non-numeral parameter");
      params.push_back(value);
    }
    return absl::OkStatus();
  }

  int Intern(TensorType t) {
    std::string key = t.ToString();  // dtype, dims, layout and split trees: all a type is
    auto [it, added] = type_ids_.try_emplace(std::move(key), static_cast<int>(types_.size()));
    if (added) types_.push_back(std::move(t));
    return it->second;
  }

  // The type id of a variable, or of a subterm already checked, under the
  // current shapes.
  int TypeIdOf(const Operand& o) const { return o.var >= 0 ? var_types_[o.var] : terms_[o.term].type; }
  const TensorType& TypeOf(const Operand& o) const { return types_[TypeIdOf(o)]; }

  // Types term `t` from its operands' types; false if it is not well-typed IR.
  // Whether an operator accepts given operand types is remembered: the same
  // few combinations recur across millions of shape assignments.
  bool Type(int index) {
    PlannedTerm& t = terms_[index];
    if (!t.app) return false;
    constexpr int kNone = (1 << 24) - 1;  // no such operand; ids at or above it are not remembered
    uint64_t key = static_cast<uint64_t>(t.op) << 48;
    bool memo = t.operands.size() <= 2 && t.op < (1 << 16);
    for (size_t i = 0; i < 2; ++i) {
      const int id = i < t.operands.size() ? TypeIdOf(t.operands[i]) : kNone;
      if (i < t.operands.size() && id >= kNone) memo = false;
      key |= static_cast<uint64_t>(id & kNone) << (24 * (1 - i));
    }
    if (memo) {
      if (auto it = typed_.find(key); it != typed_.end()) {
        t.type = it->second;
        return t.type >= 0;
      }
    }
    t.type = -1;
    std::vector<TensorType> inputs;
    for (const Operand& o : t.operands) inputs.push_back(TypeOf(o));
    // The instance is real IR only if the operator's signature on these
    // shapes is the very symbol the axiom wrote (groups, rank, broadcast).
    auto sig = ProofSignatureOf(t.app->kind, t.app->params, inputs, t.app->output);
    if (sig.ok() && sig->name == t.name && sig->params == t.params) {
      auto outs = InferOutputTypes(t.app->kind, t.app->params, inputs);
      if (outs.ok()) t.type = Intern(std::move((*outs)[t.app->output]));
    }
    if (memo) typed_[key] = t.type;
    return t.type >= 0;
  }

  // Types the subterms completed at `step` (-1: constants), operands first.
  bool TypeChecksAt(int step) {
    for (int i : checks_at_[step + 1]) {
      if (!Type(i)) return false;
    }
    return true;
  }

  void Assign(size_t step) {
    if (step == order_.size()) {
      pass_ == Pass::kBothSides ? Check() : CheckBothSidesTyped();
      return;
    }
    for (size_t k = 0; k < shapes_.size(); ++k) {
      if (Full()) {
        out_.capped = true;
        return;
      }
      shapes_of_[order_[step]] = &shapes_[k];
      var_types_[order_[step]] = static_cast<int>(k);
      if (TypeChecksAt(static_cast<int>(step))) {
        Assign(step + 1);
      } else if (pass_ == Pass::kBothSides) {
        out_.ill_typed = SaturatingAdd(out_.ill_typed, completions_[step + 1]);
      }
    }
  }

  std::string Describe() const {
    std::vector<std::string> parts;
    for (size_t i = 0; i < inst_->tensors.size(); ++i) {
      if (shapes_of_.size() <= i || shapes_of_[i] == nullptr) continue;
      parts.push_back(absl::StrCat(inst_->tensors[i].decl().name().str(), ":[", absl::StrJoin(*shapes_of_[i], ","), "]"));
    }
    for (size_t i = 0; i < int_params_.size() && i < values_.size(); ++i) {
      parts.push_back(absl::StrCat(int_params_[i], "=", values_[i]));
    }
    return absl::StrJoin(parts, " ");
  }

  absl::StatusOr<SymTensor> Eval(const z3::expr& e, std::map<unsigned, SymTensor>& memo) {
    auto hit = memo.find(e.id());
    if (hit != memo.end()) return hit->second;
    const int v = VarIndex(e);
    if (v >= 0) {
      SymTensor t;
      t.type = TensorType::RowMajor(DType::kFloat32, *shapes_of_[v]);
      for (int64_t i = 0; i < t.type.num_elements(); ++i) {
        t.data.push_back(Sym{ctx_.real_const(absl::StrCat(inst_->tensors[v].decl().name().str(), "[", i, "]").c_str())});
      }
      return memo[e.id()] = t;
    }
    std::vector<int64_t> params;
    std::vector<z3::expr> args;
    if (absl::Status s = SplitArgs(e, params, args); !s.ok()) return s;
    std::vector<SymTensor> inputs;
    for (const z3::expr& a : args) {
      auto t = Eval(a, memo);
      if (!t.ok()) return t.status();
      inputs.push_back(std::move(*t));
    }
    auto app = Decode(e.decl().name().str(), params);
    if (!app) return absl::InvalidArgumentError("undecodable operator");
    std::vector<const SymTensor*> in;
    for (const SymTensor& t : inputs) in.push_back(&t);
    SymbolicDomain domain;
    domain.relu = &relu_;
    auto outs = ::taso::internal::Evaluator<SymbolicDomain>(domain).Eval(app->kind, app->params, in);
    if (!outs.ok()) return outs.status();
    return memo[e.id()] = (*outs)[app->output];
  }

  void Check() {
    // Every subterm was typed on the way here.
    const TensorType* lt = &TypeOf(lhs_root_);
    const TensorType* rt = &TypeOf(rhs_root_);
    ++out_.instances;
    if (lt->dims != rt->dims || lt->split.size() != rt->split.size() ||
        !std::equal(lt->split.begin(), lt->split.end(), rt->split.begin(), SplitTreeEqual)) {
      Fail(absl::StrCat(Describe(), ": the sides have types ", lt->ToString(), " and ", rt->ToString()));
      return;
    }
    std::map<unsigned, SymTensor> memo;
    auto l = Eval(lhs_, memo);
    auto r = Eval(rhs_, memo);
    if (!l.ok() || !r.ok()) {
      Fail(absl::StrCat(Describe(), ": ", (!l.ok() ? l.status() : r.status()).message()));
      return;
    }
    // Most laws are polynomial identities (relu of equal polynomials
    // included). The solver can take minutes to refute a polynomial
    // disequality of a few hundred monomials, while the rewriter's
    // sum-of-monomials normal form of a difference that is identically 0 is
    // 0; only the differences that are not reach the solver.
    z3::expr_vector differ(ctx_);
    for (size_t i = 0; i < l->data.size(); ++i) {
      const z3::expr d = (*l->data[i].e - *r->data[i].e).simplify(normal_form_);
      int64_t value = 1;
      if (!d.is_numeral_i64(value) || value != 0) differ.push_back(d != ctx_.real_val(0));
    }
    if (differ.empty()) {
      ++out_.held;
      return;
    }
    solver_.push();
    solver_.add(z3::mk_or(differ));
    const z3::check_result answer = solver_.check();
    if (answer == z3::unsat) {
      ++out_.held;
    } else if (answer == z3::sat) {
      std::string values;
      z3::model m = solver_.get_model();
      for (size_t i = 0; i < l->data.size() && values.size() < 200; ++i) {
        z3::expr a = m.eval(*l->data[i].e, true), b = m.eval(*r->data[i].e, true);
        if (!z3::eq(a, b)) absl::StrAppend(&values, " element ", i, ": ", a.to_string(), " vs ", b.to_string(), ";");
      }
      Fail(absl::StrCat(Describe(), ": the sides differ:", values));
    } else {
      ++out_.unknown;
    }
    solver_.pop();
  }

  // The trigger pass's leaf: the pattern trigger_ is well-typed, so both
  // sides must be. The terms outside it are typed now, an operator over an
  // ill-typed operand being ill-typed itself.
  void CheckBothSidesTyped() {
    ++out_.triggered;
    for (size_t i = 0; i < terms_.size(); ++i) {
      if (planned_[i]) continue;
      const bool operands_typed = std::all_of(terms_[i].operands.begin(), terms_[i].operands.end(),
                                              [&](const Operand& o) { return TypeIdOf(o) >= 0; });
      if (operands_typed) {
        Type(static_cast<int>(i));
      } else {
        terms_[i].type = -1;
      }
    }
    const bool left = TypeIdOf(lhs_root_) >= 0, right = TypeIdOf(rhs_root_) >= 0;
    if (left && right) return;
    ++out_.one_sided;
    const PlannedTerm& t = terms_[trigger_];
    const char* untyped = left ? "right side is not" : right ? "left side is not" : "sides are not";
    Fail(absl::StrCat(Describe(), ": the pattern ", t.name, "(", absl::StrJoin(t.params, ","), ") is well-typed and the ",
                      untyped, " (an instance would equate a real tensor with an unspecified one)"));
  }

  void Fail(const std::string& why) {
    ++out_.failed;
    if (out_.counterexample.empty()) out_.counterexample = why;
  }

  const std::vector<std::vector<int64_t>>& shapes_;
  z3::context ctx_;
  Symbols symbols_{ctx_};
  z3::func_decl relu_ = ctx_.function("relu!real", ctx_.real_sort(), ctx_.real_sort());
  z3::solver solver_{ctx_};
  z3::params normal_form_ = [this] {
    z3::params p(ctx_);
    p.set("som", true);  // polynomials as sums of monomials
    p.set("som_blowup", 1'000'000u);  // however many: the default stops at a few
    return p;
  }();
  std::optional<Instantiated> inst_;
  std::vector<std::string> int_params_;
  enum class Pass { kBothSides, kTrigger };
  // The stratum being run.
  std::vector<int64_t> values_;
  int64_t budget_ = 0;
  StratumOutcome out_;
  z3::expr lhs_{ctx_}, rhs_{ctx_};
  std::vector<PlannedTerm> terms_;                // operands before the terms using them
  std::map<unsigned, int> term_of_id_;            // Z3 term id -> index in terms_
  Pass pass_ = Pass::kBothSides;
  int trigger_ = -1;                              // the trigger pass's term
  std::vector<bool> planned_;                     // terms the enumeration types as it goes
  Operand lhs_root_, rhs_root_;
  std::vector<size_t> order_;                     // tensor variables in the order they get shapes
  std::vector<std::vector<int>> checks_at_;       // [step + 1]: terms completed at that step
  std::vector<const std::vector<int64_t>*> shapes_of_;  // by variable
  std::vector<int> var_types_;                          // by variable: the index of its shape
  // Across strata: (operator with parameters, operand type ids) -> result type id or -1.
  std::unordered_map<uint64_t, int> typed_;
  std::unordered_map<std::string, int> op_ids_;
  // Every type met, by id (the first ones are the candidate shapes).
  std::vector<TensorType> types_;
  std::unordered_map<std::string, int> type_ids_;
  std::vector<int64_t> completions_;
};

}  // namespace

std::vector<std::vector<int64_t>> CandidateShapes(int max_dim) {
  std::vector<std::vector<int64_t>> out = {{}};
  std::vector<int64_t> dims, kernel;
  for (int d = 1; d <= max_dim; ++d) dims.push_back(d);
  kernel = dims;
  if (max_dim < 3) kernel.push_back(3);
  for (int64_t a : dims) {
    for (int64_t b : dims) out.push_back({a, b});
  }
  for (int64_t a : dims) {
    for (int64_t b : dims) {
      for (int64_t c : kernel) {
        for (int64_t d : kernel) out.push_back({a, b, c, d});
      }
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<AxiomInstanceChecker>> AxiomInstanceChecker::Create(
    const AxiomSource& source, const std::vector<std::vector<int64_t>>& shapes, uint64_t rlimit) {
  try {
    auto checker = std::make_unique<Checker>(shapes, rlimit);
    if (absl::Status s = checker->Build(source); !s.ok()) return s;
    return std::unique_ptr<AxiomInstanceChecker>(std::move(checker));
  } catch (const z3::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("z3: ", e.msg()));
  }
}

}  // namespace taso::verifier::internal
