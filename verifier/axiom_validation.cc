#include "verifier/axiom_validation.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/evaluator.h"
#include "core/op_registry.h"
#include "verifier/axioms.h"
#include "core/proof_signature.h"
#include "verifier/symbols.h"
#include "z3++.h"

namespace taso::verifier {
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
    Instantiated out{{}, {}, body, body};
    for (const z3::expr& b : bound) (b.get_sort().is_int() ? out.ints : out.tensors).push_back(b);
    if (!body.is_app() || body.decl().decl_kind() != Z3_OP_EQ) {
      return absl::InvalidArgumentError("an axiom must be a quantified equation");
    }
    out.lhs = body.arg(0);
    out.rhs = body.arg(1);
    return out;
  }
  if (!body.is_app() || body.decl().decl_kind() != Z3_OP_EQ) {
    return absl::InvalidArgumentError("an axiom must be a quantified equation");
  }
  return Instantiated{{}, {}, body.arg(0), body.arg(1)};
}

std::vector<int64_t> IntDomain(const std::string& name) {
  static const std::map<std::string, std::vector<int64_t>> domains = {
      {"sh", {1, 2}},       {"sw", {1, 2}},       {"pad", {0, 1}},      {"act", {0, 1}},  {"groups", {1, 2}},
      {"kh", {1, 3}},       {"kw", {1, 3}},       {"a", {0, 1}},        {"p", {20002}},   {"channels", {1, 2}},
      {"n", {1, 2}},        {"include_pad", {0, 1}}, {"d0", {1, 2}},    {"d1", {1, 2}},   {"d2", {1, 2}},
      {"d3", {1, 2}}};
  if (absl::StartsWith(name, "even")) return {0, 1};  // a concat's equal-halves flag
  auto it = domains.find(name);
  return it == domains.end() ? std::vector<int64_t>{0, 1, 2} : it->second;
}

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

// Checks one axiom on all its small instances, in its own Z3 context.
class AxiomChecker {
 public:
  AxiomChecker(const ValidationOptions& options, const std::vector<std::vector<int64_t>>& shapes)
      : options_(options), shapes_(shapes) {}

  AxiomValidation Run(const std::string& name, const std::function<absl::StatusOr<z3::expr>(Symbols&)>& build) {
    const auto start = std::chrono::steady_clock::now();
    result_ = AxiomValidation{};
    result_.name = name;
    symbolic_context = &ctx_;
    auto formula = build(symbols_);
    if (!formula.ok()) {
      result_.failed = 1;
      result_.counterexample = std::string(formula.status().message());
      return result_;
    }
    auto opened = Open(ctx_, *formula);
    if (!opened.ok()) {
      result_.failed = 1;
      result_.counterexample = std::string(opened.status().message());
      return result_;
    }
    inst_ = &*opened;
    // Every assignment of the integer variables.
    std::vector<std::vector<int64_t>> domains;
    for (const z3::expr& v : inst_->ints) domains.push_back(IntDomain(v.decl().name().str()));
    std::vector<size_t> pick(domains.size(), 0);
    while (!Done()) {
      z3::expr_vector from(ctx_), to(ctx_);
      ints_.clear();
      for (size_t i = 0; i < domains.size(); ++i) {
        from.push_back(inst_->ints[i]);
        to.push_back(ctx_.int_val(static_cast<int64_t>(domains[i][pick[i]])));
        ints_[inst_->ints[i].decl().name().str()] = domains[i][pick[i]];
      }
      lhs_ = inst_->lhs.substitute(from, to);
      rhs_ = inst_->rhs.substitute(from, to);
      PlanChecks();
      shapes_of_.assign(inst_->tensors.size(), nullptr);
      Assign(0);
      size_t k = 0;
      while (k < pick.size() && ++pick[k] == domains[k].size()) pick[k++] = 0;
      if (k == pick.size()) break;
    }
    result_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result_;
  }

 private:
  bool Done() const { return result_.instances >= options_.max_instances; }

  int VarIndex(const z3::expr& e) const {
    for (size_t i = 0; i < inst_->tensors.size(); ++i) {
      if (z3::eq(inst_->tensors[i], e)) return static_cast<int>(i);
    }
    return -1;
  }

  // The deepest tensor variable each subterm reads, so it is type-checked as
  // soon as its variables have shapes.
  int Level(const z3::expr& e, std::vector<std::pair<z3::expr, int>>& out) {
    const int v = VarIndex(e);
    if (v >= 0) return v;
    int level = -1;
    for (unsigned i = 0; i < e.num_args(); ++i) {
      if (e.arg(i).get_sort().is_int()) continue;
      level = std::max(level, Level(e.arg(i), out));
    }
    out.emplace_back(e, level);
    return level;
  }

  void PlanChecks() {
    checks_.clear();
    Level(lhs_, checks_);
    Level(rhs_, checks_);
  }

  absl::StatusOr<TensorType> TypeOf(const z3::expr& e) {
    const int v = VarIndex(e);
    if (v >= 0) return TensorType::RowMajor(DType::kFloat32, *shapes_of_[v]);
    std::vector<int64_t> params;
    std::vector<TensorType> inputs;
    for (unsigned i = 0; i < e.num_args(); ++i) {
      const z3::expr a = e.arg(i);
      if (a.get_sort().is_int()) {
        int64_t value = 0;
        if (!a.is_numeral_i64(value)) return absl::InvalidArgumentError("non-numeral parameter");
        params.push_back(value);
      } else {
        auto t = TypeOf(a);
        if (!t.ok()) return t.status();
        inputs.push_back(*t);
      }
    }
    const std::string name = e.decl().name().str();
    auto app = Decode(name, params);
    if (!app) return absl::InvalidArgumentError(absl::StrCat("no operator for ", name));
    // The instance is real IR only if the operator's signature on these
    // shapes is the very symbol the axiom wrote (groups, rank, broadcast).
    auto sig = ProofSignatureOf(app->kind, app->params, inputs, app->output);
    if (!sig.ok() || sig->name != name || sig->params != params) {
      return absl::InvalidArgumentError("signature does not match the shapes");
    }
    auto outs = InferOutputTypes(app->kind, app->params, inputs);
    if (!outs.ok()) return outs.status();
    return (*outs)[app->output];
  }

  void Assign(size_t var) {
    if (Done()) return;
    if (var == inst_->tensors.size()) {
      Check();
      return;
    }
    for (const auto& shape : shapes_) {
      shapes_of_[var] = &shape;
      bool ok = true;
      for (const auto& [term, level] : checks_) {
        if (level == static_cast<int>(var) && !TypeOf(term).ok()) {
          ok = false;
          break;
        }
      }
      if (ok) Assign(var + 1);
      if (Done()) return;
    }
  }

  std::string Describe() const {
    std::vector<std::string> parts;
    for (size_t i = 0; i < inst_->tensors.size(); ++i) {
      parts.push_back(absl::StrCat(inst_->tensors[i].decl().name().str(), ":[", absl::StrJoin(*shapes_of_[i], ","), "]"));
    }
    for (const auto& [k, v] : ints_) parts.push_back(absl::StrCat(k, "=", v));
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
    std::vector<SymTensor> inputs;
    for (unsigned i = 0; i < e.num_args(); ++i) {
      const z3::expr a = e.arg(i);
      if (a.get_sort().is_int()) {
        int64_t value = 0;
        a.is_numeral_i64(value);
        params.push_back(value);
      } else {
        auto t = Eval(a, memo);
        if (!t.ok()) return t.status();
        inputs.push_back(std::move(*t));
      }
    }
    auto app = Decode(e.decl().name().str(), params);
    if (!app) return absl::InvalidArgumentError("undecodable operator");
    std::vector<const SymTensor*> in;
    for (const SymTensor& t : inputs) in.push_back(&t);
    SymbolicDomain domain;
    domain.relu = &relu_;
    auto outs = internal::Evaluator<SymbolicDomain>(domain).Eval(app->kind, app->params, in);
    if (!outs.ok()) return outs.status();
    return memo[e.id()] = (*outs)[app->output];
  }

  void Check() {
    auto lt = TypeOf(lhs_);
    auto rt = TypeOf(rhs_);
    if (!lt.ok() || !rt.ok()) return;  // not a well-typed instance
    ++result_.instances;
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
    z3::expr_vector differ(ctx_);
    for (size_t i = 0; i < l->data.size(); ++i) differ.push_back(*l->data[i].e != *r->data[i].e);
    if (differ.empty()) {
      ++result_.held;
      return;
    }
    solver_.push();
    solver_.add(z3::mk_or(differ));
    const z3::check_result answer = solver_.check();
    if (answer == z3::unsat) {
      ++result_.held;
    } else if (answer == z3::sat) {
      std::string values;
      z3::model m = solver_.get_model();
      for (size_t i = 0; i < l->data.size() && values.size() < 200; ++i) {
        z3::expr a = m.eval(*l->data[i].e, true), b = m.eval(*r->data[i].e, true);
        if (!z3::eq(a, b)) absl::StrAppend(&values, " element ", i, ": ", a.to_string(), " vs ", b.to_string(), ";");
      }
      Fail(absl::StrCat(Describe(), ": the sides differ:", values));
    } else {
      ++result_.unknown;
    }
    solver_.pop();
  }

  void Fail(const std::string& why) {
    ++result_.failed;
    if (result_.counterexample.empty()) result_.counterexample = why;
  }

 public:
  void Init() {
    symbolic_context = &ctx_;
    z3::params params(ctx_);
    params.set("rlimit", static_cast<unsigned>(std::min<uint64_t>(options_.rlimit, UINT32_MAX)));
    solver_.set(params);
    solver_.add(relu_(ctx_.real_val(0)) == ctx_.real_val(0));
  }
  Symbols& symbols() { return symbols_; }

 private:
  const ValidationOptions& options_;
  const std::vector<std::vector<int64_t>>& shapes_;
  z3::context ctx_;
  Symbols symbols_{ctx_};
  z3::func_decl relu_ = ctx_.function("relu!real", ctx_.real_sort(), ctx_.real_sort());
  z3::solver solver_{ctx_};
  AxiomValidation result_;
  Instantiated* inst_ = nullptr;
  z3::expr lhs_{ctx_}, rhs_{ctx_};
  std::vector<std::pair<z3::expr, int>> checks_;
  std::vector<const std::vector<int64_t>*> shapes_of_;
  std::map<std::string, int64_t> ints_;
};

}  // namespace

absl::StatusOr<std::vector<AxiomValidation>> ValidateAxioms(const ValidationOptions& options) {
  struct Task {
    std::string name;
    std::string smt2;  // extra axioms only
  };
  std::vector<Task> tasks;
  for (const AxiomInfo& a : AxiomList()) {
    if (options.only.empty() || options.only.count(a.name)) tasks.push_back({a.name, ""});
  }
  for (const std::string& name : options.only) {
    if (std::none_of(AxiomList().begin(), AxiomList().end(), [&](const AxiomInfo& a) { return a.name == name; })) {
      return absl::InvalidArgumentError(absl::StrCat("no axiom named '", name, "'"));
    }
  }
  for (size_t k = 0; k < options.extra_axioms_smt2.size(); ++k) {
    tasks.push_back({absl::StrCat("extra", k), options.extra_axioms_smt2[k]});
  }
  const auto shapes = CandidateShapes(std::clamp(options.max_dim, 1, 4));
  std::vector<AxiomValidation> results(tasks.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, options.threads); ++t) {
    threads.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < tasks.size();) {
        AxiomChecker checker(options, shapes);
        checker.Init();
        const Task& task = tasks[i];
        try {
          results[i] = checker.Run(task.name, [&](Symbols& symbols) -> absl::StatusOr<z3::expr> {
            auto all = BuildAxioms(symbols);  // declares every function symbol
            if (!all.ok()) return all.status();
            if (task.smt2.empty()) {
              for (const BuiltAxiom& a : *all) {
                if (a.info.name == task.name) return a.formula;
              }
              return absl::NotFoundError(task.name);
            }
            z3::expr_vector parsed = symbols.ParseSmt2(task.smt2);
            if (parsed.size() != 1) return absl::InvalidArgumentError("give one assertion per extra axiom");
            return parsed[0];
          });
        } catch (const z3::exception& e) {
          results[i].name = task.name;
          results[i].failed = 1;
          results[i].counterexample = absl::StrCat("z3: ", e.msg());
        }
        if (options.progress) {
          std::lock_guard<std::mutex> lock(mu);
          const AxiomValidation& r = results[i];
          options.progress(absl::StrCat(r.name, ": ", r.instances, " instances, ", r.held, " held, ", r.failed,
                                        " failed, ", r.unknown, " unknown (", static_cast<int>(r.seconds * 1000),
                                        " ms)"));
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace taso::verifier
